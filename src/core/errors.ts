/**
 * Every error segops raises on purpose carries a stable `code` (for programs and exit codes) and
 * the context a user needs to act (which field, which task, what Druid said). Messages never carry secrets.
 */
export class SegopsError extends Error {
  readonly code: string;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: string, message: string, details: Record<string, unknown> = {}, options?: ErrorOptions) {
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
