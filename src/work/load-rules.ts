import { DateTime, Duration } from "luxon";
import { formatInterval, type Interval } from "../core/interval.js";

/**
 * Load rules (Druid docs `operations/rule-configuration.md`; source `server/.../coordinator/rules/`): the
 * Coordinator's `RunRules` duty gives each used segment the first rule of the datasource's chain (its own
 * rules, then the cluster's `_default`) that applies to it. A segment whose rule drops it, loads it with
 * no replicas, or that no rule matches, is never loaded: waiting for its handoff cannot succeed. Pure.
 */

export type LoadRule = { type: string } & Record<string, unknown>;

/**
 * What the first applicable rule does with a segment: null when no rule applies; `loads: null` when segops cannot
 * tell (a rule type it does not know, or a partial load rule that may pass the segment on to the next rule).
 */
export type RuleEffect = { rule: LoadRule; loads: boolean | null } | null;

/**
 * The rule types segops reads. The partial load rules (`loadPartialForever`, `loadPartialByInterval`,
 * `loadPartialByPeriod`: apache/druid #19374, Druid 38; partial loading of virtual storage Historicals, #19671) apply
 * as their plain counterparts do and still announce the segment they load, so they count as load rules.
 */
export const KNOWN_RULE_TYPES: ReadonlySet<string> = new Set([
  "loadForever",
  "loadByInterval",
  "loadByPeriod",
  "dropForever",
  "dropByInterval",
  "dropByPeriod",
  "dropBeforeByPeriod",
  "broadcastForever",
  "broadcastByInterval",
  "broadcastByPeriod",
  "loadPartialForever",
  "loadPartialByInterval",
  "loadPartialByPeriod",
]);

/**
 * `now` minus an ISO 8601 period, counted back in calendar units as Joda's `new Interval(period, now)`
 * does (a month back from March 31 is February 28/29, not 30 days); null when the period is malformed.
 */
export function periodStart(period: string, now: number): number | null {
  const duration = Duration.fromISO(period);
  if (!duration.isValid || duration.toMillis() === 0) return null;
  return DateTime.fromMillis(now, { zone: "utc" }).minus(duration).toMillis();
}

function parseRuleInterval(text: unknown): Interval | null {
  if (typeof text !== "string") return null;
  const [a, b] = text.split("/");
  const start = Date.parse(a ?? "");
  const end = Date.parse(b ?? "");
  return Number.isFinite(start) && Number.isFinite(end) ? { start, end } : null;
}

const overlaps = (a: Interval, b: Interval) => a.start < b.end && b.start < a.end;
const contains = (outer: Interval, inner: Interval) => outer.start <= inner.start && inner.end <= outer.end;

/** Whether `rule` applies to a segment over `segment` at `now` (each rule type's `appliesTo`). */
export function ruleApplies(rule: LoadRule, segment: Interval, now: number): boolean {
  const includeFuture = rule.includeFuture !== false; // default true for period rules
  const window = (): Interval | null => {
    const start = typeof rule.period === "string" ? periodStart(rule.period, now) : null;
    return start === null ? null : { start, end: now };
  };
  switch (rule.type) {
    case "loadForever":
    case "loadPartialForever":
    case "dropForever":
    case "broadcastForever":
      return true;
    case "loadByInterval":
    case "loadPartialByInterval":
    case "broadcastByInterval": {
      // `Rules.eligibleForLoad(interval, segment)`: overlap.
      const i = parseRuleInterval(rule.interval);
      return i !== null && overlaps(i, segment);
    }
    case "dropByInterval": {
      // `IntervalDropRule`: the rule's interval contains the segment's.
      const i = parseRuleInterval(rule.interval);
      return i !== null && contains(i, segment);
    }
    case "loadByPeriod":
    case "loadPartialByPeriod":
    case "broadcastByPeriod": {
      const w = window();
      if (!w) return false;
      return includeFuture ? w.start < segment.end : overlaps(w, segment);
    }
    case "dropByPeriod": {
      const w = window();
      if (!w) return false;
      return includeFuture ? w.start <= segment.start : contains(w, segment);
    }
    case "dropBeforeByPeriod": {
      // `PeriodDropBeforeRule`: everything that ended before now − period.
      const start = typeof rule.period === "string" ? periodStart(rule.period, now) : null;
      return start !== null && segment.end <= start;
    }
    default:
      // A type segops does not know (a newer Druid's): it may apply; ruleFor stops at it, undecided.
      return true;
  }
}

/** Replicas a load rule asks for; a missing `tieredReplicants` means the default tier's 2. */
function replicas(rule: LoadRule): number {
  const tiers = rule.tieredReplicants;
  if (tiers === undefined || tiers === null) return rule.useDefaultTierForNull === false ? 0 : 2;
  if (typeof tiers !== "object") return 0;
  return Object.values(tiers as Record<string, unknown>).reduce<number>(
    (n, v) => n + (typeof v === "number" && v > 0 ? v : 0),
    0,
  );
}

/** The first rule of the chain that applies to the segment, and whether it loads it. */
export function ruleFor(rules: readonly LoadRule[], segment: Interval, now: number): RuleEffect {
  for (const rule of rules) {
    if (!ruleApplies(rule, segment, now)) continue;
    if (!KNOWN_RULE_TYPES.has(rule.type)) return { rule, loads: null };
    // A partial rule whose matcher does not fit the segment passes it on (`onCannotMatch: FALL_THROUGH`):
    // which rule then decides depends on the segment's projections, which segops does not read.
    if (
      rule.type.startsWith("loadPartial") &&
      String(rule.onCannotMatch ?? "").toUpperCase() === "FALL_THROUGH"
    )
      return { rule, loads: null };
    if (rule.type.startsWith("drop")) return { rule, loads: false };
    if (rule.type.startsWith("broadcast")) return { rule, loads: true };
    return { rule, loads: replicas(rule) > 0 };
  }
  return null;
}

/**
 * Why segments over these intervals can never be served under the rules, or null when every one of them
 * is loaded by some rule.
 */
export function neverLoaded(
  rules: readonly LoadRule[],
  intervals: readonly Interval[],
  now: number,
): string | null {
  for (const interval of intervals) {
    const effect = ruleFor(rules, interval, now);
    if (effect === null)
      return `no load rule matches ${formatInterval(interval)} (rules: ${JSON.stringify(rules)})`;
    if (effect.loads === false)
      return `${formatInterval(interval)} is matched first by ${JSON.stringify(effect.rule)}, which does not load it`;
  }
  return null;
}

/**
 * Why the rules cannot say whether these intervals will be served (the first rule that may apply is one segops
 * cannot read), or null. The handoff gate then goes by the served view alone, up to its timeout, and says this
 * among what it waits for, instead of a verdict the rule may contradict.
 */
export function undecidedByRules(
  rules: readonly LoadRule[],
  intervals: readonly Interval[],
  now: number,
): string | null {
  for (const interval of intervals) {
    const effect = ruleFor(rules, interval, now);
    if (effect?.loads !== null || effect === null) continue;
    const known = KNOWN_RULE_TYPES.has(effect.rule.type);
    return `${formatInterval(interval)} is matched first by ${JSON.stringify(effect.rule)}: ${known ? "a partial load rule that may pass the segment on to the next rule" : `a rule type segops does not know (${effect.rule.type})`}, so only the served view says whether it loads`;
  }
  return null;
}
