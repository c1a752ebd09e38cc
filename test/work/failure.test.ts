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

describe("a revoked lock is retry-later on every release (apache/druid #18182: from 34 the task fails at once)", () => {
  it.each([
    "Lock for interval [2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z] was revoked.",
    "Lock was revoked.",
    "org.apache.druid.java.util.common.ISE: Some locks for task[index_parallel_wiki] are already revoked",
    "Task[index_parallel_wiki] cannot perform action[segmentTransactionalReplace]: its locks have been revoked",
    "InsertLockPreempted: Insert lock preempted while trying to ingest the data.",
  ])("classifies %j as lock-revoked, not deterministic", (message) => {
    expect(classifyTaskFailure(message)).toEqual({ name: "lock-revoked", deterministic: false });
  });

  it("never counts a revoked attempt toward the poison rule", () => {
    const revoked = "Lock for interval [2026-01-01/2026-01-02] was revoked.";
    expect(isPoisoned([failure(1, revoked), failure(2, revoked), failure(3, revoked)], 3)).toBe(false);
    expect(isPoisoned([failure(1, revoked)], 1)).toBe(false);
  });

  it("does not take a message about something else for a revoked lock", () => {
    expect(classifyTaskFailure("Max parse exceptions[0] exceeded").name).toBe("parse-exceptions");
    expect(classifyTaskFailure("token revoked by the identity provider").name).not.toBe("lock-revoked");
  });
});
