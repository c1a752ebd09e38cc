import { SegopsError } from "../core/errors.js";
import { LATEST_VERSION } from "./sql/schema.js";

/**
 * The ledger cannot be used: unreachable, a failed statement, a schema newer than this code. The
 * driver stops on it and the CLI exits non-zero (exit code 4). Messages never carry a password.
 */
export class LedgerError extends SegopsError {
  constructor(message: string, details: Record<string, unknown> = {}, options?: ErrorOptions) {
    super("Ledger", message, details, options);
  }
}

/** `postgres://user:secret@host/db` → `postgres://user:***@host/db`; also hides `password=` parameters. */
export function redactUrl(url: string): string {
  return url
    .replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@?#]*:)[^@/?#]*@/i, "$1***@")
    .replace(/([?&]password=)[^&#]*/gi, "$1***");
}

/** Removes every occurrence of `secret` from `text` (driver messages can quote a connection string). */
export function scrub(text: string, secret: string | undefined): string {
  if (!secret) return text;
  return text.split(secret).join("***");
}

/** Wraps a driver error from a failed statement into a `LedgerError` naming the operation. */
export function ledgerFailure(operation: string, error: unknown, secret?: string): LedgerError {
  if (error instanceof LedgerError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  return new LedgerError(`ledger ${operation} failed: ${scrub(message, secret)}`, {
    operation,
    ...(typeof code === "string" ? { cause: code } : {}),
  });
}

/** `mustExist` was asked for and there is no database file: nothing has run against this ledger. */
export class NoLedgerError extends LedgerError {
  readonly path: string;
  constructor(path: string) {
    super(`no ledger at ${path} (nothing has run here yet)`, { path, missing: true });
    this.path = path;
  }
}

/** The ledger was migrated by a newer segops. */
export function newerSchema(found: number): LedgerError {
  return new LedgerError(
    `the ledger's schema is version ${found}, newer than this segops supports (${LATEST_VERSION}): upgrade segops, or use another ledger`,
    { found, supported: LATEST_VERSION },
  );
}
