import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { KINDS } from "../../src/jobs/kinds.js";
import { KIND_COMMANDS } from "../../src/ops/commands.js";

/**
 * The kinds' commands are listed twice, for a reason: in the registry (each kind's request names its
 * command) and in the light list `segops --help` reads without loading any kind. The two must agree, and
 * each flag must fill a field the request takes.
 */
describe("the kinds' commands", () => {
  it("the light list is the commands the registry's kinds declare, in the same order", () => {
    const declared = KINDS.flatMap((k) => k.request?.command ?? []);
    expect(declared.map((c) => c.name)).toEqual(["rollback", "kill", "compact"]);
    expect(KIND_COMMANDS).toHaveLength(declared.length);
    for (const [i, command] of declared.entries()) expect(KIND_COMMANDS[i]).toBe(command);
  });

  it("each flag fills a field of its kind's request body; exactly-one groups name its flags", () => {
    for (const kind of KINDS) {
      const request = kind.request;
      if (!request?.command) continue;
      const fields = Object.keys((request.schema as unknown as z.ZodObject).shape);
      const longNames = request.command.flags.map((f) => f.flag.split(" ")[0]);
      for (const flag of request.command.flags) expect(fields, flag.flag).toContain(flag.field);
      for (const group of request.command.exactlyOne ?? [])
        for (const name of group) expect(longNames, name).toContain(name);
    }
  });
});
