import type { Interval } from "../core/interval.js";
import { instantText } from "./instant-text.js";
import {
  DEFAULT_RULES_KEY,
  DEFAULT_TIER,
  defaultClusterRules,
  type RuleJson,
  type RuleKind,
  ruleApplies,
  ruleBoundaries,
  ruleKind,
  tieredReplicants,
} from "./rules.js";
import type { SimSegment } from "./timeline.js";

/**
 * The emulated Coordinator's view of where segments belong. The cluster has one Historical (`HISTORICAL`, tier
 * `_default_tier`) and no other broadcast target, so:
 *
 * - `RunRules` (server/.../coordinator/duty/RunRules.java): for every used segment that is not overshadowed, the
 *   first rule of `rules/{ds}` then `rules/_default` that applies decides. A load rule requires
 *   `tieredReplicants` replicas per tier (`StrategicSegmentAssigner.replicateSegment`): the segment is loaded on
 *   the Historical when `_default_tier` asks for at least one; its replication factor is the sum over tiers,
 *   tiers that do not exist included (a real Druid 33 reported `replication_factor` 1 and no load for
 *   `{"no_such_tier": 1}`). A drop rule makes the Coordinator mark the segment unused (`deleteSegment` →
 *   `processSegmentDeletes`). A broadcast rule loads it on every broadcast target: here the Historical only.
 *   Overshadowed segments are skipped: one overshadowed before it was loaded never loads; one already loaded
 *   stays until it is unused (`UnloadUnusedSegments`).
 * - `MarkOvershadowedSegmentsAsUnused`: an overshadowed segment is marked unused only once the segments
 *   overshadowing it are served (or need zero replicas, `getSegmentsWithZeroRequiredReplicas`), and not before
 *   `millisToWaitBeforeDeleting` has passed since the Coordinator started (the dynamic config, 15 min by default
 *   in Druid 33).
 */
export const HISTORICAL = "localhost:8083";

/** First release whose Coordinator dynamic config has `cloneServers` (apache/druid #17863). */
export const CLONES_SINCE = 34;

/**
 * The clones of `source` in a dynamic config's `cloneServers` (each key a clone, its value the Historical it copies,
 * as `HistoricalCloningTest` sets them), sorted. Pure; a malformed field is no clone.
 */
export function clonesOf(dynamicConfig: Record<string, unknown>, source: string): string[] {
  const map = dynamicConfig.cloneServers;
  if (typeof map !== "object" || map === null || Array.isArray(map)) return [];
  return Object.entries(map as Record<string, unknown>)
    .filter(([clone, of]) => of === source && clone !== source)
    .map(([clone]) => clone)
    .sort();
}

export interface Placement {
  /** Kind of the first matching rule; null when no rule matched. */
  kind: RuleKind | null;
  /** Required replicas per tier (`SegmentReplicaCount.required`). */
  tiers: Record<string, number>;
  /** The replication factor (sum of `tiers`); null when no rule matched (Druid does not know it). */
  replicationFactor: number | null;
  /** Whether the rules put it on the emulated Historical. */
  onHistorical: boolean;
}

/** The first rule that applies to `interval` at `now` (`RunRules`), and what it asks for. */
export function placementOf(rules: readonly (RuleJson | null)[], interval: Interval, now: number): Placement {
  const rule = rules.find((r) => ruleApplies(r, interval, now));
  if (!rule) return { kind: null, tiers: {}, replicationFactor: null, onHistorical: false };
  const kind = ruleKind(rule);
  if (kind === "drop") return { kind, tiers: {}, replicationFactor: 0, onHistorical: false };
  if (kind === "broadcast") {
    return { kind, tiers: { [DEFAULT_TIER]: 1 }, replicationFactor: 1, onHistorical: true };
  }
  const tiers = tieredReplicants(rule);
  const replicationFactor = Object.values(tiers).reduce((n, v) => n + v, 0);
  return { kind, tiers, replicationFactor, onHistorical: (tiers[DEFAULT_TIER] ?? 0) > 0 };
}

/**
 * The earliest instant in `[from, to]` at which the first matching rule is a drop rule, or null. Interval and
 * forever rules do not change over time; period rules change only where their window crosses the segment's
 * bounds, so those instants are the only ones to try besides `from`.
 */
export function dropTime(
  rules: readonly (RuleJson | null)[],
  interval: Interval,
  from: number,
  to: number,
): number | null {
  if (from > to) return null;
  const candidates = new Set<number>([from]);
  for (const r of rules)
    for (const b of ruleBoundaries(r, interval)) if (b > from && b <= to) candidates.add(b);
  for (const t of [...candidates].sort((a, b) => a - b)) {
    if (placementOf(rules, interval, t).kind === "drop") return t;
  }
  return null;
}

/**
 * When the segments in `serving` (each with the time it started to count as served) first covered `target`
 * with complete groups of higher versions (`SegmentTimeline.isOvershadowed`), or null if they do not.
 */
export function coveredSince(
  target: SimSegment,
  serving: ReadonlyArray<{ segment: SimSegment; since: number }>,
): number | null {
  const groups = new Map<string, { interval: Interval; core: number; parts: Map<number, number> }>();
  for (const { segment: s, since } of serving) {
    if (s.version <= target.version) continue;
    if (!(s.interval.start < target.interval.end && target.interval.start < s.interval.end)) continue;
    const key = `${s.interval.start}/${s.interval.end}/${s.version}`;
    const g = groups.get(key) ?? { interval: s.interval, core: 0, parts: new Map() };
    g.core = Math.max(g.core, s.corePartitions);
    g.parts.set(s.partitionNum, Math.min(g.parts.get(s.partitionNum) ?? since, since));
    groups.set(key, g);
  }
  const complete: Array<{ interval: Interval; at: number }> = [];
  for (const g of groups.values()) {
    let at = Number.NEGATIVE_INFINITY;
    let whole = true;
    for (let p = 0; p < g.core; p++) {
      const t = g.parts.get(p);
      if (t === undefined) whole = false;
      else at = Math.max(at, t);
    }
    if (whole) complete.push({ interval: g.interval, at: g.core === 0 ? Math.min(...g.parts.values()) : at });
  }
  complete.sort((a, b) => a.at - b.at);
  const taken: Interval[] = [];
  for (const g of complete) {
    taken.push(g.interval);
    if (covers(taken, target.interval)) return g.at;
  }
  return null;
}

