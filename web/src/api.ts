/**
 * The dashboard's view of the API (src/serve/app.ts, dashboard-api.ts): the shapes it reads and one
 * fetch helper. The session is the HttpOnly cookie the login set (the page never sees the token after
 * the login form); a 401 anywhere sends the page back to the login.
 */

export type TaskState = "new" | "running" | "suspended" | "done" | "failed" | "dead";
/** A job's state; a cancel is the `canceled` flag (the job ends `failed`), not a state. */
export type JobState = "open" | "done" | "failed";
export type Counts = Record<TaskState, number>;

export interface DashboardJob {
  id: string;
  kind: string;
  state: JobState;
  canceled: boolean;
  createdAt: string;
  updatedAt: string;
  counts: Counts;
  datasource: string | null;
  range: string | null;
}

export interface RowStats {
  processed: number;
  processedWithError: number;
  unparseable: number;
  thrownAway: number;
}

export interface Cell {
  task: string;
  state: TaskState;
  canceled: boolean;
  interval: string;
  start: string;
  end: string;
  attempts: number;
  step: string | null;
  druidTaskIds: string[];
  druidState: string | null;
  rows: number | null;
  rowStats: RowStats | null;
  durationMs: number | null;
  error: string | null;
  /** Why it ended without being done, when segops decided it (`rolled-back`, `refused-empty`, …). */
  outcome: string | null;
}

export interface PartitionGrid {
  job: DashboardJob;
  granularity: unknown;
  items: Cell[];
}

export interface ApiEvent {
  id: number;
  jobId: string;
  taskId: string | null;
  fromState: string | null;
  toState: string;
  reason: string;
  actor: string;
  at: string;
}

export type Action = "retry" | "cancel" | "dead-letter-retry" | "dead-letter-drop";

export interface PartitionDetail extends Cell {
  jobId: string;
  version: string | null;
  segments: number | null;
  bytes: number | null;
  parseErrors: string[];
  steps: { name: string; at: string | null }[];
  failures: Array<Record<string, unknown>>;
  events: ApiEvent[];
  actions: Action[];
}

export interface TimelineSegment {
  id: string;
  start: string;
  end: string;
  version: string;
  partitionNum: number;
  status: "live" | "overshadowed" | "unused";
  tombstone: boolean;
  sizeBytes: number;
  rows: number | null;
  served: boolean;
  compactionCandidate: "small" | "large" | "rows" | null;
}

export interface AuditChunk {
  interval: string;
  liveVersions: string[];
  segments: number;
  rows: number | null;
  bytes: number;
  tombstone: boolean;
}

/** Why a part of the interval holds no live data: Druid's reason, or the ledger's where it knows one. */
export type GapReason =
  | "no-segments"
  | "tombstone"
  | "dead-lettered"
  | "failed"
  | "canceled"
  | "pending"
  | "killed";

export interface TimelineGap {
  interval: string;
  reason: GapReason;
  job?: string;
  task?: string;
  error?: string;
}

export interface Timeline {
  datasource: string;
  interval: string;
  segments: TimelineSegment[];
  truncated: boolean;
  /** Parts of the interval with no live data, oldest first. */
  gaps: TimelineGap[];
  audit: {
    ok: boolean;
    noSegments?: boolean;
    problem?: string;
    chunks: AuditChunk[];
    violations: { chunk: string; kind: string; message: string }[];
  };
}

export interface Quantiles {
  count: number;
  p50: number | null;
  p90: number | null;
  p99: number | null;
}

export interface DruidLoad {
  /** Since when and on what this host waits for slots other tasks hold; null when it does not. */
  blocked: { since: string; reason: string } | null;
  sampleMs: number;
  samples: { at: string; ours: number | null; used: number | null; capacity: number | null }[];
  requestsPerMinute: { endpoint: string; values: number[] }[];
  latency: { detection: Quantiles; handoff: Quantiles };
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Called on a 401: the session ended (or never began). */
let onUnauthorized: () => void = () => {};
export function whenUnauthorized(f: () => void): void {
  onUnauthorized = f;
}

export async function api<T>(path: string, init: RequestInit & { json?: unknown } = {}): Promise<T> {
  const headers = new Headers(init.headers);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set("content-type", "application/json");
    body = JSON.stringify(init.json);
  }
  const res = await fetch(path, { ...init, headers, body: body ?? null, credentials: "same-origin" });
  if (res.status === 401 && path !== "/api/v1/login") onUnauthorized();
  if (!res.ok) {
    let detail = `${res.status} ${res.statusText}`;
    try {
      const problem = (await res.json()) as { detail?: string; title?: string };
      detail = problem.detail ?? problem.title ?? detail;
    } catch {
      // not a problem document
    }
    throw new ApiError(res.status, detail);
  }
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

export const enc = encodeURIComponent;
