import type { JsonValue } from "../core/canonical-json.js";
import { formatInterval, type Interval } from "../core/interval.js";
import { readAsDruid } from "./druid-view.js";
import type { SpecIssue } from "./issues.js";
import { checkPartitionIntervals, collector } from "./rules.js";
import { TASK_SCHEMAS } from "./schema.js";

/**
 * Validating every partition of one template (100,000 for a backfill) without validating the same
 * spec 100,000 times. The partitions of a template differ only where a placeholder names the partition
 * (`{{interval}}`, `{{start}}`, `{{end}}`, `{{start:FORMAT}}`, …), in the interval segops injects and in the
 * derived id. When every such placeholder sits where no part of validation reads a string's content — the
 * view (no coercion in an untyped member), the schema (a loose object) and the rules — the validation of any
 * partition equals the first partition's, except for the interval rules, which are checked per partition.
 * Anything else (a placeholder in the datasource, a format, a tuning value, a `type`) is validated in full
 * for every partition, as before.
 */

/** The template-side paths whose rendered value changes with the partition. Pure. */
export function partitionDependentPaths(template: {
  readonly [key: string]: JsonValue;
}): (string | number)[][] {
  const out: (string | number)[][] = [];
  const walk = (value: JsonValue, path: (string | number)[]) => {
    if (typeof value === "string") {
      if (namesPartition(value)) out.push(path);
    } else if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) walk(value[i] as JsonValue, [...path, i]);
    } else if (value !== null && typeof value === "object") {
      for (const [k, v] of Object.entries(value)) walk(v, [...path, k]);
    }
  };
  walk(template as JsonValue, []);
  return out;
}

/**
 * Whether a template string has a placeholder that is neither a variable nor a quoted literal (those render
 * the same for every partition). A malformed one counts as partition-dependent: the render refuses it.
 */
function namesPartition(text: string): boolean {
  for (let i = text.indexOf("{{"); i >= 0; i = text.indexOf("{{", i + 2)) {
    const close = text.indexOf("}}", i + 2);
    if (close < 0) return true;
    const body = text.slice(i + 2, close).trim();
    if (!/^var\./.test(body) && !/^'[^']*'$|^"[^"]*"$/.test(body)) return true;
    i = close;
  }
  return false;
}

const INTERVALS = ["spec", "dataSchema", "granularitySpec", "intervals"];

/**
 * Where validation never reads a string's content: the members of an input source other than its `type`
 * and a combining source's `delegates` (schema: a loose object; view: no coercion there; rules: only
 * `type` and `delegates`, for `needsFormat`). Also `["{{interval}}"]` as the intervals, which renders
 * to exactly what segops injects.
 */
function contentBlind(path: readonly (string | number)[], template: { readonly [key: string]: JsonValue }) {
  const source = path[0] === "spec" && path[1] === "ioConfig" && path[2] === "inputSource";
  if (source && path.length >= 4 && !path.slice(3).some((p) => p === "type" || p === "delegates"))
    return true;
  if (path.length === 5 && INTERVALS.every((p, i) => path[i] === p) && path[4] === 0) {
    const intervals = at(template, INTERVALS);
    return (
      Array.isArray(intervals) &&
      intervals.length === 1 &&
      /^\{\{\s*interval\s*\}\}$/.test(String(intervals[0]))
    );
  }
  return false;
}

function at(value: unknown, path: readonly (string | number)[]): unknown {
  let v = value;
  for (const key of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string | number, unknown>)[key];
  }
  return v;
}

/**
 * The per-partition check of a template whose partitions validate alike (see the module comment), built from
 * the first partition's rendered task, which the caller has validated in full and found free of errors.
 * Returns the errors of the interval rules for another partition (an empty list: that partition validates
 * as the first did), or null when the template's partitions must each be validated in full.
 */
export function partitionIntervalCheck(
  template: { readonly [key: string]: JsonValue },
  first: Record<string, unknown>,
): ((partition: Interval) => readonly SpecIssue[]) | null {
  const type = first.type;
  if (type !== "index_parallel" && type !== "index") return null;
  if (!partitionDependentPaths(template).every((p) => contentBlind(p, template))) return null;
  // The view (coerced as Druid reads it) of what the interval rules read, which no partition changes.
  const view = readAsDruid(first, TASK_SCHEMAS[type]).task;
  const spec = view.spec as Record<string, unknown> | undefined;
  const schema = spec?.dataSchema as Record<string, unknown> | undefined;
  const granularitySpec = (schema?.granularitySpec ?? {}) as Record<string, unknown>;
  return (partition) => {
    const g = { ...granularitySpec, intervals: [formatInterval(partition)] };
    const ctx = collector({}, partition);
    checkPartitionIntervals(ctx, { ...schema, granularitySpec: g }, spec?.ioConfig);
    return ctx.errors;
  };
}
