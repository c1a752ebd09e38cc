import type { Clock } from "../core/clock.js";
import { capabilitiesFor, type DruidCapabilities } from "./capabilities.js";

/**
 * How long an assumption made after a failed `/status` read stands before the next caller reads again: a Druid
 * restarting when the run began should not leave the run on assumed behaviour for good, and a Druid that never
 * answers `/status` (a proxy that blocks it) should not cost a request per admission tick.
 */
export const CAPABILITIES_RETRY_MS = 5 * 60_000;

/**
 * One client's view of its cluster's Druid release: `GET /status` read on first use and kept (a cluster's
 * release does not change under a running process often enough to ask again; a restart of segops reads it anew).
 * Every caller shares the one read. A read that fails is not fatal: the newest known behaviour is assumed
 * (capabilities.ts) until a read after {@link CAPABILITIES_RETRY_MS} succeeds. Each distinct warning is given
 * once per client.
 */
export class CapabilitiesCache {
  #current: Promise<DruidCapabilities> | null = null;
  #settled: DruidCapabilities | null = null;
  #retryAt = Number.POSITIVE_INFINITY;
  readonly #warned = new Set<string>();

  constructor(
    private readonly o: {
      /** Reads `/status` and answers its `version` field (anything, as received). */
      read: () => Promise<unknown>;
      clock: Clock;
      warn: (message: string) => void;
    },
  ) {}

  /** What the last finished read gave, without reading: null before any read has finished. */
  known(): DruidCapabilities | null {
    return this.#settled;
  }

  get(): Promise<DruidCapabilities> {
    if (!this.#current || this.o.clock.now() >= this.#retryAt) {
      this.#retryAt = Number.POSITIVE_INFINITY;
      this.#current = this.#read();
    }
    return this.#current;
  }

  async #read(): Promise<DruidCapabilities> {
    let capabilities: DruidCapabilities;
    try {
      capabilities = capabilitiesFor(await this.o.read());
    } catch (error) {
      capabilities = capabilitiesFor(null, error instanceof Error ? error.message : String(error));
      this.#retryAt = this.o.clock.now() + CAPABILITIES_RETRY_MS;
    }
    // Once per version (or once for "no version"): a cluster that stays unreadable is said once, not every
    // five minutes, and one that answers after all with a version segops does not know is said too.
    const key = capabilities.version?.text ?? "";
    if (capabilities.warning && !this.#warned.has(key)) {
      this.#warned.add(key);
      this.o.warn(capabilities.warning);
    }
    this.#settled = capabilities;
    return capabilities;
  }
}
