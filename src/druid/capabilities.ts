/**
 * What segops knows about the Druid releases teams run (33 to 39): one row per behaviour that changed between
 * them, each with the release it starts or ends at and the Druid source that says so (docs/druid-versions.md).
 * Pure: the client reads the version once (`DruidClient.capabilities`) and every part that depends on it — the
 * admission control, later the validator and the handoff gate — asks the answer, never the version itself.
 */

/** The oldest release segops is held to (the conformance suite runs a real Druid 33.0.0). */
export const OLDEST_SUPPORTED_MAJOR = 33;
/** The newest release whose behaviour segops knows; a newer one is treated as this one, with a warning. */
export const NEWEST_KNOWN_MAJOR = 39;

/** The behaviours that differ between releases (one row of {@link CAPABILITY_ROWS} each). */
export interface DruidCapabilityFlags {
  /**
   * Worker select strategies carry `taskLimits` (`maxSlotCountByType`, `maxSlotRatioByType`) in the Overlord's
   * dynamic worker config, and the Overlord keeps a task PENDING while its type is at its limit.
   */
  readonly taskLimits: boolean;
  /**
   * `GET /druid/indexer/v1/workers` marks a disabled MiddleManager or Indexer with `worker.disabled: true` and
   * keeps its real version. Before, a disabled worker is announced with `worker.version: ""` and no flag.
   */
  readonly workerDisabledFlag: boolean;
  /**
   * An HTTP SQL request may open with `SET key = value;` statements that build its query context, and they take
   * precedence over the request's own context. Before, a query with them is several statements and is refused.
   */
  readonly sqlSetStatements: boolean;
  /**
   * A task action of a task whose lock was revoked fails at once (a `forbidden` DruidException the task action
   * client does not retry), so the task FAILS soon after another writer takes its interval.
   */
  readonly lockRevokedFailsFast: boolean;
  /** Native expressions have `now()` (the wall clock, per row, at ingestion): a template using it is not idempotent. */
  readonly nowExpression: boolean;
  /**
   * A datasource's auto-compaction config carries `skipIntervals`: intervals the Coordinator (or the compaction
   * supervisor) never picks for compaction.
   */
  readonly compactionSkipIntervals: boolean;
  /**
   * Retention rules `loadPartialForever`, `loadPartialByInterval`, `loadPartialByPeriod`: load part of a segment
   * on a virtual storage Historical, which still announces it; the handoff gate reads them as load rules.
   */
  readonly partialLoadRules: boolean;
  /**
   * The Overlord can kill unused segments itself (`druid.manager.segments.killUnused.*`, off by default, buffer
   * P30D): a second auto-kill whose buffer bounds how long a replace can be rolled back (auto-kill.ts).
   */
  readonly embeddedKill: boolean;
  /**
   * The Coordinator dynamic config's `cloneServers` makes Historicals clones of others; Brokers do not query clones
   * by default, so the handoff gate does not count a segment only a clone holds as served.
   */
  readonly cloneServers: boolean;
  /**
   * A Historical may run in virtual storage mode (`druid.segmentCache.virtualStorage`, experimental): it announces
   * every segment the Coordinator assigns without downloading it, and downloads it when a query needs it. segops
   * counts an announced segment as served on such a Historical too: the Broker routes queries to it.
   */
  readonly virtualStorage: boolean;
  /** The multi-stage query engine is in core: no `druid-multi-stage-query` extension to load. */
  readonly msqInCore: boolean;
  /** `parser` (ParseSpec) is gone from ingestion specs: a dataSchema naming one is refused. */
  readonly parserRemoved: boolean;
  /** Hadoop ingestion (`index_hadoop`) is gone: an `index_hadoop` task is an unknown type. */
  readonly hadoopRemoved: boolean;
  /**
   * Automatic compaction runs as compaction supervisors on the Overlord (`autocompact` supervisors), the
   * recommended and default way, and Druid's automatic compaction tasks are named `auto_compact_…` instead of
   * `coordinator-issued_compact_…` (the Coordinator's duty and the supervisors share the prefix).
   */
  readonly compactionSupervisors: boolean;
  /**
   * Compaction may run on the MSQ engine (`compactionRunner: {type: "msq"}`): the compact task runs the controller
   * and launches `maxNumTasks - 1` `query_worker` tasks, so one compaction holds at least two slots.
   */
  readonly msqCompaction: boolean;
  /**
   * Minor compaction (MSQ engine, compaction supervisors): only a chunk's uncompacted segments are rewritten; the
   * already compacted ones are upgraded in place to the new version (metadata only, new partition numbers).
   */
  readonly minorCompaction: boolean;
}

