/**
 * Wire details that depend on the emulated Druid release (`druidVersion`). docs/druid-api.md was written from
 * current Druid sources; a real Druid 33.0.0 answered differently in the cases below (docs/real-druid.md,
 * "Observed on Druid 33.0.0" and the conformance table). The emulator follows 33 up to and including 33 and the
 * contract from 34 on; which release between 34 and the contract's made each change is not verified, except where
 * a trait names the Druid change and its release.
 */
export interface VersionTraits {
  /** `Preconditions.checkNotNull(x, "x")` messages are the bare field name (`problem: timestampSpec`). */
  bareNullMessages: boolean;
  /**
   * A task id is checked by the task's constructor, so a bad one is a Jackson `{"error"}` naming the task class
   * and the field `task ID`, not `TaskQueue.add`'s `invalidInput` ErrorResponse (docs/druid-api.md §2.2).
   */
  taskIdCheckedByConstructor: boolean;
  /** loadstatus of an interval without used segments: 200 with the text (33) instead of 204 (§3.3). */
  emptyLoadStatusIs200: boolean;
  /** A tombstone's shardSpec `partitions` (33: 0; §3.5: 1). */
  tombstoneCorePartitions: 0 | 1;
  /** `sys.segments` has a `projections` column (absent in 33; §3.6). */
  sysSegmentsProjections: boolean;
  /**
   * `/workers` entries carry `worker.disabled`, and a disabled worker keeps its version; before, a disabled worker
   * is announced with version `""` and no flag (§2.9). From 38 on: apache/druid #19448 (`Worker`, `WorkerHolder`);
   * absent in 33 (observed), and in 34–37 by that change's date. segops' own table says the same
   * (src/druid/capabilities.ts, `workerDisabledFlag`; test/sim/versions.test.ts holds the two together).
   */
  workerDisabledField: boolean;
  /**
   * Broker SQL labels every result format `application/json`, `*Lines` and `csv` included (a real Druid 33 did);
   * from 34 on the emulator answers `text/plain` and `text/csv` (the release that changed it is not verified).
   */
  sqlResultsLabelledJson: boolean;
  /**
   * A dataSchema's `parser` is refused by the DataSchema itself, gone from Druid (apache/druid #19173, Druid 37).
   * Before, a DataSchema took one and the ingestion spec refused it beside an `inputSource` (a real 33 answered
   * `…ParallelIndexIngestionSpec`, problem: Cannot use parser and inputSource together. Try using inputFormat
   * instead of parser.`).
   */
  parserRemoved: boolean;
}

export function versionTraits(druidVersion: number): VersionTraits {
  const upTo33 = druidVersion <= 33;
  return {
    bareNullMessages: upTo33,
    taskIdCheckedByConstructor: upTo33,
    emptyLoadStatusIs200: upTo33,
    tombstoneCorePartitions: upTo33 ? 0 : 1,
    sysSegmentsProjections: !upTo33,
    workerDisabledField: druidVersion >= 38,
    sqlResultsLabelledJson: upTo33,
    parserRemoved: druidVersion >= 37,
  };
}
