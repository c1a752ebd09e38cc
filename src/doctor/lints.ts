import { HADOOP_REMOVED_IN, hadoopExitMessage } from "../spec/hadoop-exit.js";
import { sqlTarget } from "../spec/msq.js";
import type { LoadedTemplate } from "../spec/template.js";
import type { Finding } from "./report.js";

/**
 * Template lints of `segops doctor`: what in a template makes segops' promise (a partition rerun gives the same
 * data; a partition with bad rows is not marked done) weaker, or what this cluster's release refuses. Pure: the
 * loaded template and the release in, findings out. `segops validate` remains the full check of Druid's rules.
 */

/** The first release that takes leading `SET` statements in SQL (apache/druid #17894). */
export const SQL_SET_SINCE = 34;
/** Druid's "unlimited" for `maxParseExceptions` (Integer.MAX_VALUE); MSQ takes -1. */
const UNLIMITED = 2_147_483_647;
/** Input sources segops can fingerprint (a source version of their own, docs/specs.md "What makes a rerun new work"). */
const FINGERPRINTED = new Set(["local", "http"]);
/** Query context keys segops sets itself on an SQL task (docs/specs.md, SQL). */
const SEGOPS_CONTEXT_KEYS = new Set(["maxParseExceptions", "sqlQueryId"]);

type Json = unknown;
const isRecord = (v: Json): v is Record<string, Json> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** The datasource a template writes, when it names one without placeholders. */
export function templateDataSource(template: LoadedTemplate): string | null {
  let name: unknown;
  if (template.kind === "sql") name = sqlTarget(template.text);
  else {
    const v = template.value;
    const spec = isRecord(v.spec) ? v.spec : undefined;
    const schema = spec && isRecord(spec.dataSchema) ? spec.dataSchema : undefined;
    name = v.type === "compact" ? v.dataSource : schema?.dataSource;
  }
  return typeof name === "string" && name !== "" && !name.includes("{{") ? name : null;
}

/** Every string in a JSON value with its path (`spec.dataSchema.transformSpec.transforms[0].expression`). */
function* strings(value: Json, path: string): Generator<[string, string]> {
  if (typeof value === "string") yield [path, value];
  else if (Array.isArray(value)) for (const [i, v] of value.entries()) yield* strings(v, `${path}[${i}]`);
  else if (isRecord(value))
    for (const [k, v] of Object.entries(value)) yield* strings(v, path === "" ? k : `${path}.${k}`);
}

