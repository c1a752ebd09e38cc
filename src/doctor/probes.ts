import type { DruidService } from "../druid/http.js";

/**
 * The Druid APIs segops calls, each with the permission Druid checks for it (docs/doctor.md, "The APIs it tries"):
 * what `segops doctor` tries, read-only, to say what segops can and cannot do with the given credentials.
 * Pure data. The resource/action pairs follow Druid's `docs/operations/security-user-auth.md` and the
 * resource filters of the resources (`StateResourceFilter`, `ConfigResourceFilter`,
 * `DatasourceResourceFilter`): a GET needs READ, a POST or DELETE needs WRITE.
 */

export type DruidResourceType = "STATE" | "CONFIG" | "DATASOURCE";

export interface ApiProbe {
  /** Stable key for `--json` (e.g. `overlord.workers`). */
  readonly id: string;
  readonly service: DruidService;
  readonly method: "GET" | "POST";
  /** Path from the service root; `{dataSource}` is replaced by the template's datasource. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string | boolean>>;
  /** JSON body of a POST probe: chosen so that Druid reads and writes nothing. */
  readonly body?: unknown;
  readonly resource: DruidResourceType;
  readonly action: "READ" | "WRITE";
  /** What segops uses it for. */
  readonly usedFor: string;
  /** What segops cannot do when Druid refuses it. */
  readonly cost: string;
  /** Whether segops cannot run a backfill without it (a refusal is a blocker, not a note). */
  readonly required: boolean;
  /**
   * A 404 is the resource's own "no such datasource" (it runs after Druid's permission check, so the user was
   * let in), not a missing API.
   */
  readonly notFoundIsEmpty?: boolean;
}

/** A datasource name no real datasource is likely to have, for the datasource probes without a template. */
export const PROBE_DATASOURCE = "segops-doctor-probe";

/** A sampler spec with a one-row inline input (`{}`): Druid parses it and writes nothing. */
const EMPTY_SAMPLE = {
  type: "index",
  spec: {
    // Without a dimensionsSpec a real Druid 33 answers 400 "Failed to sample data: inputRowParser".
    dataSchema: {
      dataSource: PROBE_DATASOURCE,
      timestampSpec: { column: "t", missingValue: "2000-01-01" },
      dimensionsSpec: {},
    },
    ioConfig: { type: "index", inputSource: { type: "inline", data: "{}" }, inputFormat: { type: "json" } },
  },
  samplerConfig: { numRows: 1, timeoutMs: 1000 },
};

