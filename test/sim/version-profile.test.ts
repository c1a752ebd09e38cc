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
    expect(table.split("\n")).toHaveLength(EMULATED_BEHAVIOURS.length + 2);
    // Cell by cell: the formatter (biome) pads a markdown table's columns to one width.
    const cells = (line: string) => line.split("|").map((c) => c.trim().replace(/^-+$/, "-"));
    const docLines = doc
      .split("\n")
      .map(cells)
      .map((c) => c.join("|"));
    const tableLines = table
      .split("\n")
      .map(cells)
      .map((c) => c.join("|"));
    const at = docLines.indexOf(tableLines[0] as string);
    expect(at, "the table's header row in docs/emulator.md").toBeGreaterThanOrEqual(0);
    expect(docLines.slice(at, at + tableLines.length)).toEqual(tableLines);
  });
});
