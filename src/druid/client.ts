import { type Clock, systemClock } from "../core/clock.js";
import type { DruidCapabilities } from "./capabilities.js";
import { cloneHostsOf } from "./clones.js";
import {
  DruidError,
  DuplicateTaskError,
  NotFoundError,
  TransientError,
  UnexpectedResponseError,
} from "./errors.js";
import { DruidHttp, type DruidHttpOptions, type DruidRequest, type DruidResponse } from "./http.js";
import type { RequestBudget } from "./request-budget.js";
import { parseSegmentLoadRow, segmentLoadQuery } from "./sql.js";
import type {
  BulkStatusEntry,
  DataSegment,
  LoadStatusByForm,
  LoadStatusForm,
  SamplerResponse,
  SamplerSpec,
  SegmentLoadCounts,
  SqlParameter,
  SqlResultFormat,
  SqlStatementStatus,
  SqlTaskResponse,
  TaskListFilter,
  TaskPayloadResponse,
  TaskReports,
  TaskState,
  TaskStatus,
  TaskStatusPlus,
  TaskStatusResponse,
  TotalWorkerCapacity,
  WorkerInfo,
} from "./types.js";
import { CapabilitiesCache } from "./version-read.js";

/** What a status poller reads of a task Druid knows (`bulkTaskStates`). */
export interface TaskStateEntry {
  readonly id: string;
  readonly state: TaskState;
  /** Milliseconds; -1 while running. */
  readonly duration: number;
  readonly errorMsg: string | null;
}

export interface DruidClientOptions extends DruidHttpOptions {
  /**
   * Ids per `POST /druid/indexer/v1/taskStatus` request.
   * @default 500
   */
  bulkStatusChunkSize?: number;
  /**
   * Per-task status GETs in flight when the cluster has no bulk endpoint.
   * @default 8
   */
  statusFallbackConcurrency?: number;
}

/** Per-call options. */
export interface CallOptions {
  /** Aborts the call, including any retry wait; the promise rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** Options of `sample()`. */
export interface SampleOptions extends CallOptions {
  /**
   * The whole call's bound in ms, retries included (the client's clock); past it the call rejects with a
   * `Transient` error. Default: the spec's `samplerConfig.timeoutMs` (Druid's read budget, 10 s when unset)
   * plus `SAMPLE_MARGIN_MS` for the exchange.
   */
  timeoutMs?: number;
}

/** What `sample()` allows beyond Druid's own read budget: connecting, indexing the rows, the answer. */
export const SAMPLE_MARGIN_MS = 20_000;
/** `SamplerConfig.DEFAULT_TIMEOUT_MS`. */
const SAMPLER_READ_BUDGET_MS = 10_000;

/** A task spec as submitted: any JSON object; `id` pins the task id (needed for idempotent submits). */
export type TaskSpec = { type: string; id?: string } & Record<string, unknown>;

/**
 * `accepted`: Druid took the task now. `duplicate`: Druid already had a task with the id we pinned —
 * ours, from an earlier attempt whose answer we lost — so the caller reattaches to it.
 */
/** An unused segment and when it was marked unused (null: not recorded, e.g. a segment from before Druid 28). */
export interface UnusedSegment {
  segment: DataSegment;
  unusedSince: number | null;
}

/**
 * One item of the serverview (§3.2a, Druid's `ImmutableSegmentLoadInfo`): a served segment and the servers
 * announcing it (`DruidServerMetadata`; only the fields segops reads are typed).
 */
export interface SegmentLoadInfo {
  segment: DataSegment;
  servers: Array<{ type?: string; tier?: string; host?: string | null } & Record<string, unknown>>;
}

export interface SubmitResult {
  outcome: "accepted" | "duplicate";
  taskId: string;
}

export interface SqlOptions<F extends SqlResultFormat = "object"> extends CallOptions {
  parameters?: SqlParameter[];
  /** @default "object" */
  resultFormat?: F;
  context?: Record<string, unknown>;
  /** Ask for a header row (array/lines/csv formats). */
  header?: boolean;
}

export interface SqlRowsByFormat<Row> {
  object: Row[];
  array: unknown[][];
  objectLines: Row[];
  arrayLines: unknown[][];
  /** Raw CSV lines, without the terminating blank line. */
  csv: string[];
}

export interface SqlResult<T> {
  rows: T;
  /** `X-Druid-SQL-Query-Id`, for cancellation and logs. */
  queryId: string | undefined;
}

export interface DatasourceLoadStatusOptions<F extends LoadStatusForm> extends CallOptions {
  /** Required by Druid (§3.3): `true` polls the metadata store first, `false` uses the cached snapshot. */
  forceMetadataRefresh: boolean;
  /** ISO interval `start/end`; Druid's default is the last 14 days. */
  interval?: string;
  /** @default "default" (percent loaded) */
  form?: F;
}

const OVERLORD = "/druid/indexer/v1";
const COORDINATOR = "/druid/coordinator/v1";
const TASK_STATES = new Set(["RUNNING", "SUCCESS", "FAILED"]);

const seg = encodeURIComponent;

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function toTaskStatus(plus: TaskStatusPlus): TaskStatus {
  return {
    id: plus.id,
    status: plus.statusCode,
    duration: plus.duration,
    errorMsg: plus.errorMsg ?? null,
    ...(plus.location ? { location: plus.location } : {}),
  };
}

/** True when a 404 means "Druid does not know this task" (filter text or the status-race body, §2.3). */
function isUnknownTask(error: unknown, id: string): boolean {
  if (!(error instanceof NotFoundError)) return false;
  if (error.taskId === id) return true;
  try {
    const body: unknown = JSON.parse(error.druidMessage ?? "");
    return isRecord(body) && body.task === id && body.status === null;
  } catch {
    return false;
  }
}

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * Typed client for the Overlord, Coordinator and Broker (docs/druid-api.md §2, §3, §6). Every method throws a
 * `DruidError` subclass on failure; retryable failures are retried inside the configured budget first.
 */
export class DruidClient {
  readonly #http: DruidHttp;
  readonly #chunkSize: number;
  readonly #fallbackConcurrency: number;
  readonly #clock: Clock;
  #bulkStatusSupported = true;
  readonly #capabilities: CapabilitiesCache;