export interface CapabilityRow {
  readonly key: keyof DruidCapabilityFlags;
  /** First major release with the behaviour. */
  readonly since?: number;
  /** Last major release with the behaviour (none: still there). */
  readonly until?: number;
  /** What changes, in words (docs/druid-versions.md repeats it). */
  readonly what: string;
  /** The Druid change and classes it follows. */
  readonly source: string;
}

export const CAPABILITY_ROWS: readonly CapabilityRow[] = [
  {
    key: "taskLimits",
    since: 33,
    what: "worker select strategies carry taskLimits (maxSlotCountByType, maxSlotRatioByType); a task over its type's limit stays PENDING",
    source:
      "apache/druid #16889 (TaskLimits, WorkerSelectUtils, the equalDistribution and fillCapacity strategies), first in 33.0.0",
  },
  {
    key: "workerDisabledFlag",
    since: 38,
    what: 'a disabled worker is listed with worker.disabled: true and its real version; before, with worker.version "" and no flag',
    source: "apache/druid #19448 (Worker.disabled, WorkerHolder, WorkerResource)",
  },
  {
    key: "sqlSetStatements",
    since: 34,
    what: "SQL over HTTP takes leading SET statements as query context, over the request's context; before, they are refused as several statements",
    source:
      "apache/druid #17894 (HttpStatement, SqlStatementFactory; SET for INSERT and REPLACE too), first in 34.0.0",
  },
  {
    key: "lockRevokedFailsFast",
    since: 34,
    what: "a task whose lock was revoked fails at its next task action instead of retrying it (~10 minutes of retries before)",
    source:
      "apache/druid #18182 (a forbidden DruidException for revoked locks, not retried by ServiceClient; RemoteTaskActionClient's retries cut to 13)",
  },
  {
    key: "nowExpression",
    since: 38,
    what: "native expressions have now(), the wall clock evaluated per row; it breaks idempotency (not allowed for __time)",
    source: "apache/druid #19386 (the now() expression macro)",
  },
  {
    key: "compactionSkipIntervals",
    since: 39,
    what: "a datasource compaction config's skipIntervals are never compacted (Coordinator duty and compaction supervisors)",
    source:
      "apache/druid #19792 (DataSourceCompactionConfig.getSkipIntervals, DataSourceCompactibleSegmentIterator.findInitialSearchInterval)",
  },
  {
    key: "partialLoadRules",
    since: 38,
    what: "partial load rules (loadPartialForever, loadPartialByInterval, loadPartialByPeriod) for virtual storage Historicals",
    source:
      "apache/druid #19374 (PartialLoadRule, CannotMatchBehavior), #19671 (wired to the segment cache); the release not verified",
  },
  {
    key: "embeddedKill",
    since: 34,
    what: "the Overlord's embedded kill of unused segments, with its own bufferPeriod (runtime properties, off by default)",
    source: "apache/druid #18028 (UnusedSegmentsKiller, UnusedSegmentKillerConfig), documented in #18124",
  },
  {
    key: "cloneServers",
    since: 34,
    what: "cloned Historicals (cloneServers in the Coordinator dynamic config), left out of queries by default",
    source: "apache/druid #17863 (cloneServers), #17899 (Brokers exclude clones: cloneQueryMode)",
  },
  {
    key: "virtualStorage",
    since: 35,
    what: "virtual storage Historicals (druid.segmentCache.virtualStorage): an assigned segment is announced at once and downloaded when a query needs it",
    source:
      "apache/druid #18176 (SegmentLocalCacheManager.load is a no-op in virtual storage mode; SegmentManager.loadSegment still adds the segment to the served timeline), in the 35.0.0 release notes",
  },
  {
    key: "msqInCore",
    since: 35,
    what: "the multi-stage query engine ships in core; the druid-multi-stage-query extension entry is no longer needed",
    source: "apache/druid #18394 (MSQ moved into core), in the 35.0.0 release notes",
  },
  {
    key: "parserRemoved",
    since: 37,
    what: "parser/ParseSpec removed from ingestion specs: timestampSpec and dimensionsSpec sit on the dataSchema, the format in ioConfig.inputFormat",
    source: "apache/druid #19173 (parser and ParseSpec removed from DataSchema)",
  },
  {
    key: "hadoopRemoved",
    since: 37,
    what: "Hadoop ingestion (index_hadoop) removed: the Overlord no longer knows the task type",
    source: "apache/druid #19109 (Hadoop ingestion removed)",
  },
  {
    key: "compactionSupervisors",
    since: 37,
    what: "compaction supervisors on the Overlord are the recommended, default auto-compaction, and automatic compaction task ids start auto_ instead of coordinator-issued_",
    source:
      "apache/druid #19252 (CompactSegments' task id prefix, the docs), backported to 37.0.0 by #19292; #19113 (supervisors GA; its text not read here)",
  },
  {
    key: "msqCompaction",
    since: 33,
    what: "compaction on the MSQ engine: the compact task runs the controller and launches maxNumTasks - 1 query_worker tasks (at least two slots a compaction)",
    source:
      "apache/druid #16291 (MSQCompactionRunner: the controller's id is the compact task's, maxNumWorkers = maxNumTasks - 1; ClientCompactionRunnerInfo.validateMaxNumTasksForMSQ), before 33",
  },
  {
    key: "minorCompaction",
    since: 37,
    what: "minor compaction: a chunk's uncompacted segments are rewritten and its compacted ones upgraded in place to the new version (MarkSegmentToUpgradeAction)",
    source:
      "apache/druid #19059 (MinorCompactionInputSpec, MarkSegmentToUpgradeAction), merged 2026-02-26; the release (37) by that date, not verified",
  },
];

