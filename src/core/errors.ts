/**
 * Every error segops raises on purpose carries a stable `code` (for programs and exit codes) and
 * the context a user needs to act (which field, which task, what Druid said). Messages never carry secrets.
 */
/** The codes of Druid's answers the client tells apart (src/druid/errors.ts has the table). */
export type DruidErrorCode =
  | "DuplicateTask"
  | "SpecRejected"
  | "NotFound"
  | "Unauthorized"
  | "Forbidden"
  | "BadRequest"
  | "Capacity"
  | "Unavailable"
  | "Transient"
  | "Unsupported"
  | "Tls"
  | "UnexpectedResponse";

/** Every code a segops error can carry: one union, so programs can switch on it and none is misspelled. */
export type ErrorCode =
  /** Bad input: flags, files, ranges (exit 2). */
  | "Usage"
  /** segops' validation refused a spec (exit 2). */
  | "InvalidSpec"
  | "Template"
  | "Interval"
  | "Granularity"
  | "TaskId"
  | "Partition"
  | "CanonicalJson"
  /** The ledger cannot be used (exit 4). */
  | "Ledger"
  /** Druid cannot be reached at start (exit 4). */
  | "Unreachable"
  /** A driver configured wrongly (a programming error). */
  | "Driver"
  | DruidErrorCode;

export class SegopsError extends Error {
  readonly code: ErrorCode;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(
    code: ErrorCode,
    message: string,
    details: Record<string, unknown> = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.details = details;
  }
}

/** Bad input from the user (flags, files, specs): exit code 2, nothing submitted. */
export class UsageError extends SegopsError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super("Usage", message, details);
  }
}

/** CLI exit codes (architecture doc, "Exit codes"). */
export const ExitCode = {
  Ok: 0,
  SomeFailed: 1,
  Usage: 2,
  Deadline: 3,
  Unreachable: 4,
  /** `wait --handoff`: the task succeeded, but a later task replaced its interval. */
  Superseded: 5,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];
