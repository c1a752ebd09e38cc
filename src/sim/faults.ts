import type { Rng } from "./rng.js";

/**
 * Fault injection (the rule shape agreed with the client helper; keep it exactly). Rules are checked in order;
 * the first rule matching a request (path prefix, method, rate draw, remaining count) decides its fate.
 * `/status/health` and `/__sim/*` are never faulted.
 */
export interface FaultRule {
  /** Path prefix the rule applies to (e.g. `/druid/indexer/v1/task`); all paths when absent. */
  path?: string;
  /** HTTP method (any when absent). */
  method?: string;
  /** `status`: answer `status` with Druid's body; `reset`: destroy the socket; `latency`: delay, then serve;
   * `failover`: 307 to the same URL (the "new leader" is this server); `noLeader`: 503 empty. */
  kind: "status" | "reset" | "latency" | "failover" | "noLeader";
  status?: 500 | 502 | 503 | 429;
  /** Probability 0..1 that a matching request is faulted (seeded RNG); 1 when absent. */
  rate?: number;
  /** Fault at most this many matching requests. */
  count?: number;
  /** Real milliseconds of added latency (keep small). */
  latencyMs?: number;
}

export type FaultDecision = { rule: FaultRule } | null;

export class FaultInjector {
  #rules: Array<{ rule: FaultRule; used: number }> = [];

  constructor(
    rules: FaultRule[],
    readonly rng: Rng,
  ) {
    this.set(rules);
  }

  set(rules: FaultRule[]): void {
    for (const r of rules) validateRule(r);
    this.#rules = rules.map((rule) => ({ rule, used: 0 }));
  }

  rules(): FaultRule[] {
    return this.#rules.map((r) => r.rule);
  }

  decide(method: string, path: string): FaultDecision {
    if (path === "/status/health" || path.startsWith("/__sim/")) return null;
    for (const entry of this.#rules) {
      const { rule } = entry;
      if (rule.path !== undefined && !path.startsWith(rule.path)) continue;
      if (rule.method !== undefined && rule.method.toUpperCase() !== method.toUpperCase()) continue;
      if (rule.count !== undefined && entry.used >= rule.count) continue;
      if (rule.rate !== undefined && this.rng.next() >= rule.rate) continue;
      entry.used++;
      return { rule };
    }
    return null;
  }
}

const KINDS = new Set(["status", "reset", "latency", "failover", "noLeader"]);

/** Eager validation with a precise message (style guide: p-queue's option checks). */
export function validateRule(rule: FaultRule): void {
  const where = JSON.stringify(rule);
  if (!KINDS.has(rule.kind)) {
    throw new TypeError(
      `Expected fault \`kind\` to be one of status, reset, latency, failover, noLeader, got ${where}`,
    );
  }
  if (rule.kind === "status" && ![500, 502, 503, 429].includes(rule.status as number)) {
    throw new TypeError(
      `Expected fault \`status\` to be 500, 502, 503 or 429 for kind "status", got ${where}`,
    );
  }
  if (rule.rate !== undefined && !(rule.rate >= 0 && rule.rate <= 1)) {
    throw new TypeError(`Expected fault \`rate\` to be a number from 0 to 1, got ${where}`);
  }
  if (rule.count !== undefined && !(Number.isInteger(rule.count) && rule.count >= 0)) {
    throw new TypeError(`Expected fault \`count\` to be a whole number from 0 and up, got ${where}`);
  }
  if (rule.kind === "latency" && !(typeof rule.latencyMs === "number" && rule.latencyMs >= 0)) {
    throw new TypeError(
      `Expected fault \`latencyMs\` to be a number from 0 and up for kind "latency", got ${where}`,
    );
  }
}
