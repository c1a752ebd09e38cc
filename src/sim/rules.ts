import { DateTime, Duration } from "luxon";
import type { Interval } from "../core/interval.js";
import { parseInterval } from "../core/interval.js";
import { intervalText } from "./instant-text.js";

/**
 * Retention (load/drop/broadcast) rules as the Coordinator keeps them (`MetadataRuleManager`, the `rules` API,
 * docs/operations/rule-configuration.md). A rule is stored in Druid's own serialized form (what `GET
 * /druid/coordinator/v1/rules` answers), so the API round-trips byte for byte; evaluation reads the same objects.
 *
 * Matching follows the rule classes of `server/.../coordinator/rules/`:
 * - load and broadcast rules match intervals that overlap theirs (`Rules.eligibleForLoad`); by period, the
 *   window is `[now - period, now]`, and `includeFuture` (default true) also takes everything after its start;
 * - `dropByInterval` matches intervals its interval contains; `dropByPeriod` matches intervals starting at or
 *   after `now - period` (includeFuture) or inside the window; `dropBeforeByPeriod` those ending by `now - period`;
 * - the `*Forever` rules match everything.
 * A rule with a missing `interval` or `period` is accepted (Druid 33 stores it too) but never matches here.
 */
export type RuleJson = Record<string, unknown>;

export const DEFAULT_RULES_KEY = "_default";
export const DEFAULT_TIER = "_default_tier";
/** `DruidServer.DEFAULT_NUM_REPLICANTS`. */
const DEFAULT_REPLICANTS = 2;

const RULE_TYPES = [
  "broadcastByInterval",
  "broadcastByPeriod",
  "broadcastForever",
  "dropBeforeByPeriod",
  "dropByInterval",
  "dropByPeriod",
  "dropForever",
  "loadByInterval",
  "loadByPeriod",
  "loadForever",
] as const;
/**
 * The partial load rules (apache/druid #19374, Druid 38: `PartialLoadRule` and its Forever/Interval/Period
 * subclasses), known to the rule store from 38 on; a Druid before refuses them as unknown type ids (a real Druid 33
 * answered the extensions hint for `loadPartialForever`, and stored nothing).
 */
const PARTIAL_RULE_TYPES = ["loadPartialByInterval", "loadPartialByPeriod", "loadPartialForever"] as const;
/** First release whose rule store knows the partial load rules. */
export const PARTIAL_RULES_SINCE = 38;
type RuleType = (typeof RULE_TYPES)[number] | (typeof PARTIAL_RULE_TYPES)[number];

const CLASS: Record<RuleType, string> = {
  loadForever: "ForeverLoadRule",
  loadByInterval: "IntervalLoadRule",
  loadByPeriod: "PeriodLoadRule",
  dropForever: "ForeverDropRule",
  dropByInterval: "IntervalDropRule",
  dropByPeriod: "PeriodDropRule",
  dropBeforeByPeriod: "PeriodDropBeforeRule",
  broadcastForever: "ForeverBroadcastDistributionRule",
  broadcastByInterval: "IntervalBroadcastDistributionRule",
  broadcastByPeriod: "PeriodBroadcastDistributionRule",
  loadPartialForever: "ForeverPartialLoadRule",
  loadPartialByInterval: "IntervalPartialLoadRule",
  loadPartialByPeriod: "PeriodPartialLoadRule",
};

/** The rule type ids the emulated release's Jackson knows, sorted as its error lists them. */
function knownRuleTypes(druidVersion: number): string[] {
  const types: string[] = [...RULE_TYPES];
  if (druidVersion >= PARTIAL_RULES_SINCE) types.push(...PARTIAL_RULE_TYPES);
  return types.sort();
}

/** `CannotMatchBehavior`: LOAD_ON_DEMAND when absent, and for a value the release does not know (read as default). */
const CANNOT_MATCH = ["LOAD_ON_DEMAND", "FALL_THROUGH", "BASE_LOAD", "FULL_LOAD"];
const PACKAGE = "org.apache.druid.server.coordinator.rules";

/** Druid's default cluster rule (`SQLMetadataRuleManager.createDefaultRule`): two replicas on `_default_tier`. */
export function defaultClusterRules(): RuleJson[] {
  return [
    {
      tieredReplicants: { [DEFAULT_TIER]: DEFAULT_REPLICANTS },
      useDefaultTierForNull: true,
      type: "loadForever",
    },
  ];
}

/** A rule list the API refuses: status and body as a real Druid 33 answered them (docs/real-druid.md). */
export class RulesError extends Error {
  constructor(
    readonly status: number,
    /** `{"error": …}` for Jackson failures; undefined for Druid 33's empty 500. */
    readonly body?: { error: string },
  ) {
    super(body?.error ?? `HTTP ${status}`);
  }
}

const jackson = (message: string) => new RulesError(400, { error: message });

