import { CLONES_SINCE } from "./coordinator.js";
import { EMBEDDED_KILL_SINCE } from "./embedded-kill.js";
import { VIRTUAL_STORAGE_SINCE } from "./options.js";
import { PARTIAL_RULES_SINCE } from "./rules.js";
import type { VersionTraits } from "./versions.js";

/**
 * What `segops sim --druid-version <n>` (`startSim({ druidVersion })`) switches, one row per behaviour: the
 * releases it holds on and what the emulator then does. docs/emulator.md's table is this list, word for word
 * (test/sim/version-profile.test.ts holds them together); a row that is a `versionTraits` field names it, so the
 * test also holds the row's releases to the trait.
 */
export interface EmulatedBehaviour {
  readonly key: string;
  /** First release with the behaviour. */
  readonly since?: number;
  /** Last release with it. */
  readonly until?: number;
  readonly what: string;
  /** The `versionTraits` field that switches it, when one does. */
  readonly trait?: keyof VersionTraits;
  /** Only when the emulator is started with this option (a cluster setting, not the release's default). */
  readonly optIn?: string;
}

export const EMULATED_BEHAVIOURS: readonly EmulatedBehaviour[] = [
  {
    key: "status",
    what: "`GET /status` answers `<n>.0.0`: what segops' capabilities read",
  },
  {
    key: "bareNullMessages",
    until: 33,
    trait: "bareNullMessages",
    what: "a missing `timestampSpec` is refused as `problem: timestampSpec` (later: `… must not be null`)",
  },
  {
    key: "taskIdCheckedByConstructor",
    until: 33,
    trait: "taskIdCheckedByConstructor",
    what: "a bad task id is a Jackson `{error}` from the task's constructor (later: `TaskQueue.add`'s `invalidInput`)",
  },
  {
    key: "emptyLoadStatusIs200",
    until: 33,
    trait: "emptyLoadStatusIs200",
    what: "loadstatus of an interval without used segments is 200 with a text (later: 204)",
  },
  {
    key: "sqlResultsLabelledJson",
    until: 33,
    trait: "sqlResultsLabelledJson",
    what: "SQL results of every format are labelled `application/json`",
  },
  {
    key: "taskLimits",
    since: 33,
    what: "the worker select strategy's `taskLimits` keep a task over its type's limit PENDING; `GET /druid/indexer/v1/worker` answers the config",
  },
  {
    key: "tombstoneCorePartitions",
    since: 34,
    trait: "tombstoneCorePartitions",
    what: "a tombstone's shardSpec has `partitions: 1` (0 before)",
  },
  {
    key: "sysSegmentsProjections",
    since: 34,
    trait: "sysSegmentsProjections",
    what: "`sys.segments` has a `projections` column",
  },
  {
    key: "sqlSetStatements",
    since: 34,
    what: "SQL may open with `SET` statements (before: refused as several statements)",
  },
  {
    key: "thrownAwayByReason",
    since: 34,
    what: "task reports' row stats carry `thrownAwayByReason`",
  },
  {
    key: "cloneServers",
    since: CLONES_SINCE,
    what: "the Coordinator dynamic config has `cloneServers`; a clone of the Historical is listed beside it in the serverview, and keeps what it held when the Historical stops (`POST /__sim/historical/stop`); Brokers do not query it",
  },
  {
    key: "embeddedKill",
    since: EMBEDDED_KILL_SINCE,
    what: "with `druid.manager.segments.killUnused.enabled` in `runtimeProperties`, the Overlord deletes unused segments past `…bufferPeriod` (P30D)",
  },
  {
    key: "virtualStorage",
    since: VIRTUAL_STORAGE_SINCE,
    optIn: "virtualStorage",
    what: "a virtual storage Historical: segments announced when assigned, loaded when queried; `/status/properties` says `druid.segmentCache.virtualStorage=true`",
  },
  {
    key: "totalRows",
    since: 37,
    what: "a DataSegment's JSON carries `totalRows`",
  },
  {
    key: "parserRemoved",
    since: 37,
    trait: "parserRemoved",
    what: "a dataSchema's `parser` is refused by the DataSchema (`parser was removed in Druid 37, …`); before, by the ingestion spec beside an `inputSource` (`Cannot use parser and inputSource together. …`, as a real 33 answered)",
  },
  {
    key: "hadoopRemoved",
    since: 37,
    what: "`index_hadoop` and `index_sub` leave the known type ids an unknown type's refusal lists (the emulator runs no Hadoop task: it refuses `index_hadoop` on every release, where a real 33 constructs a `HadoopIndexTask`)",
  },
  {
    key: "workerDisabledField",
    since: 38,
    trait: "workerDisabledField",
    what: '`/workers` lists a disabled worker with `disabled: true` and its version (before: version `""`)',
  },
  {
    key: "partialLoadRules",
    since: PARTIAL_RULES_SINCE,
    what: "the rules API takes `loadPartialForever`, `loadPartialByInterval`, `loadPartialByPeriod` (a matcher required; `onCannotMatch`) and loads what they match; before, refused as unknown types",
  },
  {
    key: "compactionSkipIntervals",
    since: 39,
    what: "a datasource's auto-compaction config keeps `skipIntervals`, and the compaction duty never picks them (before: the field is dropped)",
  },
  {
    key: "compactionSupervisors",
    what: "`POST /druid/indexer/v1/supervisor` takes `autocompact` supervisors; while the cluster compaction config (`POST /druid/indexer/v1/compaction/config/cluster`) says `useSupervisors` they compact instead of the Coordinator's duty (off by default on every release)",
  },
  {
    key: "msqCompaction",
    what: "a compaction with `compactionRunner: {type: msq}` is its own controller: a second after it starts it launches `maxNumTasks - 1` `query_worker` tasks, a slot each, and works once they all run",
  },
  {
    key: "autoCompactionTaskIds",
    since: 37,
    what: "automatic compaction tasks are `auto_compact_…` (before: `coordinator-issued_compact_…`)",
  },
];

/** Whether a behaviour holds on release `n`. */
export function behaviourApplies(b: EmulatedBehaviour, n: number): boolean {
  return (b.since === undefined || n >= b.since) && (b.until === undefined || n <= b.until);
}

function releases(b: EmulatedBehaviour): string {
  if (b.since !== undefined && b.until !== undefined) return `${b.since} to ${b.until}`;
  if (b.since !== undefined) return `${b.since} and newer${b.optIn ? ` (opt-in: \`${b.optIn}\`)` : ""}`;
  if (b.until !== undefined) return `up to ${b.until}`;
  return "every release";
}

/** The Markdown table docs/emulator.md shows, generated from {@link EMULATED_BEHAVIOURS}. */
export function emulatedBehavioursTable(): string {
  const lines = ["| releases | what the emulator does |", "| --- | --- |"];
  for (const b of EMULATED_BEHAVIOURS) lines.push(`| ${releases(b)} | ${b.what} |`);
  return lines.join("\n");
}