  constructor(options: DruidClientOptions) {
    this.#http = new DruidHttp(options);
    this.#chunkSize = options.bulkStatusChunkSize ?? 500;
    this.#fallbackConcurrency = options.statusFallbackConcurrency ?? 8;
    this.#clock = options.clock ?? systemClock;
    this.#capabilities = new CapabilitiesCache({
      read: async () => {
        const body = await this.#json<unknown>(
          { service: "overlord", method: "GET", path: "/status", idempotent: true },
          undefined,
        );
        return isRecord(body) ? body.version : undefined;
      },
      clock: this.#clock,
      // Without a logger the warning still reaches the operator once, on stderr.
      warn: (message) =>
        options.logger
          ? options.logger.warn({ event: "druid-version" }, message)
          : process.emitWarning(message, { code: "SEGOPS_DRUID_VERSION" }),
    });
    if (!Number.isInteger(this.#chunkSize) || this.#chunkSize < 1) {
      throw new RangeError(
        `Expected \`bulkStatusChunkSize\` to be an integer from 1 and up, got ${this.#chunkSize}`,
      );
    }
    if (!Number.isInteger(this.#fallbackConcurrency) || this.#fallbackConcurrency < 1) {
      throw new RangeError(
        `Expected \`statusFallbackConcurrency\` to be an integer from 1 and up, got ${this.#fallbackConcurrency}`,
      );
    }
  }

  /** The per-host request budget (`requestBudget`), when one is set. */
  get requestBudget(): RequestBudget | undefined {
    return this.#http.requestBudget;
  }

  /** Base URL per service, without credentials: which cluster this client talks to. */
  get endpoints(): Record<"overlord" | "coordinator" | "broker", string | null> {
    return this.#http.endpoints();
  }

  /** Whether the bulk status endpoint is in use (false after the cluster answered 404/405 for it). */
  get bulkStatusSupported(): boolean {
    return this.#bulkStatusSupported;
  }

  /**
   * What segops assumes about this cluster's Druid release (capabilities.ts, docs/druid-versions.md): `GET /status`
   * on the Overlord (or the Router) read once per client and kept. Never throws: a failed read assumes the newest
   * known behaviour, warns once, and is tried again a few minutes later (version-read.ts).
   */
  capabilities(): Promise<DruidCapabilities> {
    return this.#capabilities.get();
  }

  /**
   * {@link capabilities} as last read, without asking Druid: null until a read has finished. For request paths
   * that must not wait on Druid (the service plans a request whether Druid answers or not).
   */
  knownCapabilities(): DruidCapabilities | null {
    return this.#capabilities.known();
  }

  async close(): Promise<void> {
    await this.#http.close();
  }

  /** An unusable 2xx; the text may quote the body, so it is masked like every other message. */
  #unexpected(response: DruidResponse, what: string): UnexpectedResponseError {
    return new UnexpectedResponseError({
      endpoint: response.endpoint,
      status: response.status,
      druidMessage: this.#http.redact(what),
    });
  }

  #parse(response: DruidResponse): unknown {
    try {
      return JSON.parse(response.body);
    } catch {
      throw this.#unexpected(response, `expected JSON, got ${JSON.stringify(response.body.slice(0, 120))}`);
    }
  }

  #send(req: Omit<DruidRequest, "signal">, options: CallOptions | undefined): Promise<DruidResponse> {
    return this.#http.send({ ...req, signal: options?.signal });
  }

  async #json<T>(req: Omit<DruidRequest, "signal">, options: CallOptions | undefined): Promise<T> {
    return this.#parse(await this.#send(req, options)) as T;
  }

  // ---------------------------------------------------------------- Overlord

  /**
   * `POST /druid/indexer/v1/task` (§2.2). With a pinned `spec.id` the call is idempotent: it is retried on
   * ambiguous failures, and a 400 "already exists" naming that id is `{outcome: "duplicate"}` (reattach).
   * Without an id only 429/503/not-sent failures are retried, since a resend could start a second task.
   */
  async submitTask(spec: TaskSpec, options?: CallOptions): Promise<SubmitResult> {
    const pinned = typeof spec.id === "string" && spec.id !== "" ? spec.id : undefined;
    try {
      const response = await this.#send(
        {
          service: "overlord",
          method: "POST",
          path: `${OVERLORD}/task`,
          json: spec,
          idempotent: pinned !== undefined,
        },
        options,
      );
      const body = this.#parse(response);
      if (!isRecord(body) || typeof body.task !== "string")
        throw this.#unexpected(response, "no task id in the answer");
      // Druid's own client asserts the same (OverlordClientImpl#runTask).
      if (pinned !== undefined && body.task !== pinned) {
        throw this.#unexpected(response, `accepted under id ${body.task}, not the pinned ${pinned}`);
      }
      return { outcome: "accepted", taskId: body.task };
    } catch (error) {
      if (error instanceof DuplicateTaskError && pinned !== undefined && error.taskId === pinned) {
        return { outcome: "duplicate", taskId: pinned };
      }
      throw error;
    }
  }

  /** `GET /task/{id}/status` (§2.3). Unknown id → `NotFoundError` with `taskId`. */
  async taskStatus(taskId: string, options?: CallOptions): Promise<TaskStatusResponse> {
    const body = await this.#json<unknown>(
      {
        service: "overlord",
        method: "GET",
        path: `${OVERLORD}/task/${seg(taskId)}/status`,
        idempotent: true,
      },
      options,
    );
    if (!isRecord(body) || !("status" in body)) {
      throw new UnexpectedResponseError({
        endpoint: `GET ${OVERLORD}/task/${seg(taskId)}/status`,
        druidMessage: "no status field in the answer",
      });
    }
    return body as unknown as TaskStatusResponse;
  }

  /**
   * Statuses of many tasks: `POST /taskStatus` in chunks (§2.4), one entry per distinct id. An id Druid
   * omits is `found: false` — unknown, not failed. A cluster answering 404/405 for the bulk endpoint is
   * remembered and served by per-task GETs instead (bounded concurrency).
   */
  async bulkTaskStatus(
    taskIds: readonly string[],
    options?: CallOptions,
  ): Promise<Map<string, BulkStatusEntry>> {
    const ids = [...new Set(taskIds)];
    const result = new Map<string, BulkStatusEntry>();
    const rest = await this.#bulkChunks(ids, options, (id, status) => {
      result.set(
        id,
        status ? { id, found: true, status: { ...(status as TaskStatus), id } } : { id, found: false },
      );
    });
    if (rest.length > 0) {
      const entries = await mapLimit(rest, this.#fallbackConcurrency, (id) =>
        this.#singleStatus(id, options),
      );
      for (const entry of entries) result.set(entry.id, entry);
    }
    return new Map(ids.map((id) => [id, result.get(id) as BulkStatusEntry]));
  }

  /**
   * `bulkTaskStatus` for a poller of thousands of tasks: the same requests and the same rule for
   * unknown ids (absent from the map), but only the state, duration and error of each task Druid knows are
   * kept, each chunk's answer is dropped as soon as it is read, and nothing is copied again — a tick's
   * lookup of 10,000 tasks leaves one small object per task behind.
   */
  async bulkTaskStates(
    taskIds: Iterable<string>,
    options?: CallOptions,
  ): Promise<Map<string, TaskStateEntry>> {
    const ids = Array.isArray(taskIds) ? (taskIds as string[]) : [...taskIds];
    const result = new Map<string, TaskStateEntry>();
    const rest = await this.#bulkChunks(ids, options, (id, status) => {
      if (!status) return;
      const errorMsg = typeof status.errorMsg === "string" ? status.errorMsg : null;
      const duration = typeof status.duration === "number" ? status.duration : -1;
      result.set(id, { id, state: status.status as TaskState, duration, errorMsg });
    });
    if (rest.length > 0) {
      const entries = await mapLimit(rest, this.#fallbackConcurrency, (id) =>
        this.#singleStatus(id, options),
      );
      for (const entry of entries) {
        if (!entry.found) continue;
        const { status, duration, errorMsg } = entry.status;
        result.set(entry.id, { id: entry.id, state: status, duration, errorMsg: errorMsg ?? null });
      }
    }
    return result;
  }

  /**
   * The bulk requests of a status lookup, one chunk of ids after another: `seen` gets every id of a chunk
   * with its status record (null when Druid omitted it or answered something that is not a status). Returns
   * the ids left to ask one by one (none, unless the cluster has no bulk endpoint).
   */
  async #bulkChunks(
    ids: readonly string[],
    options: CallOptions | undefined,
    seen: (id: string, status: Record<string, unknown> | null) => void,
  ): Promise<readonly string[]> {
    let from = 0;
    while (this.#bulkStatusSupported && from < ids.length) {
      const chunk = ids.slice(from, from + this.#chunkSize);
      let response: DruidResponse;
      try {
        response = await this.#send(
          {
            service: "overlord",
            method: "POST",
            path: `${OVERLORD}/taskStatus`,
            json: chunk,
            idempotent: true,
          },
          options,
        );
      } catch (error) {
        if (error instanceof DruidError && (error.status === 404 || error.status === 405)) {
          this.#bulkStatusSupported = false;
          break;
        }
        throw error;
      }
      const body = this.#parse(response);
      if (!isRecord(body)) throw this.#unexpected(response, "expected an object of id → status");
      for (const id of chunk) {
        const status = body[id];
        const valid = isRecord(status) && typeof status.status === "string" && TASK_STATES.has(status.status);
        seen(id, valid ? status : null);
      }
      from += chunk.length;
    }
    return from === 0 ? ids : ids.slice(from);
  }

  async #singleStatus(id: string, options: CallOptions | undefined): Promise<BulkStatusEntry> {
    try {
      const response = await this.taskStatus(id, options);
      if (response.status === null) return { id, found: false };
      return {
        id,
        found: true,
        status: toTaskStatus(response.status),
        ...(response.status.runnerStatusCode ? { runnerStatusCode: response.status.runnerStatusCode } : {}),
      };
    } catch (error) {
      // Only Druid's own "unknown task" answers mean unknown; any other 404 (a misrouted path) is an error.
      if (isUnknownTask(error, id)) return { id, found: false };
      throw error;
    }
  }

  /** `GET /tasks` with filters (§2.5): complete tasks first, then active ones. */
  tasks(filter: TaskListFilter = {}, options?: CallOptions): Promise<TaskStatusPlus[]> {
    return this.#json(
      {
        service: "overlord",
        method: "GET",
        path: `${OVERLORD}/tasks`,
        query: {
          state: filter.state,
          datasource: filter.datasource,
          max: filter.max,
          type: filter.type,
          createdTimeInterval: filter.createdTimeInterval?.replace("/", "_"),
        },
        idempotent: true,
      },
      options,
    );
  }

  /**
   * `GET /task/{id}/reports` (§2.7). `null` while no report exists yet (Druid's "No task reports were
   * found" 404, also seen briefly while an MSQ task starts); an unknown task id is a `NotFoundError`.
   */
  async taskReports(taskId: string, options?: CallOptions): Promise<TaskReports | null> {
    const response = await this.#send(
      {
        service: "overlord",
        method: "GET",
        path: `${OVERLORD}/task/${seg(taskId)}/reports`,
        idempotent: true,
        passStatuses: [404],
      },
      options,
    );
    if (response.status === 404) {
      if (response.body.includes("No task reports were found")) return null;
      throw new NotFoundError({
        endpoint: response.endpoint,
        status: 404,
        druidMessage: this.#http.redact(response.body.trim().slice(0, 500)),
        ...(/^Cannot find any task with id: \[/.test(response.body.trim()) ? { taskId } : {}),
      });
    }
    return this.#parse(response) as TaskReports;
  }

  /** `GET /task/{id}` (§2.6): the stored spec. */
  taskPayload(taskId: string, options?: CallOptions): Promise<TaskPayloadResponse> {
    return this.#json(
      { service: "overlord", method: "GET", path: `${OVERLORD}/task/${seg(taskId)}`, idempotent: true },
      options,
    );
  }

  /** `POST /task/{id}/shutdown` (§2.8). Completed tasks answer 200 and stay as they are; safe to repeat. */
  shutdownTask(taskId: string, options?: CallOptions): Promise<{ task: string }> {
    return this.#json(
      {
        service: "overlord",
        method: "POST",
        path: `${OVERLORD}/task/${seg(taskId)}/shutdown`,
        idempotent: true,
      },
      options,
    );
  }

  /** `GET /workers` (§2.9). */
  workers(options?: CallOptions): Promise<WorkerInfo[]> {
    return this.#json(
      { service: "overlord", method: "GET", path: `${OVERLORD}/workers`, idempotent: true },
      options,
    );
  }

  /**
   * `POST /lockedIntervals/v2` (§2.11): the intervals that running tasks of `datasource` hold locks on, at
   * or above `minPriority` (@default 0: every task's), optionally only those overlapping `intervals`.
   */
  async lockedIntervals(
    datasource: string,
    options: CallOptions & { minPriority?: number; intervals?: readonly string[] } = {},
  ): Promise<string[]> {
    const response = await this.#send(
      {
        service: "overlord",
        method: "POST",
        path: `${OVERLORD}/lockedIntervals/v2`,
        json: [
          {
            datasource,
            priority: options.minPriority ?? 0,
            ...(options.intervals ? { intervals: [...options.intervals] } : {}),
          },
        ],
        idempotent: true,
      },
      options,
    );
    const body = this.#parse(response);
    const list = isRecord(body) ? body[datasource] : undefined;
    if (list === undefined || list === null) return [];
    if (!Array.isArray(list) || !list.every((i) => typeof i === "string"))
      throw this.#unexpected(response, `expected a list of intervals for ${datasource}`);
    return list;
  }

  /**
   * `GET /druid/coordinator/v1/config` (§3.8): the Coordinator's dynamic config (`killTaskSlotRatio`,
   * `maxKillTaskSlots`, …), as Druid serialises it.
   */
  coordinatorDynamicConfig(options?: CallOptions): Promise<Record<string, unknown>> {
    return this.#json(
      { service: "coordinator", method: "GET", path: `${COORDINATOR}/config`, idempotent: true },
      options,
    );
  }

  /**
   * `GET /status/properties` of a service: its runtime properties (those not hidden by
   * `druid.server.hiddenProperties`), e.g. the auto-kill settings auto-kill.ts reads. Through a Router the plain
   * path answers the Router's own (`druid.service` names the router), so its management proxy's
   * `/proxy/<service>/status/properties` is asked then, as the doctor does; the Router's own answer is returned when
   * the proxy cannot be read (the caller tells it by `druid.service`).
   */
  async statusProperties(
    service: "overlord" | "coordinator",
    options?: CallOptions,
  ): Promise<Record<string, string>> {
    const read = async (path: string) => {
      const body = await this.#json<unknown>({ service, method: "GET", path, idempotent: true }, options);
      const out: Record<string, string> = {};
      if (isRecord(body)) for (const [k, v] of Object.entries(body)) if (typeof v === "string") out[k] = v;
      return out;
    };
    const own = await read("/status/properties");
    if (!/router/i.test(own["druid.service"] ?? "")) return own;
    try {
      const proxied = await read(`/proxy/${service}/status/properties`);
      return /router/i.test(proxied["druid.service"] ?? "") ? own : proxied;
    } catch (error) {
      if (options?.signal?.aborted) throw error;
      return own;
    }
  }

  /**
   * The cloned Historicals (the Coordinator dynamic config's `cloneServers`, clones.ts): none before Druid 34, which
   * has no clones, without asking.
   */
  async cloneServers(options?: CallOptions): Promise<ReadonlySet<string>> {
    if (!(await this.capabilities()).cloneServers) return new Set();
    return cloneHostsOf(await this.coordinatorDynamicConfig(options));
  }

  /**
   * `GET /druid/coordinator/v1/config/compaction` (§3.9): the cluster compaction config
   * (`compactionTaskSlotRatio`, `maxCompactionTaskSlots`, the datasources' auto-compaction configs).
   */
  compactionConfig(options?: CallOptions): Promise<Record<string, unknown>> {
    return this.#json(
      { service: "coordinator", method: "GET", path: `${COORDINATOR}/config/compaction`, idempotent: true },
      options,
    );
  }

  /**
   * `GET /druid/indexer/v1/supervisor` (`SupervisorResource.specGetAll`): the ids of the Overlord's supervisors,
   * streaming ones and compaction ones (`autocompact__<dataSource>`, `CompactionSupervisorSpec`).
   */
  supervisorIds(options?: CallOptions): Promise<string[]> {
    return this.#json(
      { service: "overlord", method: "GET", path: `${OVERLORD}/supervisor`, idempotent: true },
      options,
    );
  }

  /**
   * `POST /druid/coordinator/v1/config/compaction` (§3.9): adds or replaces one datasource's auto-compaction
   * config (`DataSourceCompactionConfig`, the whole entry: read it first and send it back changed). Idempotent:
   * the same body twice leaves the same config.
   */
  async setDatasourceCompactionConfig(config: Record<string, unknown>, options?: CallOptions): Promise<void> {
    await this.#send(
      {
        service: "coordinator",
        method: "POST",
        path: `${COORDINATOR}/config/compaction`,
        json: config,
        idempotent: true,
      },
      options,
    );
  }

  /**
   * `GET /druid/indexer/v1/worker`: the Overlord's dynamic worker config (`WorkerBehaviorConfig`: its
   * `selectStrategy`, with `taskLimits` from Druid 33 on, worker-config.ts), or null when none was ever set (an
   * empty answer, or `null`). Druid guards it with config read permission (`ConfigResourceFilter`).
   */
  async workerConfig(options?: CallOptions): Promise<Record<string, unknown> | null> {
    const response = await this.#send(
      { service: "overlord", method: "GET", path: `${OVERLORD}/worker`, idempotent: true },
      options,
    );
    if (response.body.trim() === "") return null;
    const body = this.#parse(response);
    return isRecord(body) ? body : null;
  }

  /** `GET /totalWorkerCapacity` (§2.9); each figure is -1 when unknown. */
  totalWorkerCapacity(options?: CallOptions): Promise<TotalWorkerCapacity> {
    return this.#json(
      { service: "overlord", method: "GET", path: `${OVERLORD}/totalWorkerCapacity`, idempotent: true },
      options,
    );
  }

  /** `GET /leader` (§2.1): the leader's base URL (raw text, not JSON), or null when none is known. */
  async leader(options?: CallOptions): Promise<string | null> {
    const response = await this.#send(
      { service: "overlord", method: "GET", path: `${OVERLORD}/leader`, idempotent: true },
      options,
    );
    let text = response.body.trim();
    if (text.startsWith('"')) {
      try {
        text = String(JSON.parse(text));
      } catch {
        // Keep the raw text.
      }
    }
    return text === "" ? null : text;
  }

  /** `GET /isLeader` (§2.1): 200 `{leader:true}` or 404 `{leader:false}` from the node asked. */
  async isLeader(options?: CallOptions): Promise<boolean> {
    const response = await this.#send(
      {
        service: "overlord",
        method: "GET",
        path: `${OVERLORD}/isLeader`,
        idempotent: true,
        passStatuses: [404],
      },
      options,
    );
    const body = response.body.trim() === "" ? {} : this.#parse(response);
    if (isRecord(body) && typeof body.leader === "boolean") return body.leader;
    throw this.#unexpected(response, 'expected {"leader": boolean}');
  }

  /**
   * `POST /druid/indexer/v1/sampler` (§2.12): what Druid's data sampler reads of an ingestion spec's input — the
   * rows it read and indexed, each raw and parsed. Read-only, so retried like any idempotent call, and bounded as
   * a whole by `options.timeoutMs` (retries included). Druid refusing the sample is a 400 carrying its message:
   * `SpecRejected` for a spec Jackson refused, `BadRequest` for `Failed to sample data: …`. A cluster without the
   * endpoint (an older Druid, a Router without the management proxy) is `NotFound`, for 405 as well as 404; one
   * that does not let these credentials sample is `Unauthorized` (401) or `Forbidden` (403).
   */
  async sample(spec: SamplerSpec, options: SampleOptions = {}): Promise<SamplerResponse> {
    const path = `${OVERLORD}/sampler`;
    const budget = spec.samplerConfig?.timeoutMs;
    const timeoutMs =
      options.timeoutMs ??
      (typeof budget === "number" && budget > 0 ? budget : SAMPLER_READ_BUDGET_MS) + SAMPLE_MARGIN_MS;
    if (!Number.isInteger(timeoutMs) || timeoutMs < 1) {
      throw new RangeError(`Expected \`timeoutMs\` to be an integer from 1 and up, got ${timeoutMs}`);
    }
    // The deadline runs on the client's clock, like its retry waits, so tests drive it without sleeping.
    const deadline = new AbortController();
    const settled = new AbortController();
    this.#clock.sleep(timeoutMs, settled.signal).then(
      () =>
        deadline.abort(
          new TransientError({
            endpoint: `POST ${path}`,
            druidMessage: `the sampler did not answer within ${timeoutMs} ms`,
            requestSent: true,
          }),
        ),
      () => {},
    );
    const signal = options.signal ? AbortSignal.any([options.signal, deadline.signal]) : deadline.signal;
    try {
      const response = await this.#send(
        { service: "overlord", method: "POST", path, json: spec, idempotent: true },
        { signal },
      );
      const body = this.#parse(response);
      if (
        !isRecord(body) ||
        typeof body.numRowsRead !== "number" ||
        typeof body.numRowsIndexed !== "number" ||
        !Array.isArray(body.data)
      )
        throw this.#unexpected(response, "expected a sampler response {numRowsRead, numRowsIndexed, data}");
      return body as SamplerResponse;
    } catch (error) {
      // No resource at the path answers 405 on some Jetty and proxy setups: the same "no sampler here" as 404.
      if (error instanceof DruidError && error.status === 405) {
        const unavailable = new NotFoundError({
          endpoint: error.endpoint,
          status: 405,
          druidMessage: error.druidMessage ?? "no sampler endpoint (method not allowed)",
          druidErrorCode: error.druidErrorCode,
        });
        unavailable.attempts = error.attempts;
        throw unavailable;
      }
      throw error;
    } finally {
      settled.abort();
    }
  }

  /**
   * `POST /druid/v2/sql/task` (§6): MSQ ingestion. Any 2xx is success (Druid sends 202, the docs say 200).
   * Not idempotent: only retried when Druid refused (429/503) or the request was never sent.
   */
  async submitSqlTask(
    query: string,
    options: CallOptions & { context?: Record<string, unknown>; parameters?: SqlParameter[] } = {},
  ): Promise<SqlTaskResponse> {
    const response = await this.#send(
      {
        service: "broker",
        method: "POST",
        path: "/druid/v2/sql/task",
        json: {
          query,
          ...(options.context ? { context: options.context } : {}),
          ...(options.parameters ? { parameters: options.parameters } : {}),
        },
        idempotent: false,
      },
      options,
    );
    const body = this.#parse(response);
    if (!isRecord(body) || typeof body.taskId !== "string")
      throw this.#unexpected(response, "no taskId in the answer");
    return {
      taskId: body.taskId,
      state: (typeof body.state === "string" ? body.state : "RUNNING") as SqlTaskResponse["state"],
    };
  }

  /**
   * `GET /druid/v2/sql/statements/{queryId}[?detail=true]` (§6.2): an MSQ query's state, its fault
   * (`errorDetails`) and, with `detail`, its counters and warnings. Null when Druid does not know the query
   * (404, or a task of another type).
   */
  async sqlStatement(
    queryId: string,
    options: CallOptions & { detail?: boolean } = {},
  ): Promise<SqlStatementStatus | null> {
    const response = await this.#send(
      {
        service: "broker",
        method: "GET",
        path: `/druid/v2/sql/statements/${seg(queryId)}${options.detail ? "?detail=true" : ""}`,
        idempotent: true,
        passStatuses: [404],
      },
      options,
    );
    if (response.status === 404) return null;
    const body = this.#parse(response);
    if (!isRecord(body) || typeof body.state !== "string")
      throw this.#unexpected(response, "no state in the statement status");
    return body as SqlStatementStatus;
  }

  // ---------------------------------------------------------------- Coordinator

  /** `GET /druid/coordinator/v1/loadstatus[?simple|?full]` (§3.1). `{}` before the first coordinator run. */
  loadStatus<F extends LoadStatusForm = "default">(
    form?: F,
    options?: CallOptions,
  ): Promise<LoadStatusByForm[F]> {
    return this.#json(
      {
        service: "coordinator",
        method: "GET",
        path: `${COORDINATOR}/loadstatus`,
        query: { simple: form === "simple", full: form === "full" },
        idempotent: true,
      },
      options,
    );
  }

  /**
   * `GET /datasources/{ds}/loadstatus` (§3.3): used, non-overshadowed segments of the interval that are
   * loaded. `null` for Druid's 204 (datasource unknown, or no used segment in the interval).
   */
  async datasourceLoadStatus<F extends LoadStatusForm = "default">(
    datasource: string,
    options: DatasourceLoadStatusOptions<F>,
  ): Promise<LoadStatusByForm[F] | null> {
    const response = await this.#send(
      {
        service: "coordinator",
        method: "GET",
        path: `${COORDINATOR}/datasources/${seg(datasource)}/loadstatus`,
        query: {
          forceMetadataRefresh: String(options.forceMetadataRefresh),
          interval: options.interval,
          simple: options.form === "simple",
          full: options.form === "full",
        },
        idempotent: true,
      },
      options,
    );
    if (response.status === 204) return null;
    return this.#parse(response) as LoadStatusByForm[F];
  }

  /**
   * `GET /datasources/{ds}/segments[?full]` (§3.2): segments announced by data servers (the inventory,
   * not the metadata store). A datasource served nowhere (Druid's 204) gives `[]`.
   */
  servedSegments(datasource: string, options: CallOptions & { full: true }): Promise<DataSegment[]>;
  servedSegments(datasource: string, options?: CallOptions & { full?: false }): Promise<string[]>;
  async servedSegments(
    datasource: string,
    options: CallOptions & { full?: boolean } = {},
  ): Promise<DataSegment[] | string[]> {
    const response = await this.#send(
      {
        service: "coordinator",
        method: "GET",
        path: `${COORDINATOR}/datasources/${seg(datasource)}/segments`,
        query: { full: options.full === true },
        idempotent: true,
      },
      options,
    );
    return response.status === 204 ? [] : (this.#parse(response) as DataSegment[] | string[]);
  }

  /**
   * `GET /datasources/{ds}/intervals/{interval}/serverview` (§3.2a): the segments the Coordinator's served
   * timeline shows over the interval (overlapping it; where a newer served version covers an older one, only the
   * newer), each with the servers announcing it. A timeline lookup, so the cost follows the interval, not the
   * datasource; `[]` when nothing is served there (also for a datasource never served).
   */
  async servedInInterval(
    datasource: string,
    interval: string,
    options?: CallOptions,
  ): Promise<SegmentLoadInfo[]> {
    const response = await this.#send(
      {
        service: "coordinator",
        method: "GET",
        // Druid takes `_` for `/` in the path (an encoded slash is refused by some proxies and Jetty setups);
        // `:` is valid in a path segment, so the interval reads as Druid's docs write it.
        path: `${COORDINATOR}/datasources/${seg(datasource)}/intervals/${seg(interval.replace("/", "_")).replace(/%3A/gi, ":")}/serverview`,
        idempotent: true,
      },
      options,
    );
    if (response.status === 204) return [];
    const body = this.#parse(response);
    if (
      !Array.isArray(body) ||
      !body.every((i) => isRecord(i) && isRecord(i.segment) && Array.isArray(i.servers))
    )
      throw this.#unexpected(response, "expected an array of {segment, servers}");
    return body as SegmentLoadInfo[];
  }

  /**
   * `POST /metadata/datasources/{ds}/segments?full` with an intervals array (§3.4): used segments
   * overlapping any interval, **including overshadowed** ones; `[]` when none.
   */
  metadataSegments(
    datasource: string,
    intervals: readonly string[],
    options?: CallOptions,
  ): Promise<DataSegment[]> {
    return this.#json(
      {
        service: "coordinator",
        method: "POST",
        path: `${COORDINATOR}/metadata/datasources/${seg(datasource)}/segments`,
        query: { full: true },
        json: intervals,
        idempotent: true,
      },
      options,
    );
  }

  /**
   * `GET /metadata/datasources/{ds}/unusedSegments?interval=` (§3.7): unused segments overlapping the
   * interval (killed ones are gone). Druid wraps each in a `DataSegmentPlus`; only `dataSegment` is read.
   */
  async unusedSegments(
    datasource: string,
    interval: string,
    options?: CallOptions,
  ): Promise<UnusedSegment[]> {
    const items = await this.#json<
      Array<{ dataSegment?: DataSegment; usedStatusLastUpdatedDate?: string | null }>
    >(
      {
        service: "coordinator",
        method: "GET",
        path: `${COORDINATOR}/metadata/datasources/${seg(datasource)}/unusedSegments`,
        query: { interval },
        idempotent: true,
      },
      options,
    );
    return items.flatMap((item) => {
      if (!item.dataSegment) return [];
      const since = item.usedStatusLastUpdatedDate ? Date.parse(item.usedStatusLastUpdatedDate) : Number.NaN;
      return [{ segment: item.dataSegment, unusedSince: Number.isNaN(since) ? null : since }];
    });
  }

  /**
   * `POST /druid/indexer/v1/datasources/{ds}/markUsed` or `…/markUnused` (§3.7) with an interval and
   * optional versions: segments wholly inside the interval change; markUsed leaves overshadowed ones unused.
   * Returns how many changed. Repeating it changes nothing more (safe to retry).
   */
  async markSegments(
    datasource: string,
    to: "used" | "unused",
    filter: { interval: string; versions?: readonly string[] },
    options?: CallOptions,
  ): Promise<number> {
    const body = await this.#json<{ numChangedSegments?: number }>(
      {
        service: "overlord",
        method: "POST",
        path: `${OVERLORD}/datasources/${seg(datasource)}/${to === "used" ? "markUsed" : "markUnused"}`,
        json: { interval: filter.interval, ...(filter.versions ? { versions: [...filter.versions] } : {}) },
        idempotent: true,
      },
      options,
    );
    return typeof body.numChangedSegments === "number" ? body.numChangedSegments : 0;
  }

  /** `GET /datasources/{ds}/intervals` (§3.2): served intervals, newest first; `[]` when not served. */
  async datasourceIntervals(datasource: string, options?: CallOptions): Promise<string[]> {
    const response = await this.#send(
      {
        service: "coordinator",
        method: "GET",
        path: `${COORDINATOR}/datasources/${seg(datasource)}/intervals`,
        idempotent: true,
      },
      options,
    );
    return response.status === 204 ? [] : (this.#parse(response) as string[]);
  }

  /**
   * `GET /rules/{ds}?full`: the datasource's retention rules followed by the cluster default ones, in the
   * order the Coordinator applies them (Druid `CoordinatorRulesResource`, `MetadataRuleManager#getRulesWithDefault`).
   */
  async loadRules(
    datasource: string,
    options?: CallOptions,
  ): Promise<Array<{ type: string } & Record<string, unknown>>> {
    const rules = await this.#json<unknown>(
      {
        service: "coordinator",
        method: "GET",
        path: `${COORDINATOR}/rules/${seg(datasource)}`,
        query: { full: true },
        idempotent: true,
      },
      options,
    );
    if (!Array.isArray(rules) || !rules.every((r) => isRecord(r) && typeof r.type === "string"))
      throw new UnexpectedResponseError({
        endpoint: `GET ${COORDINATOR}/rules/{ds}`,
        status: 200,
        druidMessage: "expected an array of rules",
      });
    return rules as Array<{ type: string } & Record<string, unknown>>;
  }

  // ---------------------------------------------------------------- Broker

  /**
   * `POST /druid/v2/sql` (§3.6). Read-only, so retried like any idempotent call. For the `*Lines` and `csv`
   * formats a body without its trailing newline was cut off mid-stream and counts as a `Transient` failure.
   */
  async sql<Row = Record<string, unknown>, F extends SqlResultFormat = "object">(
    query: string,
    options: SqlOptions<F> = {},
  ): Promise<SqlResult<SqlRowsByFormat<Row>[F]>> {
    const format: SqlResultFormat = options.resultFormat ?? "object";
    const lines = format === "objectLines" || format === "arrayLines" || format === "csv";
    let rows: unknown;
    const response = await this.#send(
      {
        service: "broker",
        method: "POST",
        path: "/druid/v2/sql",
        json: {
          query,
          resultFormat: format,
          ...(options.parameters ? { parameters: options.parameters } : {}),
          ...(options.context ? { context: options.context } : {}),
          ...(options.header !== undefined ? { header: options.header } : {}),
        },
        idempotent: true,
        validate: (r) => {
          if (lines && !r.body.endsWith("\n")) {
            throw new TransientError({
              endpoint: r.endpoint,
              status: r.status,
              druidMessage: "the result was truncated (no trailing newline)",
              requestSent: true,
            });
          }
          if (format === "csv") {
            rows = r.body.split("\n").filter((line) => line !== "");
          } else if (lines) {
            rows = r.body
              .split("\n")
              .filter((line) => line.trim() !== "")
              .map((line) => JSON.parse(line) as unknown);
          } else {
            try {
              rows = JSON.parse(r.body) as unknown;
            } catch {
              // A streamed JSON array cut off by a mid-query failure: worth another try.
              throw new TransientError({
                endpoint: r.endpoint,
                status: r.status,
                druidMessage: "the result was truncated (invalid JSON)",
                requestSent: true,
              });
            }
          }
        },
      },
      options,
    );
    const queryId = response.headers["x-druid-sql-query-id"];
    return {
      rows: rows as SqlRowsByFormat<Row>[F],
      queryId: Array.isArray(queryId) ? queryId[0] : queryId,
    };
  }

  /** Runs the §3.6 handoff query for a datasource (optionally only some versions) and returns its counts. */
  async segmentLoadCounts(
    datasource: string,
    versions: readonly string[],
    options?: CallOptions,
  ): Promise<SegmentLoadCounts> {
    const { query, parameters } = segmentLoadQuery(datasource, versions);
    const result = await this.sql<Record<string, unknown>>(query, { ...options, parameters });
    return parseSegmentLoadRow(result.rows[0]);
  }
}