function covers(pieces: Interval[], target: Interval): boolean {
  const sorted = [...pieces].sort((a, b) => a.start - b.start);
  let reached = target.start;
  for (const p of sorted) {
    if (p.start > reached) break;
    reached = Math.max(reached, p.end);
    if (reached >= target.end) return true;
  }
  return reached >= target.end;
}

/**
 * The Coordinator dynamic config (`CoordinatorDynamicConfig`, `GET/POST /druid/coordinator/v1/config`) with Druid
 * 33's defaults as a real one answered them. Only `millisToWaitBeforeDeleting` changes what the emulator does
 * (the `MarkOvershadowedSegmentsAsUnused` start gate); the other fields are kept and echoed.
 */
export function defaultDynamicConfig(
  millisToWaitBeforeDeleting: number,
  druidVersion = 33,
): Record<string, unknown> {
  return {
    // `cloneServers` (Druid 34, apache/druid #17863): clone host → source host; none by default.
    ...(druidVersion >= CLONES_SINCE ? { cloneServers: {} } : {}),
    millisToWaitBeforeDeleting,
    maxSegmentsToMove: 100,
    replicantLifetime: 15,
    replicationThrottleLimit: 500,
    balancerComputeThreads: 1,
    killDataSourceWhitelist: [],
    killTaskSlotRatio: 0.1,
    maxKillTaskSlots: 2147483647,
    killPendingSegmentsSkipList: [],
    maxSegmentsInNodeLoadingQueue: 500,
    decommissioningNodes: [],
    pauseCoordination: false,
    replicateAfterLoadTimeout: false,
    useRoundRobinSegmentAssignment: true,
    smartSegmentLoading: true,
    debugDimensions: null,
    turboLoadingNodes: [],
  };
}

/** One `rules` audit entry (`AuditEntry`, as `GET /rules/{ds}/history` lists them). */
export interface RuleAudit {
  key: string;
  author: string;
  comment: string;
  ip: string;
  payload: string;
  at: number;
}

/**
 * The rule store (`SQLMetadataRuleManager`): rules per datasource plus `_default`, which starts as Druid's
 * default (`createDefaultRule`: loadForever, two replicas on `_default_tier`). Setting `[]` for a datasource
 * leaves it with the defaults only; its entry stays (`GET /rules` lists it as `[]`), as in Druid.
 */
export class RuleBook {
  #rules = new Map<string, RuleJson[]>([[DEFAULT_RULES_KEY, defaultClusterRules()]]);
  #changedAt = new Map<string, number>();
  #audit: RuleAudit[] = [];

  /** `getAllRules()`: every datasource with stored rules, `_default` included. */
  all(): Record<string, RuleJson[]> {
    return Object.fromEntries([...this.#rules.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  /** `getRules(ds)`: the datasource's own rules (`[]` when it has none). */
  get(dataSource: string): RuleJson[] {
    return this.#rules.get(dataSource) ?? [];
  }

  /** `getRulesWithDefault(ds)`: its own rules, then the cluster's (twice for `_default` itself, as in Druid). */
  withDefault(dataSource: string): RuleJson[] {
    return [...this.get(dataSource), ...this.get(DEFAULT_RULES_KEY)];
  }

  /** When the rules that apply to `dataSource` last changed (0 = never). */
  changedAt(dataSource: string): number {
    return Math.max(this.#changedAt.get(dataSource) ?? 0, this.#changedAt.get(DEFAULT_RULES_KEY) ?? 0);
  }

  set(
    dataSource: string,
    rules: RuleJson[],
    at: number,
    audit: Omit<RuleAudit, "key" | "payload" | "at">,
  ): void {
    this.#rules.set(dataSource, rules);
    this.#changedAt.set(dataSource, at);
    this.#audit.push({ key: dataSource, payload: JSON.stringify(rules), at, ...audit });
  }

  /** Audit entries, oldest first; `key` limits them to one datasource. */
  history(key?: string): RuleAudit[] {
    return this.#audit.filter((a) => key === undefined || a.key === key);
  }

  toJSON(): { rules: Record<string, RuleJson[]>; changedAt: Record<string, number>; audit: RuleAudit[] } {
    return { rules: this.all(), changedAt: Object.fromEntries(this.#changedAt), audit: this.#audit };
  }

  restore(saved: ReturnType<RuleBook["toJSON"]>): void {
    this.#rules = new Map(Object.entries(saved.rules));
    if (!this.#rules.has(DEFAULT_RULES_KEY)) this.#rules.set(DEFAULT_RULES_KEY, defaultClusterRules());
    this.#changedAt = new Map(Object.entries(saved.changedAt));
    this.#audit = [...saved.audit];
  }
}

/** An audit entry as `AuditEntry` serializes it (a real Druid 33 answered this shape). */
export function auditJson(a: RuleAudit): Record<string, unknown> {
  return {
    key: a.key,
    type: "rules",
    auditInfo: { author: a.author, identity: "allowAll", comment: a.comment, ip: a.ip },
    request: null,
    payload: a.payload,
    auditTime: instantText(a.at),
  };
}