const NOW = /\bnow\s*\(\s*\)/i;
const SET_STATEMENT = /^\s*SET\s+("(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_]*)\s*=\s*('(?:[^']|'')*'|[^;']*?)\s*;/i;

/** Leading `SET name = value;` statements of an SQL template (comments before them skipped). */
export function sqlSets(text: string): { name: string; value: string }[] {
  let sql = text.replace(/^(\s*(--[^\n]*\n|\/\*[\s\S]*?\*\/))*/, "");
  const sets: { name: string; value: string }[] = [];
  for (let m = SET_STATEMENT.exec(sql); m; m = SET_STATEMENT.exec(sql)) {
    const raw = m[1] as string;
    sets.push({
      name: raw.startsWith('"') ? raw.slice(1, -1).replace(/""/g, '"') : raw,
      value: (m[2] as string).replace(/^'|'$/g, ""),
    });
    sql = sql.slice(m[0].length).replace(/^(\s*(--[^\n]*\n|\/\*[\s\S]*?\*\/))*/, "");
  }
  return sets;
}

/** Whether a `maxParseExceptions` value lets any number of bad rows through. */
function unlimited(value: Json): boolean {
  const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  return typeof n === "number" && (n >= UNLIMITED || n < 0);
}

/**
 * The lints of one template. `major`: the release segops follows on the cluster (null when unknown), for the
 * lints whose answer depends on it.
 */
export function lintTemplate(file: string, template: LoadedTemplate, major: number | null): Finding[] {
  return template.kind === "sql"
    ? lintSql(file, template.text, major)
    : lintTask(file, template.value, major);
}

function hadoopMessage(file: string, major: number | null): string {
  const here =
    major !== null && major >= HADOOP_REMOVED_IN
      ? `this cluster (Druid ${major}) has no Hadoop ingestion. `
      : "";
  return `${here}${hadoopExitMessage(file)}`;
}

function lintTask(file: string, task: Record<string, Json>, major: number | null): Finding[] {
  const out: Finding[] = [];
  const at = (severity: Finding["severity"], code: string, path: string, message: string) =>
    out.push({ severity, code, message, file, path });
  const spec = isRecord(task.spec) ? task.spec : {};
  const schema = isRecord(spec.dataSchema) ? spec.dataSchema : {};
  const io = isRecord(spec.ioConfig) ? spec.ioConfig : {};
  const tuning = isRecord(spec.tuningConfig) ? spec.tuningConfig : {};
  if (task.type === "index_hadoop") {
    at("blocker", "lint-index-hadoop", "type", hadoopMessage(file, major));
    return out;
  }
  if (schema.parser !== undefined) {
    const gone = major !== null && major >= HADOOP_REMOVED_IN;
    at(
      gone ? "blocker" : "warning",
      "lint-parser",
      "spec.dataSchema.parser",
      `${gone ? `Druid ${major} does not read` : `Druid ${HADOOP_REMOVED_IN} removes`} the parser/parseSpec (apache/druid #19173): use ioConfig.inputFormat with dataSchema.timestampSpec and dimensionsSpec (segops convert does this for Hadoop specs)`,
    );
  }
  if (unlimited(tuning.maxParseExceptions)) {
    at(
      "warning",
      "lint-unlimited-parse-exceptions",
      "spec.tuningConfig.maxParseExceptions",
      `${JSON.stringify(tuning.maxParseExceptions)} lets every unparseable row be dropped while the task succeeds: segops would mark a partition with bad rows done. Leave it out (segops renders 0, or --max-unparseable N) or set a bound`,
    );
  }
  const append = io.appendToExisting === true || io.appendToExisting === "true";
  if (append) {
    const source = isRecord(io.inputSource) ? io.inputSource.type : undefined;
    if (typeof source === "string" && FINGERPRINTED.has(source)) {
      at(
        "note",
        "lint-append",
        "spec.ioConfig.appendToExisting",
        `appending is not idempotent: segops fingerprints this ${source} input, so a partition is appended again only when its files change; pass --source-version V when another signal names the input's version`,
      );
    } else {
      at(
        "warning",
        "lint-append-without-source-version",
        "spec.ioConfig.appendToExisting",
        `appending without a source version: segops cannot fingerprint a ${typeof source === "string" ? source : "non-local"} input, so a rerun of a partition whose input changed is "already done" and a replanned one appends its rows twice. Pass --source-version V on every run, or replace (dropExisting: true) instead`,
      );
    }
  }
  for (const [path, text] of strings(task, "")) {
    if (NOW.test(text)) {
      at(
        "warning",
        "lint-now",
        path,
        "now() is evaluated by Druid when the task runs: a rerun of the partition writes different values. Use {{start}}/{{end}} or a column of the input",
      );
    }
  }
  return out;
}

function lintSql(file: string, text: string, major: number | null): Finding[] {
  const out: Finding[] = [];
  const at = (severity: Finding["severity"], code: string, message: string) =>
    out.push({ severity, code, message, file, path: "query" });
  const sets = sqlSets(text);
  if (sets.length > 0) {
    if (major !== null && major < SQL_SET_SINCE) {
      at(
        "blocker",
        "lint-sql-set",
        `SET statements (${sets.map((s) => s.name).join(", ")}) need Druid ${SQL_SET_SINCE} or later (apache/druid #17894): Druid ${major} refuses a query with several statements. Remove them and pass the context another way`,
      );
    }
    for (const s of sets.filter((x) => SEGOPS_CONTEXT_KEYS.has(x.name))) {
      at(
        "warning",
        "lint-sql-set-override",
        `SET ${s.name} = ${s.value} overrides the value segops puts in the query context${s.name === "maxParseExceptions" ? " (the --max-unparseable gate)" : " (the pinned query id that makes a resubmit reattach)"}`,
      );
    }
    const mpe = sets.find((x) => x.name === "maxParseExceptions");
    if (mpe && unlimited(mpe.value)) {
      at(
        "warning",
        "lint-unlimited-parse-exceptions",
        `SET maxParseExceptions = ${mpe.value} lets every unparseable row be dropped while the query succeeds: segops would mark a partition with bad rows done`,
      );
    }
  }
  const body = text.replace(/'(?:[^']|'')*'/g, (q) => (NOW.test(q) ? "now()" : "''"));
  if (NOW.test(body) || /\bCURRENT_TIMESTAMP\b/i.test(body)) {
    at(
      "warning",
      "lint-now",
      "the query reads the current time (now() or CURRENT_TIMESTAMP), evaluated when it runs: a rerun of the partition writes different values. Use {{start}}/{{end}} or a column of the input",
    );
  }
  if (/^\s*INSERT\s+INTO\b/i.test(text.replace(/^(\s*(--[^\n]*\n|\/\*[\s\S]*?\*\/|SET\s[^;]*;))*/i, ""))) {
    at(
      "warning",
      "lint-append-without-source-version",
      "INSERT appends, and a rerun of the partition appends its rows again: unless segops can fingerprint the EXTERN input (local or http), pass --source-version V on every run, or use REPLACE … OVERWRITE WHERE for the partition",
    );
  }
  return out;
}
