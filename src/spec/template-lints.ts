import type { JsonValue } from "../core/canonical-json.js";
import type { SpecIssue } from "./issues.js";
import { formatPath } from "./issues.js";
import { leadingSetStatements, maskComments } from "./sql-set.js";
import type { LoadedTemplate } from "./template.js";

/**
 * What segops refuses or warns about in a template for what it promises (an idempotent partition it can find
 * again), by the Druid release's rows (docs/druid-versions.md). Pure: the planner and `segops validate` call it,
 * and so may the doctor, with the capabilities it read or none (then every release's rules apply).
 *
 * - `SET` statements (apache/druid #17894, Druid 34+) take precedence over the request context, so a template's
 *   SET of a key segops pins would silently override it: refused, with the statement's line and column.
 * - `now()` (apache/druid #19386, Druid 38+) and SQL's CURRENT_TIMESTAMP family read the wall clock, so a rerun
 *   writes other rows: refused unless the template is marked volatile (`-- segops:volatile` in SQL,
 *   `context.segopsVolatile: true` in a native template).
 */

/** The rows the lints read (src/druid/capabilities.ts' flags fit); absent: the newest release's. */
export interface LintCapabilities {
  readonly sqlSetStatements?: boolean;
}

/** Context keys segops pins or relies on, and why a template's SET must not change them. */
export const PINNED_CONTEXT_KEYS: Readonly<Record<string, string>> = {
  sqlQueryId:
    "segops names the controller task query-<sqlQueryId> after the partition's derived id, to find it again and reattach on retry",
  taskLockType:
    "segops' replace safety, rollback and handoff gate assume a REPLACE holds an exclusive time-chunk lock of its interval",
  useConcurrentLocks:
    "segops' replace safety, rollback and handoff gate assume a REPLACE holds an exclusive time-chunk lock of its interval",
};

/** Keys a SET may carry that cost something without breaking a promise: a warning each. */
const COSTLY_CONTEXT_KEYS: Readonly<Record<string, string>> = {
  waitUntilSegmentsLoad:
    "segops' handoff gate waits for the load itself; with it the controller also holds its task slots until the Historicals have loaded",
};

/** The marker that takes a SQL template's wall-clock reads as intended. */
export const SQL_VOLATILE_MARKER = /(?:--|\/\*)\s*segops:volatile\b/i;
/** The context key that takes a native template's `now()` as intended. */
export const NATIVE_VOLATILE_KEY = "segopsVolatile";

const SQL_CLOCK = /\b(CURRENT_TIMESTAMP|CURRENT_DATE|CURRENT_TIME|LOCALTIMESTAMP|LOCALTIME|NOW\s*\(\s*\))/gi;
const EXPR_NOW = /\bnow\s*\(\s*\)/i;
/** Keys whose string values Druid evaluates as native expressions. */
const EXPRESSION_KEYS = new Set(["expression", "expr"]);

export interface TemplateLints {
  readonly errors: SpecIssue[];
  readonly warnings: SpecIssue[];
}

/** The findings of {@link templateLints}' rules for one template. */
export function templateLints(template: LoadedTemplate, capabilities: LintCapabilities = {}): TemplateLints {
  const lints: TemplateLints = { errors: [], warnings: [] };
  if (template.kind === "sql") {
    setLints(template.text, capabilities, lints);
    sqlClockLints(template.text, lints);
  } else {
    nativeNowLints(template.value, lints);
  }
  return lints;
}

function setLints(query: string, capabilities: LintCapabilities, lints: TemplateLints): void {
  const sets = leadingSetStatements(query);
  for (const set of sets) {
    const where = `line ${set.line}, column ${set.column}`;
    const pinned = PINNED_CONTEXT_KEYS[set.key];
    if (pinned !== undefined) {
      lints.errors.push({
        path: `query.set.${set.key}`,
        message: `${where}: ${set.text} would override what segops sets (SET statements take precedence over the request context from Druid 34): ${pinned}; remove the statement`,
      });
      continue;
    }
    const costly = COSTLY_CONTEXT_KEYS[set.key];
    if (costly !== undefined)
      lints.warnings.push({ path: `query.set.${set.key}`, message: `${where}: ${set.text}: ${costly}` });
  }
  if (sets.length > 0 && capabilities.sqlSetStatements === false) {
    lints.warnings.push({
      path: "query.set",
      message: `this Druid takes no SET statements (they came in Druid 34): segops sends ${sets.map((s) => s.key).join(", ")} in the request context instead`,
    });
  }
}

function sqlClockLints(query: string, lints: TemplateLints): void {
  if (SQL_VOLATILE_MARKER.test(query)) return;
  // Comments and quoted text are no SQL: blank them, keeping offsets.
  const masked = maskComments(query).replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"/g, (q) => " ".repeat(q.length));
  for (const m of masked.matchAll(SQL_CLOCK)) {
    const before = query.slice(0, m.index);
    const where = `line ${before.split("\n").length}, column ${m.index - before.lastIndexOf("\n")}`;
    lints.errors.push({
      path: "query",
      message: `${where}: ${m[1]} reads the clock, so a rerun of the partition writes other rows and segops cannot promise an idempotent replace; use TIMESTAMP '{{start}}' / TIMESTAMP '{{end}}', or mark the template volatile with a -- segops:volatile comment`,
    });
  }
}

function nativeNowLints(value: { readonly [key: string]: JsonValue }, lints: TemplateLints): void {
  const context = value.context;
  if (context !== null && typeof context === "object" && !Array.isArray(context)) {
    if (context[NATIVE_VOLATILE_KEY] === true) return;
  }
  // Iterative: the template's depth is bounded on load, but no recursion is needed either.
  const stack: Array<{ v: JsonValue; path: (string | number)[] }> = [{ v: value, path: [] }];
  while (stack.length > 0) {
    const { v, path } = stack.pop() as { v: JsonValue; path: (string | number)[] };
    if (typeof v === "string") {
      const key = path.at(-1);
      if (typeof key === "string" && EXPRESSION_KEYS.has(key) && EXPR_NOW.test(v)) {
        lints.errors.push({
          path: formatPath(path),
          message: `now() reads the clock for every row (apache/druid #19386), so a rerun of the partition writes other rows and segops cannot promise an idempotent replace; use a column of the input or the partition's "{{start}}" / "{{end}}", or set context.${NATIVE_VOLATILE_KEY}: true to take it as intended`,
        });
      }
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i] as JsonValue, path: [...path, i] });
    } else if (v !== null && typeof v === "object") {
      for (const k of Object.keys(v).reverse()) stack.push({ v: v[k] as JsonValue, path: [...path, k] });
    }
  }
}
