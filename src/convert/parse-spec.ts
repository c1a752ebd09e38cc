import { ConvertError, isObject, type JsonObject, type Notes } from "./notes.js";

/**
 * `dataSchema.parser` (a Hadoop parser with its `parseSpec`, removed in Druid 37: apache/druid #19173) → the
 * native `ioConfig.inputFormat` with `dataSchema.timestampSpec` and `dimensionsSpec`. Pure. Field names follow
 * Druid's `ParseSpec` subclasses and the input formats of docs/ingestion/data-formats.md.
 */
export interface ParsedSchema {
  readonly inputFormat: JsonObject | null;
  readonly timestampSpec: JsonObject | undefined;
  readonly dimensionsSpec: JsonObject | undefined;
}

/** Parser types whose records are not text lines: the format is the parser's, not the parseSpec's. */
const BINARY_PARSERS: Record<string, string> = {
  parquet: "parquet",
  "parquet-avro": "parquet",
  orc: "orc",
  avro_hadoop: "avro_ocf",
};

export function convertParser(parser: unknown, notes: Notes): ParsedSchema {
  const at = "spec.dataSchema.parser";
  if (!isObject(parser)) throw new ConvertError(at, "expected the Hadoop parser object with a parseSpec");
  const parseSpec = parser.parseSpec;
  if (!isObject(parseSpec))
    throw new ConvertError(`${at}.parseSpec`, "expected an object (format, timestampSpec, dimensionsSpec)");
  const parserType = typeof parser.type === "string" ? parser.type : "hadoopyString";
  const format = typeof parseSpec.format === "string" ? parseSpec.format : "tsv";
  const p = `${at}.parseSpec`;
  let inputFormat: JsonObject;
  const binary = BINARY_PARSERS[parserType];
  if (binary !== undefined) {
    inputFormat = { type: binary };
    if (parser.binaryAsString !== undefined) inputFormat.binaryAsString = parser.binaryAsString;
    notes.mapped(
      at,
      `parser ${parserType} → inputFormat ${binary} (its extension must be loaded on the cluster)`,
    );
  } else if (parserType !== "hadoopyString" && parserType !== "string") {
    throw new ConvertError(
      `${at}.type`,
      `no native input format for the parser "${parserType}": write ioConfig.inputFormat by hand (docs/ingestion/data-formats.md), then convert the rest`,
    );
  } else if (format === "json") {
    inputFormat = { type: "json" };
    if (parseSpec.featureSpec !== undefined) inputFormat.featureSpec = parseSpec.featureSpec;
  } else if (format === "csv" || format === "tsv") {
    inputFormat = { type: format };
    if (Array.isArray(parseSpec.columns)) inputFormat.columns = parseSpec.columns;
    if (format === "tsv" && typeof parseSpec.delimiter === "string")
      inputFormat.delimiter = parseSpec.delimiter;
    if (typeof parseSpec.listDelimiter === "string") inputFormat.listDelimiter = parseSpec.listDelimiter;
    if (parseSpec.hasHeaderRow === true) {
      inputFormat.findColumnsFromHeader = !Array.isArray(parseSpec.columns);
      if (Array.isArray(parseSpec.columns)) inputFormat.skipHeaderRows = 1;
      notes.mapped(
        `${p}.hasHeaderRow`,
        "hasHeaderRow → findColumnsFromHeader (or skipHeaderRows: 1 with columns)",
      );
    }
    if (typeof parseSpec.skipHeaderRows === "number") inputFormat.skipHeaderRows = parseSpec.skipHeaderRows;
    if (!Array.isArray(parseSpec.columns) && parseSpec.hasHeaderRow !== true) {
      throw new ConvertError(`${p}.columns`, `a ${format} parseSpec needs columns (or hasHeaderRow: true)`);
    }
  } else if (format === "regex") {
    inputFormat = { type: "regex", pattern: parseSpec.pattern };
    if (Array.isArray(parseSpec.columns)) inputFormat.columns = parseSpec.columns;
    if (typeof parseSpec.listDelimiter === "string") inputFormat.listDelimiter = parseSpec.listDelimiter;
  } else {
    throw new ConvertError(
      `${p}.format`,
      `no native input format for the parseSpec format "${format}" (json, csv, tsv and regex convert): write ioConfig.inputFormat by hand`,
    );
  }
  if (parseSpec.flattenSpec !== undefined) {
    inputFormat.flattenSpec = parseSpec.flattenSpec;
    notes.mapped(`${p}.flattenSpec`, "→ ioConfig.inputFormat.flattenSpec");
  }
  notes.mapped(
    p,
    `parseSpec (format ${format}) → ioConfig.inputFormat ${String(inputFormat.type)}, dataSchema.timestampSpec and dimensionsSpec`,
  );
  const timestampSpec = isObject(parseSpec.timestampSpec) ? parseSpec.timestampSpec : undefined;
  if (!timestampSpec)
    throw new ConvertError(`${p}.timestampSpec`, "expected a timestampSpec (column, format)");
  let dimensionsSpec = isObject(parseSpec.dimensionsSpec) ? { ...parseSpec.dimensionsSpec } : undefined;
  if (dimensionsSpec && Array.isArray(dimensionsSpec.spatialDimensions)) {
    if (dimensionsSpec.spatialDimensions.length === 0) delete dimensionsSpec.spatialDimensions;
    else
      notes.check(
        `${p}.dimensionsSpec.spatialDimensions`,
        "kept: spatialDimensions are deprecated; list them in dimensions with type spatial",
      );
  }
  if (
    dimensionsSpec &&
    Array.isArray(dimensionsSpec.dimensionExclusions) &&
    dimensionsSpec.dimensionExclusions.length === 0
  )
    delete dimensionsSpec.dimensionExclusions;
  if (dimensionsSpec && Object.keys(dimensionsSpec).length === 0) dimensionsSpec = undefined;
  return { inputFormat, timestampSpec, dimensionsSpec };
}
