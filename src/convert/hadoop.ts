import { convertInputSpec } from "./input-source.js";
import { ConvertError, type ConvertNote, isObject, type JsonObject, Notes } from "./notes.js";
import { convertParser } from "./parse-spec.js";
import { convertTuning } from "./tuning.js";

/**
 * An `index_hadoop` task spec → an `index_parallel` segops template (docs/convert.md). Druid 37 removed Hadoop
 * ingestion (apache/druid #19109) and the parser/ParseSpec (#19173); this writes the native spec that reads the
 * same input into the same schema, with placeholders where the input is laid out by time, and a note for every
 * field it changed or left out. Pure: JSON in, JSON out. Throws {@link ConvertError} (bad input) naming the path.
 */
export interface Converted {
  readonly template: JsonObject;
  readonly notes: readonly ConvertNote[];
}

/** Top-level task fields that only configure Hadoop. */
const TASK_HADOOP_ONLY: Record<string, string> = {
  hadoopDependencyCoordinates: "Hadoop client jars",
  classpathPrefix: "the Peon's Hadoop classpath",
  id: "segops derives and pins the task id per partition",
};

export function convertHadoopSpec(input: unknown): Converted {
  if (!isObject(input)) throw new ConvertError("(root)", "expected a task object");
  if (input.type !== "index_hadoop")
    throw new ConvertError(
      "type",
      `segops convert reads index_hadoop specs, found ${JSON.stringify(input.type)}`,
    );
  const notes = new Notes();
  const spec = isObject(input.spec) ? input.spec : null;
  if (!spec)
    throw new ConvertError("spec", "expected the ingestion spec (dataSchema, ioConfig, tuningConfig)");
  const schema = isObject(spec.dataSchema) ? spec.dataSchema : null;
  if (!schema || typeof schema.dataSource !== "string" || schema.dataSource === "")
    throw new ConvertError("spec.dataSchema.dataSource", "expected the datasource name");
  const io = isObject(spec.ioConfig) ? spec.ioConfig : null;
  if (!io) throw new ConvertError("spec.ioConfig", "expected the Hadoop ioConfig with its inputSpec");
  const tuning = isObject(spec.tuningConfig) ? spec.tuningConfig : {};
  const jobProperties = isObject(tuning.jobProperties) ? tuning.jobProperties : {};
  const defaultFs = jobProperties["fs.defaultFS"] ?? jobProperties["fs.default.name"];
  // Named, never echoed: the values are credentials.
  const credentials = Object.keys(jobProperties).filter((k) =>
    /access.?key|secret|password|token|sas|credential/i.test(k),
  );
  if (credentials.length > 0) {
    notes.check(
      "spec.tuningConfig.jobProperties",
      `credentials (${credentials.join(", ")}) were set for the Hadoop job and are not copied: the native input source reads with the cluster's own credentials (druid.s3.*, druid.google.*, druid.azure.*) or its own properties`,
    );
  }

  const granularitySpec = isObject(schema.granularitySpec) ? { ...schema.granularitySpec } : {};
  const segmentGranularity =
    typeof granularitySpec.segmentGranularity === "string"
      ? granularitySpec.segmentGranularity.toLowerCase()
      : "day";
  const { source, readsDruid } = convertInputSpec(
    io.inputSpec,
    { defaultFs: typeof defaultFs === "string" ? defaultFs : null, segmentGranularity },
    notes,
  );

  const dataSchema: JsonObject = { dataSource: schema.dataSource };
  let inputFormat: JsonObject | null = null;
  if (schema.parser !== undefined) {
    const parsed = convertParser(schema.parser, notes);
    inputFormat = parsed.inputFormat;
    if (parsed.timestampSpec) dataSchema.timestampSpec = parsed.timestampSpec;
    if (parsed.dimensionsSpec) dataSchema.dimensionsSpec = parsed.dimensionsSpec;
  } else {
    for (const key of ["timestampSpec", "dimensionsSpec"])
      if (schema[key] !== undefined) dataSchema[key] = schema[key];
  }
  if (readsDruid) {
    // The druid input source has no input format, and its rows carry their time in __time.
    inputFormat = null;
    dataSchema.timestampSpec = { column: "__time", format: "millis" };
    notes.mapped("spec.dataSchema.parser", "reindexing: timestampSpec is __time (millis), no inputFormat");
  }
  if (!dataSchema.timestampSpec)
    throw new ConvertError("spec.dataSchema.parser.parseSpec.timestampSpec", "expected a timestampSpec");
  for (const key of ["metricsSpec", "transformSpec"])
    if (schema[key] !== undefined) dataSchema[key] = schema[key];
  if (granularitySpec.intervals !== undefined) {
    delete granularitySpec.intervals;
    notes.mapped(
      "spec.dataSchema.granularitySpec.intervals",
      "removed: segops renders each partition's interval (--interval); the spec's was " +
        JSON.stringify(schema.granularitySpec && (schema.granularitySpec as JsonObject).intervals),
    );
  }
  dataSchema.granularitySpec = granularitySpec;
  for (const key of Object.keys(schema)) {
    if (
      ![
        "dataSource",
        "parser",
        "timestampSpec",
        "dimensionsSpec",
        "metricsSpec",
        "transformSpec",
        "granularitySpec",
      ].includes(key)
    )
      notes.dropped(`spec.dataSchema.${key}`, "not read by index_parallel");
  }

  const ioConfig: JsonObject = { type: "index_parallel", inputSource: source };
  if (inputFormat) ioConfig.inputFormat = inputFormat;
  // A Hadoop task replaced its intervals; the native equivalent is a replace of the partition.
  ioConfig.dropExisting = true;
  notes.mapped(
    "spec.ioConfig",
    "Hadoop replaced its intervals: the template replaces each partition (dropExisting: true)",
  );
  for (const key of Object.keys(io)) {
    if (key === "type" || key === "inputSpec") continue;
    notes.dropped(
      `spec.ioConfig.${key}`,
      key === "segmentOutputPath" || key === "metadataUpdateSpec"
        ? "only for the command-line Hadoop indexer"
        : "not read by index_parallel",
    );
  }

  const template: JsonObject = {
    type: "index_parallel",
    spec: { dataSchema, ioConfig, tuningConfig: convertTuning(spec.tuningConfig, notes) },
  };
  if (input.context !== undefined) template.context = input.context;
  for (const key of Object.keys(input)) {
    if (key === "type" || key === "spec" || key === "context") continue;
    notes.dropped(key, TASK_HADOOP_ONLY[key] ?? "not read by index_parallel");
  }
  return { template, notes: notes.list };
}
