import type { Granularity } from "../core/granularity.js";
import { externArguments } from "./extern.js";
import type { SpecIssue } from "./issues.js";
import { maskComments } from "./sql-set.js";

/**
 * Statement-shape rules of SQL ingestion that Druid's planner enforces (the MSQ extension is not served for
 * Druid 33.0.0 by the registry the real-Druid stage reaches, so these are pinned to Druid's source, each rule
 * naming its class): a target column list and a table outside the `druid` schema (`DruidSqlValidator`), an
 * outer LIMIT with a PARTITIONED BY other than ALL, an OFFSET, and no `__time` column with such a PARTITIONED BY
 * (`MSQTaskSqlEngine.validateInsert`), and EXTERN's arguments (`ExternalOperatorConversion`: input source and
 * format as JSON objects, an optional signature as a JSON array).
 */

interface Issues {
  readonly errors: SpecIssue[];
  readonly warnings: SpecIssue[];
}

/** The text after `REPLACE|INSERT INTO <first name part>`: the rest of the name, a column list, the body. */
export interface IngestShape {
  readonly verb: string;
  /** The target as written (first name part). */
  readonly table: string;
  /** The statement after the first name part; `masked` is the same with quoted text blanked. */
  readonly rest: string;
  readonly masked: string;
  /** PARTITIONED BY's granularity when readable. */
  readonly granularity: Granularity | undefined;
}

/** `rest` with everything inside parentheses blanked, so only the statement's own level is searched. */
function topLevel(masked: string): string {
  let depth = 0;
  let out = "";
  for (const c of masked) {
    if (c === "(") depth++;
    out += depth > 0 ? " " : c;
    if (c === ")" && depth > 0) depth--;
  }
  return out;
}

/** The name's further parts (`.b`, `."c"`) right after its first one. */
function moreNameParts(rest: string): string[] {
  const parts: string[] = [];
  const re = /^\s*\.\s*("(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)/;
  let text = rest;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    parts.push(m[1] as string);
    text = text.slice(m[0].length);
  }
  return parts;
}

