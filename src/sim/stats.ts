import { instantText } from "./instant-text.js";

/**
 * Accounting for tests and benchmarks: request counts per route pattern, every submission attempt, each
 * task's timeline of events and the peak slot usage, so a test can assert on Overlord load and duplicates.
 */
export type TaskEvent =
  | "submitted"
  | "waiting"
  | "pending"
  | "running"
  | "success"
  | "failed"
  | "published"
  | "handedOff";

export interface SubmissionRecord {
  /** The task id (pinned or generated); null when the body had none and was rejected before one was made. */
  id: string | null;
  at: string;
  accepted: boolean;
  status: number;
  /** Why it was rejected (Druid's message). */
  reason?: string;
}

export interface SimStatsSnapshot {
  /** `METHOD /route/pattern` → count, e.g. `POST /druid/indexer/v1/taskStatus`. */
  requests: Record<string, number>;
  submissions: SubmissionRecord[];
  tasks: Record<string, Array<{ event: TaskEvent; at: string }>>;
  slots: { capacity: number; used: number; maxUsed: number };
  faultsInjected: number;
}

export class StatsRecorder {
  requests = new Map<string, number>();
  submissions: SubmissionRecord[] = [];
  events = new Map<string, Array<{ event: TaskEvent; at: string }>>();
  faultsInjected = 0;

  request(method: string, pattern: string): void {
    const key = `${method} ${pattern}`;
    this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
  }

  submission(record: Omit<SubmissionRecord, "at">, now: number): void {
    this.submissions.push({ ...record, at: instantText(now) });
  }

  event(taskId: string, event: TaskEvent, now: number): void {
    const list = this.events.get(taskId) ?? [];
    list.push({ event, at: instantText(now) });
    this.events.set(taskId, list);
  }

  reset(): void {
    this.requests.clear();
    this.submissions = [];
    this.events.clear();
    this.faultsInjected = 0;
  }

  snapshot(slots: SimStatsSnapshot["slots"]): SimStatsSnapshot {
    return {
      requests: Object.fromEntries([...this.requests].sort(([a], [b]) => (a < b ? -1 : 1))),
      submissions: [...this.submissions],
      tasks: Object.fromEntries(this.events),
      slots,
      faultsInjected: this.faultsInjected,
    };
  }
}