/**
 * Parses a POSTed rule list the way Jackson binds `List<Rule>` and normalizes it to Druid's serialized form
 * (intervals in UTC with millis, periods upper-cased, defaults filled in). Errors carry Druid 33's answers:
 * `null` → 500 with no body (the `IAE` of `overrideRule` is not mapped), an object → 400 "Cannot deserialize
 * value of type `java.util.ArrayList<…Rule>` from Object value", an unknown type → the extensions hint, a
 * negative replica count → `Cannot construct instance of …, problem: Invalid number of replicas …`.
 */
export function parseRules(value: unknown, druidVersion = 33): RuleJson[] {
  if (value === null || value === undefined) throw new RulesError(500);
  if (!Array.isArray(value)) {
    const token =
      typeof value === "object"
        ? "START_OBJECT"
        : typeof value === "string"
          ? "VALUE_STRING"
          : "VALUE_NUMBER_INT";
    throw jackson(
      `Cannot deserialize value of type \`java.util.ArrayList<${PACKAGE}.Rule>\` from ${typeof value === "object" ? "Object" : "String"} value (token \`JsonToken.${token}\`)`,
    );
  }
  return value.map((raw, index) =>
    raw === null ? (null as unknown as RuleJson) : parseRule(raw, index, druidVersion),
  );
}

function parseRule(raw: unknown, index: number, druidVersion: number): RuleJson {
  if (typeof raw !== "object" || Array.isArray(raw) || typeof (raw as RuleJson).type !== "string") {
    throw jackson(
      `Could not resolve subtype of [simple type, class ${PACKAGE}.Rule]: missing type id property 'type'`,
    );
  }
  const r = raw as RuleJson;
  const type = r.type as string;
  const known = knownRuleTypes(druidVersion);
  if (!known.includes(type)) {
    throw jackson(
      `Please make sure to load all the necessary extensions and jars with type '${type}' on 'druid/coordinator' service. Could not resolve type id '${type}' as a subtype of \`${PACKAGE}.Rule\` known type ids = [${known.join(", ")}]`,
    );
  }
  const t = type as RuleType;
  const chain = (field: string) =>
    `(through reference chain: java.util.ArrayList[${index}]->${PACKAGE}.${CLASS[t]}["${field}"])`;
  const interval = () => {
    if (r.interval === undefined || r.interval === null) return null;
    const text = String(r.interval);
    if (!text.includes("/"))
      throw jackson(
        `Invalid interval[${text}]: [Format requires a '/' separator: ${text}] ${chain("interval")}`,
      );
    try {
      return intervalText(parseInterval(text));
    } catch {
      throw jackson(`Invalid format: "${text}" ${chain("interval")}`);
    }
  };
  const period = () => {
    if (r.period === undefined || r.period === null) return null;
    const text = String(r.period).toUpperCase();
    const d = Duration.fromISO(text);
    if (!d.isValid) throw jackson(`Invalid format: "${String(r.period)}" ${chain("period")}`);
    return text;
  };
  const includeFuture = () =>
    r.includeFuture === undefined || r.includeFuture === null
      ? true
      : r.includeFuture === true || r.includeFuture === "true";
  const load = () => {
    const useDefault = !(r.useDefaultTierForNull === false || r.useDefaultTierForNull === "false");
    let tiers: Record<string, unknown>;
    if (r.tieredReplicants === undefined || r.tieredReplicants === null) {
      tiers = useDefault ? { [DEFAULT_TIER]: DEFAULT_REPLICANTS } : {};
    } else if (typeof r.tieredReplicants !== "object" || Array.isArray(r.tieredReplicants)) {
      throw jackson(
        `Cannot deserialize value of type \`java.util.LinkedHashMap<java.lang.String,java.lang.Integer>\` from ${Array.isArray(r.tieredReplicants) ? "Array" : "String"} value ${chain("tieredReplicants")}`,
      );
    } else {
      tiers = {};
      for (const [tier, n] of Object.entries(r.tieredReplicants as Record<string, unknown>)) {
        if (n === null) {
          throw jackson(
            `Cannot construct instance of \`${PACKAGE}.${CLASS[t]}\`, problem: Invalid number of replicas for tier [${tier}]. Value must not be null.`,
          );
        }
        const count = typeof n === "number" ? n : Number(n);
        if (!Number.isInteger(count)) {
          throw jackson(
            `Cannot deserialize value of type \`int\` from String "${String(n)}": not a valid \`int\` value`,
          );
        }
        if (count < 0) {
          throw jackson(
            `Cannot construct instance of \`${PACKAGE}.${CLASS[t]}\`, problem: Invalid number of replicas for tier [${tier}]. Value [${count}] must be positive.`,
          );
        }
        tiers[tier] = count;
      }
    }
    return { tieredReplicants: tiers, useDefaultTierForNull: useDefault };
  };
  // `PartialLoadRule`: a matcher is required (`InvalidInput`: "matcher must not be null for a partial load rule");
  // `onCannotMatch` defaults to LOAD_ON_DEMAND, an unknown value included. Field order after the load rule's own is
  // not verified against a running 38.
  const partial = () => {
    if (typeof r.matcher !== "object" || r.matcher === null || Array.isArray(r.matcher)) {
      throw jackson(
        `Cannot construct instance of \`${PACKAGE}.${CLASS[t]}\`, problem: matcher must not be null for a partial load rule`,
      );
    }
    const behaviour = String(r.onCannotMatch ?? "").toUpperCase();
    return {
      matcher: r.matcher,
      onCannotMatch: CANNOT_MATCH.includes(behaviour) ? behaviour : "LOAD_ON_DEMAND",
    };
  };
  // Field order as Druid 33 serializes each rule (docs/real-druid.md, "Load rules").
  switch (t) {
    case "loadPartialForever":
      return { ...load(), ...partial(), type: t };
    case "loadPartialByInterval":
      return { interval: interval(), ...load(), ...partial(), type: t };
    case "loadPartialByPeriod":
      return { period: period(), includeFuture: includeFuture(), ...load(), ...partial(), type: t };
    case "loadForever":
      return { ...load(), type: t };
    case "loadByInterval":
      return { interval: interval(), ...load(), type: t };
    case "loadByPeriod":
      return { period: period(), includeFuture: includeFuture(), ...load(), type: t };
    case "dropByPeriod":
    case "broadcastByPeriod":
      return { period: period(), includeFuture: includeFuture(), type: t };
    case "dropBeforeByPeriod":
      return { period: period(), type: t };
    case "dropByInterval":
    case "broadcastByInterval":
      return { interval: interval(), type: t };
    default:
      return { type: t };
  }
}

