import { parseInterval } from "../core/interval.js";
import type { RuleContext } from "./rule-context.js";

/**
 * Rules of the input sources and formats Druid 33 checks when it deserialises a task (each with the Druid class
 * whose constructor enforces it; messages quoted where Druid has one). Confirmed by the Druid 33 oracle
 * (scripts/druid/oracle) with one mutation each in test/fixtures/spec-mutations.
 */

type Obj = Record<string, unknown>;

function obj(v: unknown): Obj | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : undefined;
}

/** `FlatTextInputFormat`'s delimiters: `CsvInputFormat` always ",", `DelimitedInputFormat` ("tsv") "\t" by default. */
function delimiterOf(format: Obj): string | undefined {
  if (format.type === "csv") return ",";
  if (format.type === "tsv") return typeof format.delimiter === "string" ? format.delimiter : "\t";
  return undefined;
}

/**
 * `FlatTextInputFormat` (the base of `CsvInputFormat` and `DelimitedInputFormat`): without columns the header
 * must name them (`findColumnsFromHeader`, or its older alias `hasHeaderRow`, but not both); the list delimiter
 * cannot be the delimiter; a column name cannot contain the delimiter.
 */
export function checkFlatTextFormat(ctx: RuleContext, path: string, format: Obj): void {
  const delimiter = delimiterOf(format);
  if (delimiter === undefined) return;
  const columns = Array.isArray(format.columns) ? format.columns : [];
  const has = format.hasHeaderRow !== undefined;
  const find = format.findColumnsFromHeader !== undefined;
  if (columns.length === 0) {
    if (has && find) {
      ctx.error(
        `${path}.hasHeaderRow`,
        "Cannot accept both [findColumnsFromHeader] and [hasHeaderRow]: hasHeaderRow is the older name of findColumnsFromHeader; keep only findColumnsFromHeader",
      );
    } else if (!has && !find) {
      ctx.error(
        `${path}.columns`,
        `Either [columns] or [findColumnsFromHeader] must be set: list the columns, or set findColumnsFromHeader: true when the first row is a header (${String(format.type)} input format)`,
      );
    } else if ((has ? format.hasHeaderRow : format.findColumnsFromHeader) !== true) {
      ctx.error(
        `${path}.${has ? "hasHeaderRow" : "findColumnsFromHeader"}`,
        "If [columns] is not set, the first row of your data must have your header and [findColumnsFromHeader] must be set to true.",
      );
    }
  }
  if (typeof format.listDelimiter === "string" && format.listDelimiter === delimiter) {
    ctx.error(
      `${path}.listDelimiter`,
      `Cannot have same delimiter and list delimiter of [${printable(delimiter)}]: choose another listDelimiter`,
    );
  }
  columns.forEach((c, i) => {
    if (typeof c === "string" && c.includes(delimiter)) {
      ctx.error(
        `${path}.columns[${i}]`,
        `Column[${printable(c)}] cannot have the delimiter[${printable(delimiter)}] in its name`,
      );
    }
  });
}

function printable(s: string): string {
  return s.replace(/\t/g, "\\t");
}

const FIELD_TYPES = new Set(["root", "path", "jq", "tree"]);

/**
 * `JSONPathFieldSpec` (a `flattenSpec` field, read by every format with one): a type (root, path, jq, tree;
 * case-insensitive), a name, an `expr` for path and jq, non-empty `nodes` for tree.
 */
export function checkFlattenSpec(ctx: RuleContext, path: string, flattenSpec: unknown): void {
  const fields = obj(flattenSpec)?.fields;
  if (!Array.isArray(fields)) return;
  fields.forEach((f, i) => {
    const field = obj(f);
    if (!field) return;
    const at = `${path}.fields[${i}]`;
    const type = typeof field.type === "string" ? field.type.toLowerCase() : undefined;
    if (field.type === undefined) {
      ctx.error(`${at}.type`, 'a flattenSpec field needs "type": one of "root", "path", "jq", "tree"');
    } else if (type === undefined || !FIELD_TYPES.has(type)) {
      ctx.error(
        `${at}.type`,
        `No enum constant JSONPathFieldType.${String(field.type).toUpperCase()}: expected one of "root", "path", "jq", "tree"`,
      );
    }
    if (field.name === undefined) {
      ctx.error(`${at}.name`, "Missing 'name' in field spec");
      return;
    }
    const name = String(field.name);
    if ((type === "path" || type === "jq") && field.expr === undefined) {
      ctx.error(`${at}.expr`, `Missing 'expr' for field[${name}]: a ${type} field reads the value at expr`);
    }
    if (type === "tree" && (!Array.isArray(field.nodes) || field.nodes.length === 0)) {
      ctx.error(
        `${at}.nodes`,
        `Missing 'nodes' for field[${name}]: a tree field needs the list of keys to follow, found ${JSON.stringify(field.nodes ?? null)}`,
      );
    }
  });
}

