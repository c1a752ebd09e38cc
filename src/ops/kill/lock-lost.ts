/**
 * Druid's words for a task that lost its time-chunk lock to another writer, or could not get it, in the
 * messages a FAILED kill task reports (Druid 33). Each is matched anywhere in `errorMsg`: Druid wraps them
 * (`org.apache.druid.java.util.common.ISE: …`, `Encountered error[…] while waiting for task to be ready`).
 */
const LOCK_LOST: readonly RegExp[] = [
  // The emulator's revoked lock, and the words segops' failure classes already know (work/failure.ts).
  /lock revoked/i,
  // AbstractBatchIndexTask#tryTimeChunkLock: "Lock for interval [%s] was revoked."; TaskLockbox's segment
  // allocation: "Lock was revoked."; SegmentNukeAction (the kill's delete) on invalid locks:
  // "Some locks for task[%s] are already revoked".
  /lock for interval \[[^\]]*\] was revoked|lock was revoked|locks for task\[[^\]]*\] are already revoked/i,
  // KillUnusedSegmentsTask#runTask reads its locks without the revoked ones before each batch:
  // "Locks[%s] for task[%s] can't cover segments[%s]".
  /locks\[.*\] for task\[[^\]]*\] can't cover segments\[/i,
  // TaskLocks#checkLockCoversSegments, called by SegmentNukeAction:
  // "Segments[%s] are not covered by locks[%s] for task[%s]".
  /segments\[.*\] are not covered by locks\[/i,
  // A lock another writer holds at allocation time: "Cannot acquire a lock for interval[%s]".
  /cannot acquire a lock for interval/i,
];

/**
 * Whether a FAILED kill task failed because another writer took its lock (or held the chunk so it got
 * none): Druid runs kill tasks at priority 0, so any ingestion (50) or compaction (25) of the chunk that
 * segops' chunk key does not hold off (another ledger's, another tool's) revokes it. Such a kill deleted
 * nothing that was not meant to go and can be submitted again under a new attempt id; any other failure is
 * not retried blindly. Pure.
 *
 * Sources (apache/druid, indexing-service): `KillUnusedSegmentsTask#runTask`, `TaskLocks`,
 * `SegmentNukeAction#perform`, `AbstractBatchIndexTask#tryTimeChunkLock`, `TaskLockbox`.
 *
 * @example lostItsLock("Lock revoked: [TimeChunkLock{…, revoked=true}]") // true
 * @example lostItsLock("org.apache.druid.java.util.common.ISE: Locks[[]] for task[k] can't cover segments[[…]]") // true
 * @example lostItsLock("java.lang.OutOfMemoryError: Java heap space") // false
 */
export function lostItsLock(errorMsg: string | null | undefined): boolean {
  if (!errorMsg) return false;
  return LOCK_LOST.some((pattern) => pattern.test(errorMsg));
}