export const API_PROBES: readonly ApiProbe[] = [
  {
    id: "overlord.tasks",
    service: "overlord",
    method: "GET",
    path: "/druid/indexer/v1/tasks",
    query: { state: "running", datasource: "{dataSource}", max: "1" },
    resource: "DATASOURCE",
    action: "READ",
    usedFor: "finding the tasks of a partition again after a restart (reattach) and their states",
    cost: "a restarted run cannot see its own tasks: it cannot reattach or tell a running task from a lost one",
    required: true,
  },
  {
    id: "overlord.workers",
    service: "overlord",
    method: "GET",
    path: "/druid/indexer/v1/workers",
    resource: "STATE",
    action: "READ",
    usedFor: "admission control: free task slots per worker, disabled workers",
    cost: "admission control cannot count free slots, so runs submit without waiting for room",
    required: false,
  },
  {
    id: "overlord.workerConfig",
    service: "overlord",
    method: "GET",
    path: "/druid/indexer/v1/worker",
    resource: "CONFIG",
    action: "READ",
    usedFor: "the Overlord's task limits per task type (maxSlotCountByType, maxSlotRatioByType)",
    cost: "task-type limits are unseen: a task over its type's limit waits PENDING while segops counts it as running",
    required: false,
  },
  {
    id: "overlord.lockedIntervals",
    service: "overlord",
    method: "POST",
    path: "/druid/indexer/v1/lockedIntervals/v2",
    body: [{ datasource: "{dataSource}", priority: 0 }],
    resource: "STATE",
    action: "WRITE",
    usedFor: "seeing which intervals other tasks lock before submitting into them",
    cost: "lock conflicts with other writers are found only when a task fails on them",
    required: false,
  },
  {
    id: "overlord.sampler",
    service: "overlord",
    method: "POST",
    path: "/druid/indexer/v1/sampler",
    body: EMPTY_SAMPLE,
    resource: "STATE",
    action: "WRITE",
    usedFor: "the pre-flight of a replace (is the partition's input empty?)",
    cost: "a replace whose input is empty cannot be caught before it drops the partition's data",
    required: false,
  },
  {
    id: "coordinator.datasources",
    service: "coordinator",
    method: "GET",
    path: "/druid/coordinator/v1/metadata/datasources",
    resource: "DATASOURCE",
    action: "READ",
    usedFor: "listing datasources (Druid filters the list to those the user may read)",
    cost: "audits and the dashboard see no datasource",
    required: false,
  },
  {
    id: "coordinator.segments",
    service: "coordinator",
    method: "GET",
    path: "/druid/coordinator/v1/metadata/datasources/{dataSource}/segments",
    query: { full: true },
    resource: "DATASOURCE",
    action: "READ",
    usedFor: "the published segments of a partition (what a task wrote, what a rollback restores)",
    cost: "segops cannot prove what a task published: no run can be marked done",
    required: true,
    notFoundIsEmpty: true,
  },
  {
    id: "coordinator.serverview",
    service: "coordinator",
    method: "GET",
    path: "/druid/coordinator/v1/datasources/{dataSource}/intervals/2000-01-01T00:00:00.000Z_2000-01-02T00:00:00.000Z/serverview",
    resource: "DATASOURCE",
    action: "READ",
    usedFor: "the handoff gate: which published segments Historicals serve",
    cost: "the handoff gate cannot see served segments: no partition passes it",
    required: true,
    notFoundIsEmpty: true,
  },
  {
    id: "coordinator.loadstatus",
    service: "coordinator",
    method: "GET",
    path: "/druid/coordinator/v1/loadstatus",
    resource: "STATE",
    action: "READ",
    usedFor: "the Coordinator's load progress, shown while handoff is slow",
    cost: "a slow handoff is reported without the cluster's load progress",
    required: false,
  },
  {
    id: "coordinator.rules",
    service: "coordinator",
    method: "GET",
    path: "/druid/coordinator/v1/rules",
    resource: "STATE",
    action: "READ",
    usedFor:
      "retention rules: an interval a drop rule covers is never served, so its handoff never completes",
    cost: "a partition dropped by a retention rule waits for handoff until its timeout instead of being said at once",
    required: false,
  },
  {
    id: "coordinator.compactionConfig",
    service: "coordinator",
    method: "GET",
    path: "/druid/coordinator/v1/config/compaction",
    resource: "CONFIG",
    action: "READ",
    usedFor: "auto-compaction configs that rewrite what a backfill wrote; compaction's target segment size",
    cost: "segops cannot warn that auto-compaction will rewrite a backfilled interval",
    required: false,
  },
  {
    id: "coordinator.dynamicConfig",
    service: "coordinator",
    method: "GET",
    path: "/druid/coordinator/v1/config",
    resource: "CONFIG",
    action: "READ",
    usedFor: "kill settings (killDataSourceWhitelist, maxKillTaskSlots) and millisToWaitBeforeDeleting",
    cost: "segops cannot say whether the Coordinator deletes the unused segments a rollback needs",
    required: false,
  },
];

/** A permission segops needs but `doctor` never tries, because every call of it writes. */
export interface UntriedWrite {
  readonly id: string;
  /** `METHOD /path`; `{dataSource}` is replaced by the template's datasource. */
  readonly api: string;
  readonly resource: DruidResourceType;
  readonly action: "WRITE";
  readonly usedFor: string;
  readonly cost: string;
  readonly required: boolean;
}

export const UNTRIED_WRITES: readonly UntriedWrite[] = [
  {
    id: "overlord.submit",
    api: "POST /druid/indexer/v1/task",
    resource: "DATASOURCE",
    action: "WRITE",
    usedFor: "submitting ingestion, compaction and kill tasks",
    cost: "nothing can be ingested, compacted or killed",
    required: true,
  },
  {
    id: "coordinator.markUsed",
    api: "POST /druid/coordinator/v1/datasources/{dataSource}/markUsed",
    resource: "DATASOURCE",
    action: "WRITE",
    usedFor: "rollback (marking the previous segments used again)",
    cost: "a replace that fails its gates cannot be undone, and segops rollback cannot run",
    required: false,
  },
  {
    id: "coordinator.setCompactionConfig",
    api: "POST /druid/coordinator/v1/config/compaction",
    resource: "CONFIG",
    action: "WRITE",
    usedFor: "from Druid 39, keeping auto-compaction out of a partition while it is written (skipIntervals)",
    cost: "auto-compaction may rewrite a partition while the backfill writes it",
    required: false,
  },
];
