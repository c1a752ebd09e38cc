import type { JsonPath } from "../core/canonical-json.js";
import { SegopsError } from "../core/errors.js";

/** One finding about a spec: where (`spec.ioConfig.dropExisting`) and what was found versus expected. */
export interface SpecIssue {
  readonly path: string;
  readonly message: string;
}

/** The outcome of pre-flight validation; `valid` is true exactly when `errors` is empty. */
export interface ValidationResult {
  readonly valid: boolean;
  readonly errors: readonly SpecIssue[];
  readonly warnings: readonly SpecIssue[];
}

/** A template that cannot be loaded or rendered (syntax, unknown placeholder, missing variable). Exit code 2. */
export class TemplateError extends SegopsError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super("Template", message, details);
  }
}

/**
 * A spec that failed pre-flight validation; `details.errors` holds every {@link SpecIssue} (planning's
 * per partition, each message after its interval), `details.warnings` any warnings found with them.
 * The message says each distinct problem once, with the partitions it is in. Exit code 2.
 */
export class InvalidSpecError extends SegopsError {
  readonly errors: readonly SpecIssue[];
  constructor(errors: readonly SpecIssue[], details: Record<string, unknown> = {}) {
    const distinct = summariseIssues(errors);
    const first = distinct[0];
    const more = distinct.length > 1 ? ` (and ${distinct.length - 1} more)` : "";
    super("InvalidSpec", `invalid spec: ${first ? formatSummary(first) : "unknown problem"}${more}`, {
      ...details,
      errors,
    });
    this.errors = errors;
  }
}

/** One problem as said once: where, what, and the partitions (intervals) it was found in, if any. */
export interface IssueSummary {
  readonly path: string;
  readonly message: string;
  readonly partitions: readonly string[];
}

/** Planning's prefix of a partition's issue: its interval, `START/END: ` (ISO instants, no spaces). */
const PARTITION_PREFIX = /^([-+]?\d{4,6}-\d\d-\d\dT[\d:.]+Z\/[-+]?\d{4,6}-\d\d-\d\dT[\d:.]+Z): /;

/**
 * The distinct problems of a list of issues, in first-seen order: planning reports an error once per
 * partition (`2026-06-01T…/2026-06-02T…: timestampSpec must not be null` nine times for nine days), which
 * is one problem to fix, said once with its partitions.
 */
export function summariseIssues(issues: readonly SpecIssue[]): IssueSummary[] {
  const byKey = new Map<string, { path: string; message: string; partitions: string[] }>();
  for (const issue of issues) {
    const match = PARTITION_PREFIX.exec(issue.message);
    const message = match ? issue.message.slice(match[0].length) : issue.message;
    const key = `${issue.path}\u0000${message}`;
    let summary = byKey.get(key);
    if (!summary) {
      summary = { path: issue.path, message, partitions: [] };
      byKey.set(key, summary);
    }
    if (match?.[1] !== undefined) summary.partitions.push(match[1]);
  }
  return [...byKey.values()];
}

/** `path: in 9 partitions (first A, last B): message`; one partition is named, none (a plain spec) left out. */
export function formatSummary(summary: IssueSummary): string {
  const p = summary.partitions;
  const where =
    p.length === 0
      ? ""
      : p.length === 1
        ? `${p[0]}: `
        : p.length === 2
          ? `in 2 partitions (${p[0]}, ${p[1]}): `
          : `in ${p.length} partitions (first ${p[0]}, last ${p[p.length - 1]}): `;
  return `${summary.path}: ${where}${summary.message}`;
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `["spec", "dimensions", 0, "name"]` → `spec.dimensions[0].name`; odd keys as `["odd key"]`. */
export function formatPath(path: JsonPath): string {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else if (IDENT.test(seg)) out += out === "" ? seg : `.${seg}`;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out === "" ? "(root)" : out;
}

/** A short, bounded rendering of a found value for messages. */
export function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (Array.isArray(value))
    return value.length === 0 ? "an empty array" : `an array ${clip(JSON.stringify(value))}`;
  if (value === null) return "null";
  if (typeof value === "object") return `an object ${clip(JSON.stringify(value))}`;
  return `${typeof value} ${clip(JSON.stringify(value))}`;
}

function clip(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
