import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { KINDS } from "../../src/jobs/kinds.js";
import { registeredCommands } from "../../src/jobs/registry.js";

/**
 * Each registry entry names its kind's command twice, for a reason: through the kind (its request's
 * command) and alone, which `segops --help` loads without loading any kind. The two must be the same
 * object, and each flag must fill a field the request takes.
 */
describe("the kinds' commands", () => {
  it("the commands loaded alone are the ones the registry's kinds declare, in the same order", async () => {
    const declared = KINDS.flatMap((k) => k.request?.command ?? []);
    expect(declared.map((c) => c.name)).toEqual(["rollback", "kill", "compact"]);
    const alone = await registeredCommands();
    expect(alone).toHaveLength(declared.length);
    for (const [i, command] of declared.entries()) expect(alone[i]).toBe(command);
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
