import { describe, expect, it } from "vitest";
import { lostItsLock } from "../../src/ops/kill/lock-lost.js";
import { lockRevokedMessage } from "../../src/sim/lockbox.js";

/**
 * Which FAILED kill tasks lost their lock to another writer (tried again in a new attempt) and which failed
 * otherwise (end the partition): on the messages Druid's kill task and its actions report (their shapes as
 * apache/druid formats them; ids and segments shortened), wrapped as task statuses carry them.
 */

const TASK = "segops_kill_wiki_20260101_0123456789";
const SEGMENT = "wiki_2026-01-01T00:00:00.000Z_2026-01-02T00:00:00.000Z_2025-12-31T00:00:00.000Z";
const LOCK =
  "TimeChunkLock{type=EXCLUSIVE, groupId='index_parallel_wiki', dataSource='wiki', interval=2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z, version='2026-01-02T10:00:00.000Z', priority=50, revoked=false}";

describe("lostItsLock", () => {
  it.each([
    [
      "the emulator's revoked lock",
      lockRevokedMessage({
        groupId: TASK,
        taskId: TASK,
        dataSource: "wiki",
        interval: { start: Date.UTC(2026, 0, 1), end: Date.UTC(2026, 0, 2) },
        priority: 0,
        version: "2026-01-02T00:00:00.000Z",
      }),
    ],
    // KillUnusedSegmentsTask#runTask: its locks read without the revoked one no longer cover the batch.
    [
      "the kill task's own check, its revoked lock left out",
      `org.apache.druid.java.util.common.ISE: Locks[[]] for task[${TASK}] can't cover segments[[${SEGMENT}]]`,
    ],
    // SegmentNukeAction → TaskLocks#checkLockCoversSegments.
    [
      "the delete action's lock check",
      `java.lang.RuntimeException: org.apache.druid.java.util.common.ISE: Segments[[${SEGMENT}]] are not covered by locks[[]] for task[${TASK}]`,
    ],
    // SegmentNukeAction's critical section on invalid locks.
    [
      "the delete action's critical section",
      `java.lang.RuntimeException: org.apache.druid.java.util.common.ISE: Some locks for task[${TASK}] are already revoked`,
    ],
    // AbstractBatchIndexTask#tryTimeChunkLock, reported while the task waited to be ready.
    [
      "a lock found revoked before the task ran",
      "Encountered error[Lock for interval [2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z] was revoked.] while waiting for task to be ready. See Overlord logs for more details.",
    ],
    [
      "a lock another writer held",
      "Cannot acquire a lock for interval[2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z]",
    ],
  ])("is true for %s", (_what, errorMsg) => {
    expect(lostItsLock(errorMsg)).toBe(true);
  });

  it.each([
    ["no message", null],
    ["an empty message", ""],
    ["a deep-storage failure", `java.io.IOException: Failed to delete ${SEGMENT} from deep storage`],
    ["an operator's shutdown", "Shutdown request from user"],
    [
      "a refused spec",
      "Cannot construct instance of `KillUnusedSegmentsTask`, problem: batchSize[0] must be a positive integer.",
    ],
    ["a lost worker", "Task [kill] failed to run on worker"],
    // A lock named in a message is not a lost lock: another writer's lock, not revoked.
    ["a message naming a live lock", `Task is waiting behind ${LOCK}`],
  ])("is false for %s", (_what, errorMsg) => {
    expect(lostItsLock(errorMsg)).toBe(false);
  });
});
