import { flagsFor } from "../druid/capabilities.js";
import { HADOOP_REMOVED_IN, hadoopExitMessage } from "../spec/hadoop-exit.js";
import type { SpecIssue } from "../spec/issues.js";
import { sqlTarget } from "../spec/msq.js";
import { leadingSetStatements, maskComments } from "../spec/sql-set.js";
import type { LoadedTemplate } from "../spec/template.js";
import { templateLints } from "../spec/template-lints.js";
import type { Finding } from "./report.js";

/**
 * Template lints of `segops doctor`: what in a template makes segops' promise (a partition rerun gives the same
 * data; a partition with bad rows is not marked done) weaker, or what this cluster's release refuses. Pure: the
 * loaded template and the release in, findings out. The rules `segops validate` applies too (SET statements and
 * the clock, src/spec/template-lints.ts) are called for the cluster's release, not repeated here; the rest are
 * the doctor's own. `segops validate` remains the full check of Druid's rules.
 */

/** Druid's "unlimited" for `maxParseExceptions` (Integer.MAX_VALUE); MSQ takes -1. */
const UNLIMITED = 2_147_483_647;
/** Input sources segops can fingerprint (a source version of their own, docs/specs.md "What makes a rerun new work"). */
const FINGERPRINTED = new Set(["local", "http"]);

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
  if (template.kind === "task" && template.value.type === "index_hadoop") return [hadoopLint(file, major)];
  const own = template.kind === "sql" ? lintSql(file, template.text) : lintTask(file, template.value, major);
  return [...sharedLints(file, template, major), ...own];
}

/** A shared lint's code, by what it is about, so `--json` readers can key on it. */
function sharedCode(issue: SpecIssue): string {
  if (issue.path.startsWith("query.set")) return "lint-sql-set";
  if (/clock|now\(\)/i.test(issue.message)) return "lint-now";
  return "lint-template";
}

/** The template lints `segops validate` applies, for this release: what it refuses is a blocker. */
function sharedLints(file: string, template: LoadedTemplate, major: number | null): Finding[] {
  const lints = templateLints(
    template,
    major === null ? {} : { sqlSetStatements: flagsFor(major).sqlSetStatements },
  );
  const finding = (severity: Finding["severity"]) => (issue: SpecIssue) => ({
    severity,
    code: sharedCode(issue),
    message: issue.message,
    file,
    path: issue.path,
  });
  return [...lints.errors.map(finding("blocker")), ...lints.warnings.map(finding("warning"))];
}

function hadoopLint(file: string, major: number | null): Finding {
  const here =
    major !== null && major >= HADOOP_REMOVED_IN
      ? `this cluster (Druid ${major}) has no Hadoop ingestion. `
      : "";
  return {
    severity: "blocker",
    code: "lint-index-hadoop",
    message: `${here}${hadoopExitMessage(file)}`,
    file,
    path: "type",
  };
}

function lintTask(file: string, task: Record<string, Json>, major: number | null): Finding[] {
  const out: Finding[] = [];
  const at = (severity: Finding["severity"], code: string, path: string, message: string) =>
    out.push({ severity, code, message, file, path });
  const spec = isRecord(task.spec) ? task.spec : {};
  const schema = isRecord(spec.dataSchema) ? spec.dataSchema : {};
  const io = isRecord(spec.ioConfig) ? spec.ioConfig : {};
  const tuning = isRecord(spec.tuningConfig) ? spec.tuningConfig : {};
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
  return out;
}

function lintSql(file: string, text: string): Finding[] {
  const out: Finding[] = [];
  const at = (severity: Finding["severity"], code: string, message: string) =>
    out.push({ severity, code, message, file, path: "query" });
  const mpe = leadingSetStatements(text).find((x) => x.key === "maxParseExceptions");
  if (mpe && unlimited(mpe.value)) {
    at(
      "warning",
      "lint-unlimited-parse-exceptions",
      `${mpe.text} lets every unparseable row be dropped while the query succeeds: segops would mark a partition with bad rows done`,
    );
  }
  const statement = maskComments(text).replace(/^(\s*SET\s[^;]*;)*/i, "");
  if (/^\s*INSERT\s+INTO\b/i.test(statement)) {
    at(
      "warning",
      "lint-append-without-source-version",
      "INSERT appends, and a rerun of the partition appends its rows again: unless segops can fingerprint the EXTERN input (local or http), pass --source-version V on every run, or use REPLACE … OVERWRITE WHERE for the partition",
    );
  }
  return out;
}
