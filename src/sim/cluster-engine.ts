import type { Interval } from "../core/interval.js";
import { CLONES_SINCE, clonesOf, defaultDynamicConfig, HISTORICAL } from "./coordinator.js";
import { killable } from "./embedded-kill.js";
import { type EngineOptions, SimEngine } from "./engine.js";
import { isUsed, type SimSegment } from "./timeline.js";

/** What the emulated cluster adds to the engine's tasks and segments: its servers' lives and the Overlord's kill. */
export interface ClusterOptions extends EngineOptions {
  /** The Overlord's embedded kill buffer (embedded-kill.ts); absent or null: no embedded kill. */
  embeddedKillBuffer?: string | null;
}

/**
 * The emulated cluster's servers around the engine (engine.ts keeps tasks, locks and segments):
 *
 * - the one Historical (`HISTORICAL`) can stop and start again (`setHistoricalUp`, `POST /__sim/historical/stop`):
 *   stopped, it serves nothing; started again, it announces what the rules give it at once (its segment cache);
 * - from Druid 34, the Coordinator dynamic config's `cloneServers` (apache/druid #17863: each key a clone of the
 *   Historical its value names) make clones of it: a clone holds what the Historical holds, is listed beside it in the
 *   Coordinator's inventory, and is not queried by Brokers (`cloneQueryMode` excludeClones, #17899); when the
 *   Historical disappears a clone keeps its last state (the 34.0.0 release notes), so what only clones hold is in
 *   the serverview and not served;
 * - from Druid 34, the Overlord's embedded kill (apache/druid #18028, #18124) deletes unused segments past its
 *   buffer, when the runtime properties enable it.
 *
 * While the Historical is down the engine's own Coordinator passes still take its segments for loaded (marking
 * overshadowed ones unused, say): only what servers and Brokers answer changes.
 */
export class ClusterEngine extends SimEngine {
  readonly #killBuffer: string | null;
  #historicalUp = true;
  /** What the Historical's clones held when it stopped. */
  #cloneHeld: { hosts: string[]; ids: Set<string> } = { hosts: [], ids: new Set() };

  constructor(options: ClusterOptions) {
    super(options);
    this.#killBuffer = options.embeddedKillBuffer ?? null;
    this.dynamicConfig = defaultDynamicConfig(options.millisToWaitBeforeDeleting, options.druidVersion);
  }

  override sync(): void {
    super.sync();
    if (this.#killBuffer && this.#embeddedKill(this.#killBuffer)) this.onChange();
  }

  /** Unused segments past the buffer are deleted for good (`UnusedSegmentsKiller`'s embedded kill tasks). */
  #embeddedKill(buffer: string): boolean {
    let killed = 0;
    for (const ds of this.store.dataSources())
      killed += this.store.remove(ds, (s) => killable(s.unusedAt, this.now, buffer));
    return killed > 0;
  }

  override isServed(s: SimSegment, at?: number): boolean {
    return this.#historicalUp && super.isServed(s, at);
  }

  override served(dataSource: string, at?: number): SimSegment[] {
    return this.#historicalUp ? super.served(dataSource, at) : [];
  }

  override servedView(dataSource: string, interval: Interval, at?: number): SimSegment[] {
    return this.#historicalUp ? super.servedView(dataSource, interval, at) : [];
  }

  /** Stops (false) or starts (true) the emulated Historical; its clones keep what they held when it stopped. */
  setHistoricalUp(up: boolean): void {
    this.sync();
    if (!up && this.#historicalUp) {
      const ids = new Set<string>();
      for (const ds of this.store.dataSources()) for (const s of this.served(ds)) ids.add(s.id);
      this.#cloneHeld = { hosts: this.cloneHosts(), ids };
    }
    if (up) this.#cloneHeld = { hosts: [], ids: new Set() };
    this.#historicalUp = up;
    this.onChange();
  }

  get historicalUp(): boolean {
    return this.#historicalUp;
  }

  /** The clones of the emulated Historical in the dynamic config (none before Druid 34, which has no clones). */
  cloneHosts(): string[] {
    return this.options.druidVersion >= CLONES_SINCE ? clonesOf(this.dynamicConfig, HISTORICAL) : [];
  }

  /**
   * The servers holding `s` (the Coordinator's inventory, clones included): the Historical and its clones while it
   * serves `s`, and while it is down the clones that held `s` when it stopped.
   */
  holders(s: SimSegment): string[] {
    if (this.isServed(s)) return [HISTORICAL, ...this.cloneHosts()];
    if (!this.#historicalUp && this.#cloneHeld.ids.has(s.id) && isUsed(s, this.now)) {
      const now = new Set(this.cloneHosts());
      return this.#cloneHeld.hosts.filter((h) => now.has(h));
    }
    return [];
  }

  /** Used segments over `interval` that only clones hold (the Historical is down), for the serverview. */
  cloneOnlyView(dataSource: string, interval: Interval): SimSegment[] {
    if (this.#historicalUp) return [];
    return this.store.overlapping(dataSource, interval).filter((s) => this.holders(s).length > 0);
  }
}

/** The servers holding `s` in any engine: a plain engine's one Historical, when it serves `s`. */
export function holdersOf(engine: SimEngine, s: SimSegment): string[] {
  if (engine instanceof ClusterEngine) return engine.holders(s);
  return engine.isServed(s) ? [HISTORICAL] : [];
}

/** What only clones hold over `interval` in any engine (nothing in a plain one). */
export function cloneOnlyViewOf(engine: SimEngine, dataSource: string, interval: Interval): SimSegment[] {
  return engine instanceof ClusterEngine ? engine.cloneOnlyView(dataSource, interval) : [];
}
