import { type Clock, systemClock } from "../core/clock.js";
import { UsageError } from "../core/errors.js";
import { NoLedgerError, redactUrl } from "./errors.js";
import { SqlStore } from "./sql-store.js";
import type { Store } from "./store.js";

export { NoLedgerError };

/** Options of `openStore`. */
export interface OpenStoreOptions {
  /** Source of every timestamp written. @default systemClock */
  readonly clock?: Clock;
  /** PostgreSQL pool size. @default 10 */
  readonly poolSize?: number;
  /** SQLite: how long to wait for another process's write lock. @default 5000 */
  readonly busyTimeoutMs?: number;
  /**
   * SQLite: reject with {@link NoLedgerError} when the database file does not exist, instead of
   * creating it (and its directory). For read-only commands.
   */
  readonly mustExist?: boolean;
}

/** The embedded default ledger location (relative to the working directory). */
export const DEFAULT_LEDGER_URL = "sqlite:.segops/ledger.db";

/** What a ledger URL names, once checked. */
export type LedgerTarget = { readonly kind: "sqlite"; readonly path: string } | { readonly kind: "postgres" };

const FORMS =
  "expected sqlite:PATH, sqlite::memory: or postgres://… (in full: postgres://user@host[:port]/db[?schema=name], the schema a lower-case SQL identifier)";
/** The same rule as the PostgreSQL backend applies to `schema`. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * The URL with any password hidden, even when it is too malformed to parse (`redactUrl` stops at the
 * first `@`, so a password holding one would partly show).
 */
function hidden(url: string): string {
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(url)?.[0];
  const at = url.lastIndexOf("@");
  if (!scheme || at < scheme.length) return redactUrl(url);
  const info = url.slice(scheme.length, at);
  const colon = info.indexOf(":");
  const masked = colon < 0 ? url : `${scheme}${info.slice(0, colon)}:***${url.slice(at)}`;
  return redactUrl(masked);
}

/**
 * Checks a ledger URL without connecting, so a typo is bad input (exit code 2) rather than an
 * unreachable ledger (exit code 4). `flag` (e.g. `--ledger`) prefixes the message. Never shows a password.
 */
export function parseLedgerUrl(url: string, flag?: string): LedgerTarget {
  const fail = (problem: string): never => {
    throw new UsageError(`${flag ? `${flag}: ` : ""}${problem}: ${FORMS}`, {
      ...(flag ? { flag } : {}),
      url: hidden(url),
    });
  };
  if (url.startsWith("sqlite:")) {
    const path = url.slice("sqlite:".length).replace(/^\/\//, "");
    if (path === "") fail("empty SQLite ledger path");
    return { kind: "sqlite", path };
  }
  const pg = /^postgres(?:ql)?:\/\/([^/?#]*)/i.exec(url);
  if (!pg) return fail(`unsupported ledger URL ${hidden(url)}`);
  const authority = pg[1] as string;
  // Another "@" (in the authority or after it) means a password with a raw @ / ? #: parsers split it
  // differently and the redaction could miss part of it.
  if (url.lastIndexOf("@") >= pg[0].length || authority.indexOf("@") !== authority.lastIndexOf("@")) {
    fail(
      `ledger URL ${hidden(url)}: more than one "@", or one after the host; percent-encode @ / ? # inside the user name, password and parameters (%40 %2F %3F %23)`,
    );
  }
  const hostPort = authority.slice(authority.lastIndexOf("@") + 1);
  const [, host = "", port] = /^(\[[^\]]*\]|[^:]*)(?::(.*))?$/.exec(hostPort) ?? [];
  if (port !== undefined && !(/^[0-9]{1,5}$/.test(port) && Number(port) >= 1 && Number(port) <= 65535)) {
    fail(`ledger URL ${hidden(url)}: port "${port}" is not a TCP port (1–65535)`);
  }
  // pg reaches a Unix socket through ?host=/dir with an empty host; otherwise a host is needed.
  if (host === "" && !/[?&]host=/.test(url)) fail(`ledger URL ${hidden(url)}: no host`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return fail(`malformed ledger URL ${hidden(url)}`);
  }
  // The PostgreSQL driver percent-decodes these parts when it connects: a bad escape there would only
  // surface then, as a bare "URI malformed". The password's escape is not quoted: it is part of it.
  const parts = [
    ["user name", parsed.username],
    ["password", parsed.password],
    ["host", parsed.hostname],
    ["database name", parsed.pathname],
  ] as const;
  for (const [part, value] of parts) {
    if (!percentDecodes(value)) {
      fail(
        `ledger URL ${hidden(url)}: the ${part} holds a malformed %-escape (% must start a UTF-8 byte as two hex digits; write a literal % as %25)`,
      );
    }
  }
  const schemas = parsed.searchParams.getAll("schema");
  if (schemas.length > 1) fail(`ledger URL ${hidden(url)}: schema is given ${schemas.length} times`);
  const schema = schemas[0];
  if (schema !== undefined && !SCHEMA_NAME.test(schema)) {
    fail(
      `ledger URL ${hidden(url)}: schema ${JSON.stringify(schema)} is not a lower-case SQL identifier (letters, digits and _, at most 63, not starting with a digit)`,
    );
  }
  return { kind: "postgres" };
}

function percentDecodes(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Opens a ledger and applies pending migrations.
 * - `sqlite:PATH` (e.g. `sqlite:.segops/ledger.db`, `sqlite::memory:`)
 * - `postgres://user:pass@host:5432/db` or `postgresql://…`, optional `?schema=name` (default `public`)
 *
 * A malformed or unsupported URL is a `UsageError` (checked before connecting); an unreachable or
 * unusable ledger a `LedgerError`.
 *
 * @example const store = await openStore("sqlite:.segops/ledger.db");
 */
export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<Store> {
  const clock = options.clock ?? systemClock;
  const now = () => clock.now();
  const target = parseLedgerUrl(url);
  if (target.kind === "sqlite") {
    const busy = options.busyTimeoutMs;
    return new SqlStore(
      // Each backend (and its native driver) loads only when a ledger of its kind is opened.
      (await import("./sqlite.js")).SqliteExecutor.open(target.path, {
        now,
        ...(busy !== undefined ? { busyTimeoutMs: busy } : {}),
        ...(options.mustExist ? { mustExist: true } : {}),
      }),
      clock,
    );
  }
  const pool = options.poolSize;
  return new SqlStore(
    await (await import("./postgres.js")).PostgresExecutor.open(url, {
      now,
      ...(pool !== undefined ? { poolSize: pool } : {}),
    }),
    clock,
  );
}