/** The version `GET /status` reported, as far as segops reads it. */
export interface DruidVersion {
  /** The text Druid sent, e.g. `33.0.0` or `39.0.0-SNAPSHOT`. */
  readonly text: string;
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
}

/** What segops assumes about the cluster: the rows that apply, and why. */
export interface DruidCapabilities extends DruidCapabilityFlags {
  /** What `/status` said, or null when it could not be read or parsed. */
  readonly version: DruidVersion | null;
  /** The major release whose behaviour segops follows (the newest known one when assumed). */
  readonly behavesAs: number;
  /** Why segops follows a release other than the one reported, in one line; null when it follows the report. */
  readonly warning: string | null;
}

// Druid's own releases are major.minor.patch with an optional suffix (`-SNAPSHOT`, `-rc1`); a vendor build
// numbered by year (2025.01.0) is not one of them, so it is read as unknown rather than as Druid 2025.
const VERSION_RE = /^\s*(\d{1,3})\.(\d+)(?:\.(\d+))?(?:[-+._][0-9A-Za-z.+-]*)?\s*$/;

/** Parses `/status`'s `version`; null for anything that is not a Druid release number. */
export function parseDruidVersion(text: unknown): DruidVersion | null {
  if (typeof text !== "string") return null;
  const m = VERSION_RE.exec(text);
  if (!m) return null;
  return { text: text.trim(), major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3] ?? 0) };
}

/** Whether a row's behaviour holds on `major`. */
export function rowApplies(row: CapabilityRow, major: number): boolean {
  return (row.since === undefined || major >= row.since) && (row.until === undefined || major <= row.until);
}

/** The flags of every row for one major release. */
export function flagsFor(major: number): DruidCapabilityFlags {
  const flags: Record<keyof DruidCapabilityFlags, boolean> = {
    taskLimits: false,
    workerDisabledFlag: false,
    sqlSetStatements: false,
    lockRevokedFailsFast: false,
    nowExpression: false,
    compactionSkipIntervals: false,
    partialLoadRules: false,
    embeddedKill: false,
    cloneServers: false,
    virtualStorage: false,
    msqInCore: false,
    parserRemoved: false,
    hadoopRemoved: false,
    compactionSupervisors: false,
    msqCompaction: false,
    minorCompaction: false,
  };
  for (const row of CAPABILITY_ROWS) flags[row.key] = rowApplies(row, major);
  return flags;
}

/**
 * The capabilities for what `/status` answered: `reported` is its `version` (anything, as received), or null when
 * the read failed (`failure` says why). A version segops cannot read, or one newer than the newest it knows, gets
 * the newest known behaviour and a warning; an older one than segops supports gets its own rows and a warning.
 */
export function capabilitiesFor(reported: unknown, failure?: string): DruidCapabilities {
  const version = parseDruidVersion(reported);
  if (!version) {
    const why =
      reported === null || reported === undefined
        ? `could not read Druid's version${failure ? ` (${failure})` : ""}`
        : `Druid reported a version segops cannot read (${JSON.stringify(reported)})`;
    return assumed(null, `${why}: assuming Druid ${NEWEST_KNOWN_MAJOR}'s behaviour`);
  }
  if (version.major > NEWEST_KNOWN_MAJOR) {
    return assumed(
      version,
      `Druid ${version.text} is newer than segops knows (up to ${NEWEST_KNOWN_MAJOR}): assuming Druid ${NEWEST_KNOWN_MAJOR}'s behaviour`,
    );
  }
  const warning =
    version.major < OLDEST_SUPPORTED_MAJOR
      ? `Druid ${version.text} is older than segops supports (${OLDEST_SUPPORTED_MAJOR} and newer): what it does there is not tested`
      : null;
  return { version, behavesAs: version.major, warning, ...flagsFor(version.major) };
}

function assumed(version: DruidVersion | null, warning: string): DruidCapabilities {
  return { version, behavesAs: NEWEST_KNOWN_MAJOR, warning, ...flagsFor(NEWEST_KNOWN_MAJOR) };
}