/** The rules of an `inputFormat`. */
export function checkInputFormat(ctx: RuleContext, path: string, format: unknown): void {
  const f = obj(format);
  if (!f) return;
  checkFlatTextFormat(ctx, path, f);
  if (f.flattenSpec !== undefined) checkFlattenSpec(ctx, `${path}.flattenSpec`, f.flattenSpec);
}

/** Characters `java.net.URI` refuses anywhere in a URI (`URISyntaxException`). */
const URI_ILLEGAL = /[\s"<>\\^`{|}]/;

/** `HttpInputSourceConfig`'s default `allowedProtocols`. */
const HTTP_PROTOCOLS = new Set(["http", "https"]);

/**
 * The core input sources' constructors: `LocalInputSource` (baseDir with a filter, or files), `HttpInputSource`
 * (non-empty `uris`, each an absolute http/https URI), `DruidInputSource` (a dataSource; exactly one of
 * interval and segments), `InlineInputSource` (non-empty data); a `combining` source's delegates each.
 */
export function checkInputSource(ctx: RuleContext, path: string, source: unknown): void {
  const s = obj(source);
  if (!s) return;
  switch (s.type) {
    case "local": {
      const files = Array.isArray(s.files) ? s.files : [];
      const baseDir = typeof s.baseDir === "string" && s.baseDir !== "" ? s.baseDir : undefined;
      if (baseDir === undefined && files.length === 0) {
        ctx.error(
          `${path}.baseDir`,
          'At least one of baseDir or files should be specified: give "baseDir" with "filter", or "files"',
        );
      } else if (baseDir !== undefined && s.filter === undefined) {
        ctx.error(
          `${path}.filter`,
          'filter must not be null with baseDir: give a wildcard such as "*.json" (LocalInputSource)',
        );
      }
      return;
    }
    case "http": {
      if (typeof s.uris === "string") {
        ctx.error(
          `${path}.uris`,
          `expected an array of URIs, found string ${JSON.stringify(s.uris)}; write ["…"]`,
        );
        return;
      }
      const uris = Array.isArray(s.uris) ? s.uris : [];
      if (uris.length === 0) {
        ctx.error(`${path}.uris`, "Empty URIs: an http input source needs at least one URI");
        return;
      }
      uris.forEach((u, i) => {
        if (typeof u !== "string") return;
        const at = `${path}.uris[${i}]`;
        const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(u)?.[1];
        if (URI_ILLEGAL.test(u)) {
          ctx.error(
            at,
            `not a valid URI (java.net.URI refuses ${JSON.stringify(u)}): percent-encode spaces and special characters`,
          );
        } else if (scheme === undefined) {
          ctx.error(at, `not an absolute URI: ${JSON.stringify(u)} has no scheme; write https://…`);
        } else if (!HTTP_PROTOCOLS.has(scheme.toLowerCase())) {
          ctx.error(
            at,
            `Only [http, https] protocols are allowed, found ${JSON.stringify(scheme)} (druid.ingestion.http.allowedProtocols)`,
          );
        }
      });
      return;
    }
    case "druid": {
      if (s.dataSource === undefined) {
        ctx.error(`${path}.dataSource`, "dataSource must not be null: the datasource to read from");
      }
      const given = ["interval", "segments"].filter((k) => s[k] !== undefined);
      if (given.length !== 1) {
        ctx.error(
          `${path}.${given.length === 0 ? "interval" : "segments"}`,
          `Specify exactly one of 'interval' and 'segments', found ${given.length === 0 ? "neither" : "both"}`,
        );
      }
      if (typeof s.interval === "string") {
        try {
          parseInterval(s.interval);
        } catch (e) {
          ctx.error(`${path}.interval`, `cannot read the interval: ${(e as Error).message}`);
        }
      }
      return;
    }
    case "inline":
      if (s.data === undefined || s.data === "") {
        ctx.error(`${path}.data`, "empty data: an inline input source needs the rows as one string");
      }
      return;
    case "combining":
      if (Array.isArray(s.delegates)) {
        s.delegates.forEach((d, i) => {
          checkInputSource(ctx, `${path}.delegates[${i}]`, d);
        });
      }
      return;
    default:
  }
}
