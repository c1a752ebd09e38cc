import type { z } from "zod";
import type { Interval } from "../core/interval.js";
import { readAsDruid } from "./druid-view.js";
import { hadoopExitMessage } from "./hadoop-exit.js";
import { describeValue, formatPath, type SpecIssue, type ValidationResult } from "./issues.js";
import { checkCompact, checkIngestion, collector, type RuleScope } from "./rules.js";
import { TASK_SCHEMAS } from "./schema.js";

/** Options of {@link validateSpec}. */
export interface ValidateOptions {
  /** The partition the task must cover exactly; without it interval tightness is not checked. */
  readonly partition?: Interval;
  /**
   * `all` (default): Druid's rules and segops' (intervals aligned to segmentGranularity, idempotence
   * warnings). `druid`: only what Druid itself refuses or reads differently — for specs not run by segops.
   */
  readonly rules?: RuleScope;
  /**
   * The target cluster's Druid release (default 33, the oldest segops supports): rules Druid changed between
   * releases apply as that release's, and what a newer release refuses is a warning naming it.
   */
  readonly druidVersion?: number;
}

type Issue = z.core.$ZodIssue;

const UNKNOWN_KEY = "unknown field: Druid ignores it silently (docs/druid-api.md §0); check the spelling";

/**
 * Pre-flight validation of a rendered task, read the way Druid reads it (`druid-view.ts`: nulls absent,
 * Jackson's scalar coercion, default implementations): the structural shape (zod), Druid's submit-time rules
 * and segops' partition rules. Unknown keys and coerced scalars are warnings; everything Druid would reject at
 * submit, or that would make a partition touch its neighbours, is an error naming its JSON path.
 */
export function validateSpec(task: unknown, options: ValidateOptions = {}): ValidationResult {
  if (task === null || typeof task !== "object" || Array.isArray(task)) {
    return result([{ path: "(root)", message: `expected a task object, found ${describeValue(task)}` }], []);
  }
  const t = task as Record<string, unknown>;
  const type = t.type;
  if (type === "index_hadoop") return result([{ path: "type", message: hadoopExitMessage() }], []);
  if (type !== "index_parallel" && type !== "index" && type !== "compact") {
    return result(
      [
        {
          path: "type",
          message: `expected one of "index_parallel", "index", "compact" (the task types segops runs), found ${describeValue(type)}`,
        },
      ],
      [],
    );
  }
  const errors: SpecIssue[] = [];
  const schema = TASK_SCHEMAS[type];
  const view = readAsDruid(t, schema, options.druidVersion);
  const warnings: SpecIssue[] = [...view.warnings];
  const parsed = schema.safeParse(view.task, { reportInput: true });
  if (!parsed.success) {
    for (const issue of parsed.error.issues) convert(issue, [], errors, warnings);
  }
  const ctx = collector(view.task, options.partition, options.rules ?? "all", options.druidVersion);
  if (type === "compact") checkCompact(ctx);
  else checkIngestion(ctx, type);
  return result(dedupe([...errors, ...ctx.errors]), dedupe([...warnings, ...ctx.warnings]));
}

/**
 * The task as Druid reads it (nulls absent, scalars coerced, default types resolved; see `druid-view.ts`), for
 * code that acts on a spec's values (e.g. `appendToExisting: "true"` is an append for Druid). Tasks of other
 * types come back as given.
 */
export function druidView(task: Record<string, unknown>): Record<string, unknown> {
  const type = task.type;
  if (type !== "index_parallel" && type !== "index" && type !== "compact") return task;
  return readAsDruid(task, TASK_SCHEMAS[type]).task;
}

function result(errors: SpecIssue[], warnings: SpecIssue[]): ValidationResult {
  return { valid: errors.length === 0, errors, warnings };
}

/** The same path and message twice (schema and rule agreeing) is reported once. */
function dedupe(list: SpecIssue[]): SpecIssue[] {
  const seen = new Set<string>();
  return list.filter((i) => {
    const key = `${i.path}\u0000${i.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function describeExpected(expected: string): string {
  if (expected === "int") return "a whole number";
  if (expected === "record") return "an object";
  return expected;
}

/** Turns one zod issue into our issues; `prefix` is the path of an enclosing union branch. */
function convert(issue: Issue, prefix: PropertyKey[], errors: SpecIssue[], warnings: SpecIssue[]): void {
  const segs = [...prefix, ...issue.path].map((p) => (typeof p === "number" ? p : String(p)));
  const path = formatPath(segs);
  const input = (issue as { input?: unknown }).input;
  switch (issue.code) {
    case "unrecognized_keys":
      for (const key of issue.keys) warnings.push({ path: formatPath([...segs, key]), message: UNKNOWN_KEY });
      return;
    case "invalid_type":
      errors.push({
        path,
        message: `expected ${describeExpected(issue.expected)}, found ${describeValue(input)}`,
      });
      return;
    case "invalid_value":
      errors.push({
        path,
        message: `expected ${issue.values.length === 1 ? JSON.stringify(issue.values[0]) : `one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`}, found ${describeValue(input)}`,
      });
      return;
    case "invalid_union": {
      const branches = issue.errors;
      if (branches.length === 0) {
        // A discriminated union whose `type` matched no option.
        const options = (issue as { options?: unknown[] }).options ?? [];
        const found = (input as { type?: unknown } | undefined)?.type;
        errors.push({
          path: formatPath([...segs, ...(segs[segs.length - 1] === "type" ? [] : ["type"])]),
          message: `expected one of ${options.map((o) => JSON.stringify(o)).join(", ")}, found ${describeValue(found)}`,
        });
        return;
      }
      // Report the branch that matches the value's kind (e.g. the object form of a dimension), not all.
      const fits = branches.find((b) => !b.some((i) => i.code === "invalid_type" && i.path.length === 0));
      if (fits) {
        for (const i of fits) convert(i, segs, errors, warnings);
      } else {
        const kinds = branches
          .map((b) => b.find((i) => i.code === "invalid_type"))
          .map((i) => (i as { expected?: string })?.expected);
        errors.push({
          path,
          message: `expected ${kinds.filter(Boolean).join(" or ")}, found ${describeValue(input)}`,
        });
      }
      return;
    }
    case "too_small":
    case "too_big": {
      const bound = issue.code === "too_small" ? issue.minimum : issue.maximum;
      const word =
        issue.code === "too_small"
          ? issue.inclusive
            ? "at least"
            : "more than"
          : issue.inclusive
            ? "at most"
            : "less than";
      const what =
        issue.origin === "array"
          ? `an array with ${word} ${String(bound)} items`
          : `a number ${word} ${String(bound)}`;
      errors.push({ path, message: `expected ${what}, found ${describeValue(input)}` });
      return;
    }
    default:
      errors.push({ path, message: issue.message });
  }
}
