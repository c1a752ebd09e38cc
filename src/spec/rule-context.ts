import type { Interval } from "../core/interval.js";

/** What every rule reads and reports to (rules.ts and the rule modules beside it). */

type Obj = Record<string, unknown>;

/**
 * The Druid release rules apply as when no cluster says otherwise: the oldest segops is held to, which the
 * real-Druid stage runs (src/druid/capabilities.ts).
 */
export const DEFAULT_DRUID_VERSION = 33;

/** Which rules run: Druid's and segops' (`all`, the default), or only Druid's (`druid`). */
export type RuleScope = "all" | "druid";

export interface RuleContext {
  readonly task: Obj;
  /** The partition interval the task must cover exactly, when known. */
  readonly partition?: Interval;
  /** `druid`: only the rules Druid enforces (no partition alignment, no idempotence warnings). */
  readonly scope: RuleScope;
  /** The target cluster's Druid release: rules that changed between releases apply as that release's. */
  readonly druidVersion: number;
  error(path: string, message: string): void;
  warn(path: string, message: string): void;
}
