import { describe, expect, it } from "vitest";
import { parseInterval } from "../../src/core/interval.js";
import { neverLoaded, ruleFor } from "../../src/work/load-rules.js";

/**
 * Tier aliases (apache/druid #19204: the Coordinator dynamic config names an alias for physical Historical tiers, and
 * load rules may name the alias in `tieredReplicants`). segops does not read the alias map: a load rule asking for
 * replicas on any tier name loads, so the handoff gate never calls an aliased interval "never loaded"; whether the
 * alias reaches a Historical (#20063: rules naming an alias the Coordinator does not know yet drop replicas) is what
 * the served view then shows.
 */
describe("load rules naming a tier alias", () => {
  const DAY = parseInterval("2026-01-01/2026-01-02");
  const NOW = Date.UTC(2026, 2, 1);

  it("count as loading, so the gate waits on the served view instead of refusing", () => {
    const rules = [{ type: "loadForever", tieredReplicants: { hot: 2 } }];
    expect(ruleFor(rules, DAY, NOW)).toMatchObject({ loads: true });
    expect(neverLoaded(rules, [DAY], NOW)).toBeNull();
  });

  it("still read an alias with no replicas as not loading", () => {
    const rules = [{ type: "loadForever", tieredReplicants: { hot: 0 } }];
    expect(neverLoaded(rules, [DAY], NOW)).toMatch(/which does not load it$/);
  });
});
