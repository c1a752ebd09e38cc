import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  behaviourApplies,
  EMULATED_BEHAVIOURS,
  emulatedBehavioursTable,
} from "../../src/sim/version-profile.js";
import { versionTraits } from "../../src/sim/versions.js";

/** `segops sim --druid-version`: docs/emulator.md lists what each release switches, generated from the code's list. */
describe("the emulator's release profiles", () => {
  it("covers every field of versionTraits, each with the releases the trait holds on", () => {
    const traits = Object.keys(versionTraits(38));
    const covered = EMULATED_BEHAVIOURS.flatMap((b) => (b.trait ? [b.trait] : []));
    expect(new Set(covered)).toEqual(new Set(traits));
    for (const b of EMULATED_BEHAVIOURS) {
      if (!b.trait) continue;
      for (let n = 30; n <= 41; n++)
        expect([b.key, n, Boolean(versionTraits(n)[b.trait])]).toEqual([b.key, n, behaviourApplies(b, n)]);
    }
  });

  it("is documented in docs/emulator.md word for word", () => {
    const doc = readFileSync(new URL("../../docs/emulator.md", import.meta.url), "utf8");
    const table = emulatedBehavioursTable();
    expect(doc).toContain(table);
    expect(table.split("\n")).toHaveLength(EMULATED_BEHAVIOURS.length + 2);
  });
});
