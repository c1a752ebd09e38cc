import { nextRetry, type RetryPolicy } from "../core/backoff.js";
import { systemClock } from "../core/clock.js";
import { SegopsError } from "../core/errors.js";
import { isConnectionDropped } from "../druid/classify.js";
import { DruidClient, type DruidClientOptions } from "../druid/client.js";
import { type DruidError, isDruidError } from "../druid/errors.js";
import { openStore, parseLedgerUrl } from "../ledger/open.js";
import type { Store } from "../ledger/store.js";
import { startupHint } from "./druid-hints.js";
import { type DruidFlags, druidOptionsFrom } from "./options.js";

/** Druid cannot be reached (or refuses our credentials): exit code 4, nothing submitted. */
export class UnreachableError extends SegopsError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super("Unreachable", message, details);
  }
}

/** Seconds a Druid call (and the startup check) may spend waiting between retries. */
export const DEFAULT_RETRY_BUDGET_S = 30;
/** A backstop only: the wait budget is what ends a probe whose retries all come back early. */
const PROBE_MAX_ATTEMPTS = 1000;

/**
 * A client for the command's flags, checked with one cheap call so that an unreachable or misconfigured
 * Druid is reported before any job is written or task submitted.
 */
export async function connectDruid(
  flags: DruidFlags,
  options: { check?: boolean; client?: Partial<DruidClientOptions> } = {},
): Promise<DruidClient> {
  const budgetS = flags.retryBudget ?? DEFAULT_RETRY_BUDGET_S;
  const clientOptions: DruidClientOptions = {
    ...druidOptionsFrom(flags),
    ...options.client,
    retry: {
      maxAttempts: 5,
      maxTotalWaitMs: budgetS * 1000,
      ...(flags.retryBase !== undefined ? { baseMs: flags.retryBase } : {}),
      ...options.client?.retry,
    },
  };
  const client = new DruidClient(clientOptions);
  if (options.check === false) return client;
  try {
    await probe(clientOptions);
  } catch (error) {
    await client.close();
    const where = flags.overlord ?? flags.druid ?? "the Overlord";
    const why = isDruidError(error) ? error.message : error instanceof Error ? error.message : String(error);
    const tries = isDruidError(error) && error.attempts > 1 ? error.attempts : 0;
    const spent = tries > 0 ? `; gave up after ${tries} attempts (retry budget ${budgetS} s)` : "";
    const hint = startupHint(error, flags.overlord ?? flags.druid);
    throw new UnreachableError(`cannot reach Druid at ${where}: ${why}${spent}; ${hint}`);
  }
  return client;
}

/**
 * The startup check, with the client's backoff curve and wait budget. A Druid that answers 429, 503 or
 * another 5xx is there but not ready (a leader election, a full queue), which a run survives mid-way, so
 * only the wait budget ends those retries. So does a connection reset or hung up (something took the
 * connection: a Router restarting), and from then on a refusal too (the restart's down time). Refused
 * or unresolved from the first attempt on keeps the client's attempt cap: a mistyped URL should fail fast.
 */
async function probe(options: DruidClientOptions): Promise<void> {
  const policy: RetryPolicy = options.retry ?? {};
  const budgetMs = policy.maxTotalWaitMs ?? DEFAULT_RETRY_BUDGET_S * 1000;
  const clock = options.clock ?? systemClock;
  const random = options.random ?? Math.random;
  // One attempt per call: this loop is the backoff, so it does not restart with every call.
  const once = new DruidClient({ ...options, retry: { ...policy, maxAttempts: 1 } });
  let waitedMs = 0;
  // Druid answered or dropped a connection: it is there, and every failure shares the wait budget.
  let there = false;
  try {
    for (let attemptsMade = 1; ; attemptsMade++) {
      let error: DruidError;
      try {
        await once.totalWorkerCapacity();
        return;
      } catch (caught) {
        if (!isDruidError(caught) || !caught.retryable) throw caught;
        error = caught;
      }
      error.attempts = attemptsMade;
      if (error.status !== undefined || isConnectionDropped(error)) there = true;
      // nextRetry would still allow 0 ms waits once the budget is exactly spent.
      if (there && waitedMs >= budgetMs) throw error;
      const decision = nextRetry(
        {
          attemptsMade,
          waitedMs,
          ...(error.retryAfterMs !== undefined ? { retryAfterMs: error.retryAfterMs } : {}),
        },
        there ? { ...policy, maxAttempts: PROBE_MAX_ATTEMPTS } : policy,
        random,
      );
      if (!decision.retry) throw error;
      await clock.sleep(decision.delayMs);
      waitedMs += decision.delayMs;
    }
  } finally {
    await once.close();
  }
}

/**
 * Opens the ledger named by `--ledger` (checked first: a malformed URL is exit code 2); failures to
 * open it are exit code 4 with the reason. `mustExist` is for read-only commands: no SQLite file is created.
 */
export async function openLedger(url: string, options: { mustExist?: boolean } = {}): Promise<Store> {
  parseLedgerUrl(url, "--ledger");
  return openStore(url, options.mustExist ? { mustExist: true } : {});
}
