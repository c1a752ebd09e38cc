import { describe, expect, it } from "vitest";
import { type AttemptFailure, classifyTaskFailure, isPoisoned } from "../../src/work/failure.js";

const failure = (attempt: number, msg: string): AttemptFailure => {
  const c = classifyTaskFailure(msg);
  return {
    attempt,
    taskId: `t_a${attempt}`,
    failureClass: c.name,
    deterministic: c.deterministic,
    errorMsg: msg,
  };
};

describe("task failure classes", () => {
  it("tells deterministic input problems from infrastructure trouble", () => {
    expect(classifyTaskFailure("Max parse exceptions[0] exceeded")).toEqual({
      name: "parse-exceptions",
      deterministic: true,
    });
    expect(classifyTaskFailure("Shutdown request from user").deterministic).toBe(false);
    expect(classifyTaskFailure('Lock revoked: [TimeChunkLock{dataSource="wiki"}]').name).toBe("lock-revoked");
    expect(classifyTaskFailure("Failed in phase[segment generation]. See task logs for details.").name).toBe(
      "phase-failure",
    );
  });

  it("poisons after N same-class deterministic failures in a row, not after transient ones", () => {
    const parse = "Max parse exceptions[0] exceeded";
    expect(isPoisoned([failure(1, parse), failure(2, parse)], 3)).toBe(false);
    expect(isPoisoned([failure(1, parse), failure(2, parse), failure(3, parse)], 3)).toBe(true);
    expect(
      isPoisoned([failure(1, "Lock revoked"), failure(2, "Lock revoked"), failure(3, "Lock revoked")], 3),
    ).toBe(false);
    expect(isPoisoned([failure(1, parse), failure(2, "Lock revoked"), failure(3, parse)], 3)).toBe(false);
  });
});