export type RuleKind = "load" | "drop" | "broadcast";

export function ruleKind(rule: RuleJson): RuleKind {
  const type = String(rule.type);
  return type.startsWith("load") ? "load" : type.startsWith("drop") ? "drop" : "broadcast";
}

/** `new Interval(period, now)`: the window `[now - period, now]`, calendar-aware in UTC (Joda). */
function window(rule: RuleJson, now: number): Interval | null {
  if (typeof rule.period !== "string") return null;
  const start = DateTime.fromMillis(now, { zone: "utc" }).minus(Duration.fromISO(rule.period)).toMillis();
  return { start, end: now };
}

/**
 * Whether a partial load rule's matcher passes the segment on (`PartialLoadRule.appliesTo`): only with
 * `onCannotMatch: FALL_THROUGH` and a matcher that cannot match. A projection matcher always applies (no matching
 * projection is a base-table load, `PartialLoadRuleTest`); the emulator reads no other matcher, so it takes any other
 * as not matching.
 */
function fallsThrough(rule: RuleJson): boolean {
  if (!String(rule.type).startsWith("loadPartial") || rule.onCannotMatch !== "FALL_THROUGH") return false;
  const matcher = rule.matcher as { type?: unknown } | null | undefined;
  return !/projection/i.test(String(matcher?.type ?? ""));
}

/** `Rule.appliesTo(segment, now)` for the rule classes listed above. */
export function ruleApplies(rule: RuleJson | null, interval: Interval, now: number): boolean {
  if (!rule) return false;
  if (fallsThrough(rule)) return false;
  const type = String(rule.type) as RuleType;
  if (type.endsWith("Forever")) return true;
  if (type.endsWith("ByInterval")) {
    if (typeof rule.interval !== "string") return false;
    const r = parseInterval(rule.interval);
    return type === "dropByInterval"
      ? r.start <= interval.start && interval.end <= r.end
      : r.start < interval.end && interval.start < r.end;
  }
  const w = window(rule, now);
  if (!w) return false;
  if (type === "dropBeforeByPeriod") return interval.end <= w.start;
  if (type === "dropByPeriod") {
    return rule.includeFuture !== false
      ? w.start <= interval.start
      : w.start <= interval.start && interval.end <= w.end;
  }
  // loadByPeriod, broadcastByPeriod
  return rule.includeFuture !== false
    ? w.start < interval.end
    : w.start < interval.end && interval.start < w.end;
}

/**
 * The instants after which a period rule's verdict on `interval` may change (the window's start crossing the
 * interval's bounds); interval and forever rules never change. Used to find when a drop rule started to apply.
 */
export function ruleBoundaries(rule: RuleJson | null, interval: Interval): number[] {
  if (!rule || typeof rule.period !== "string") return [];
  const d = Duration.fromISO(rule.period);
  const plus = (ms: number) => DateTime.fromMillis(ms, { zone: "utc" }).plus(d).toMillis();
  return [interval.start, interval.end, plus(interval.start), plus(interval.end)];
}

/** `tieredReplicants` of a load rule (empty for other kinds). */
export function tieredReplicants(rule: RuleJson): Record<string, number> {
  const tiers = rule.tieredReplicants;
  return tiers && typeof tiers === "object" ? (tiers as Record<string, number>) : {};
}
