import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { SegopsError } from "../core/errors.js";
import { DruidClient, type DruidClientOptions } from "../druid/client.js";
import { isDruidError } from "../druid/errors.js";
import { openStore } from "../ledger/open.js";
import type { Store } from "../ledger/store.js";
import { type DruidFlags, druidOptionsFrom } from "./options.js";

/** Druid cannot be reached (or refuses our credentials): exit code 4, nothing submitted. */
export class UnreachableError extends SegopsError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super("Unreachable", message, details);
  }
}

/**
 * A client for the command's flags, checked with one cheap call so that an unreachable or misconfigured
 * Druid is reported before any job is written or task submitted.
 */
export async function connectDruid(
  flags: DruidFlags,
  options: { check?: boolean; client?: Partial<DruidClientOptions> } = {},
): Promise<DruidClient> {
  const client = new DruidClient({
    ...druidOptionsFrom(flags),
    retry: { maxAttempts: 5, maxTotalWaitMs: 30_000 },
    ...options.client,
  });
  if (options.check === false) return client;
  try {
    await client.totalWorkerCapacity();
  } catch (error) {
    await client.close();
    const where = flags.overlord ?? flags.druid ?? "the Overlord";
    const why = isDruidError(error) ? error.message : error instanceof Error ? error.message : String(error);
    const hint =
      isDruidError(error) && (error.code === "Unauthorized" || error.code === "Forbidden")
        ? "check --user / SEGOPS_DRUID_PASSWORD or SEGOPS_DRUID_TOKEN"
        : "is Druid running there? (try `segops sim` for a local emulator)";
    throw new UnreachableError(`cannot reach Druid at ${where}: ${why}; ${hint}`);
  }
  return client;
}

/** Opens the ledger (creating the SQLite directory); failures are exit code 4 with the reason. */
export async function openLedger(url: string): Promise<Store> {
  if (url.startsWith("sqlite:") && !url.includes(":memory:")) {
    const path = url.slice("sqlite:".length).replace(/^\/\//, "");
    try {
      mkdirSync(dirname(path), { recursive: true });
    } catch {
      // openStore reports the real problem with the path.
    }
  }
  return openStore(url);
}