function checkTarget(shape: IngestShape, issues: Issues): void {
  // The head reads an unquoted a.b.c as one word: split it, then add parts written after a quoted first one.
  const parts = [
    ...(shape.table.match(/"(?:[^"]|"")+"|[^."]+/g) ?? [shape.table]),
    ...moreNameParts(shape.rest),
  ];
  const name = parts.join(".");
  if (parts.length > 2) {
    issues.errors.push({
      path: "query.table",
      message: `Table [${name}] has ${parts.length} name parts: an ${shape.verb} target is a datasource name, optionally in the druid schema ("druid"."name") (DruidSqlValidator)`,
    });
  } else if (parts.length === 2 && parts[0]?.replace(/"/g, "") !== "druid") {
    issues.errors.push({
      path: "query.table",
      message: `Cannot ${shape.verb} into [${name}] because it is not a Druid datasource: write the datasource name, or "druid"."name" (DruidSqlValidator)`,
    });
  }
  const afterName = shape.rest.slice(
    shape.rest.length - shape.rest.replace(/^(\s*\.\s*("(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*))*/, "").length,
  );
  const list = /^\s*\(([^)]*)\)/.exec(afterName);
  if (list && !/^\s*(SELECT|WITH)\b/i.test(list[1] as string)) {
    issues.errors.push({
      path: "query.table",
      message: `Operation [${shape.verb}] cannot be run with a target column list, given [${name} (${(list[1] as string).trim()})]: name the columns with AS in the SELECT instead (DruidSqlValidator)`,
    });
  }
}

/** The outer SELECT list (the statement's own level), or undefined when it cannot be found. */
function outerSelectList(rest: string, masked: string): string | undefined {
  const top = topLevel(masked);
  const select = /\bSELECT\b/i.exec(top);
  if (!select) return undefined;
  const from = /\bFROM\b/i.exec(top.slice(select.index));
  const end = from ? select.index + from.index : top.length;
  return rest.slice(select.index + select[0].length, end);
}

function checkLimitTime(shape: IngestShape, issues: Issues): void {
  const gran = shape.granularity;
  if (gran === undefined) return;
  const all = gran.kind === "all";
  const top = topLevel(shape.masked);
  if (!all && /\bLIMIT\b/i.test(top)) {
    issues.errors.push({
      path: "query",
      message:
        'INSERT and REPLACE queries cannot have a LIMIT unless PARTITIONED BY is "ALL" (MSQTaskSqlEngine): remove the LIMIT or use PARTITIONED BY ALL',
    });
  }
  if (/\bOFFSET\b/i.test(top)) {
    issues.errors.push({
      path: "query",
      message: "INSERT and REPLACE queries cannot have an OFFSET (MSQTaskSqlEngine)",
    });
  }
  if (all) return;
  const list = outerSelectList(shape.rest, shape.masked);
  // `SELECT *` may carry __time: only a list that names its columns is judged.
  if (list === undefined || /(^|,)\s*([A-Za-z_][A-Za-z0-9_]*\.)?\*\s*(,|$)/.test(list)) return;
  if (!/(^|[^A-Za-z0-9_"])("__time"|__time)([^A-Za-z0-9_"]|$)/i.test(list)) {
    issues.errors.push({
      path: "query",
      message:
        "The granularity specified in the PARTITIONED BY clause is different from ALL, so the query must specify a time column (named __time): select one AS __time, or partition by ALL (MSQTaskSqlEngine)",
    });
  }
}

function checkExtern(sql: string, issues: Issues): void {
  for (const call of externArguments(sql)) {
    if (call === null) continue; // not literals (query parameters): nothing to read
    const n = call.positional.length + call.named.size;
    const at = `EXTERN #${call.index + 1}`;
    if (n < 2 || n > 3) {
      issues.errors.push({
        path: "query",
        message: `${at} takes 2 or 3 arguments (inputSource, inputFormat[, signature]), found ${n} (ExternalOperatorConversion)`,
      });
      continue;
    }
    const args: [string, string | undefined, "object" | "array"][] = [
      ["inputSource", call.named.get("inputsource") ?? call.positional[0], "object"],
      ["inputFormat", call.named.get("inputformat") ?? call.positional[1], "object"],
      ["signature", call.named.get("signature") ?? call.positional[2], "array"],
    ];
    for (const [name, text, kind] of args) {
      if (text === undefined) continue;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (e) {
        issues.errors.push({
          path: "query",
          message: `${at}: the ${name} argument is not JSON (${(e as Error).message}); Druid reads it as a JSON ${kind}`,
        });
        continue;
      }
      const ok =
        kind === "array"
          ? Array.isArray(value)
          : value !== null && typeof value === "object" && !Array.isArray(value);
      if (!ok) {
        issues.errors.push({
          path: "query",
          message: `${at}: the ${name} argument must be a JSON ${kind}, found ${JSON.stringify(value)?.slice(0, 40)}`,
        });
      }
    }
  }
}

/**
 * The web console's placeholder for an expression its spec-to-SQL conversion could not write
 * (`REWRITE_[…]_TO_SQL`, with an `--:ISSUE:` comment): Druid's parser refuses it (confirmed by the oracle on the
 * console's own conversions).
 */
function checkConsolePlaceholders(query: string, issues: Issues): void {
  // Comments masked in place, so a line number is the template's own.
  const text = maskComments(query);
  const re = /REWRITE_\[[^\n]*?\]_TO_SQL/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const line = text.slice(0, m.index).split("\n").length;
    issues.errors.push({
      path: "query",
      message: `line ${line}: ${m[0].length > 60 ? `${m[0].slice(0, 57)}...` : m[0]} is the web console's placeholder for an expression it could not convert (see its --:ISSUE: comment); Druid's SQL parser refuses it: write the expression in SQL`,
    });
  }
}

/** Every shape rule above; `query` is the statement as written, `sql` the same without comments or SETs. */
export function checkIngestShape(query: string, sql: string, shape: IngestShape, issues: Issues): void {
  checkTarget(shape, issues);
  checkLimitTime(shape, issues);
  checkExtern(sql, issues);
  checkConsolePlaceholders(query, issues);
}
