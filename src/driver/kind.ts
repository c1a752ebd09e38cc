import type { z } from "zod";
import type { DruidClient } from "../druid/client.js";
import type { ClusterBinding } from "../druid/cluster.js";
import type { Store } from "../ledger/store.js";
import type { JsonObject, NewJob, NewTask, TaskRow } from "../ledger/types.js";
import type { Runner } from "./runner.js";
import { TaskAbort } from "./signals.js";

/**
 * A kind of work (ingest, compaction, kill, rollback) declared in one object: the ledger
 * task kind it drives, how its payload and progress are encoded (zod schemas, no casts), its runner (the
 * handler as named steps), how a partition of it is described in reports and the API, and which Druid
 * tasks it owns. Jobs, reports, `status`, `dlq`, `retry`, `cancel` and the engine work for any kind
 * through this interface; adding a kind is one folder and one line in the registry (`jobs/kinds.ts`).
 *
 * `S` is what its runner needs from the engine (for Druid work: the client, the status batcher, the
 * handoff checker, admission control and the run's settings).
 */
export interface KindOfWork<S = unknown, I = never> {
  /** The ledger task kind (`tasks.kind`). */
  readonly name: string;
  /**
   * The kinds of job (`jobs.kind`) whose partitions are of this kind: `run` and `backfill` for ingestion.
   * @default [name]
   */
  readonly jobKinds?: readonly string[];
  /**
   * How a job of this kind is planned into partitions, from the user's input: pure, and complete before
   * anything is written (every partition checked), so a bad input changes nothing.
   */
  plan(input: I): PlannedWork;
  /** What a partition's task carries, written once when the job is planned. */
  readonly payload: z.ZodType<Record<string, unknown>>;
  /** The task's checkpointed progress (every field optional: an empty object is a task not yet started). */
  readonly progress: z.ZodType<Record<string, unknown>>;
  /** The runner the driver claims this kind's tasks for. */
  runner(services: S): Runner;
  /** One partition, as reports, `status` and the API show it. */
  describe(task: TaskRow): PartitionView;
  /** The Druid task ids this partition currently has running at Druid (what `cancel --shutdown` stops). */
  activeDruidTasks(task: TaskRow): string[];
  /**
   * How users start it through the API (`POST /api/v1/<resource>`): the request, and how it is read from
   * Druid and planned. The service's route, its OpenAPI entry and its dry run come from this alone.
   * Absent: the kind is started some other way (ingestion has its own run and backfill requests).
   */
  readonly request?: KindRequest<unknown>;
}

/** A kind's request: what users send to start it, and how it becomes a job. */
export interface KindRequest<R> {
  /** The API's resource: `POST /api/v1/<resource>` (e.g. `compactions`). */
  readonly resource: string;
  /** The OpenAPI operation id (e.g. `createCompaction`). */
  readonly operationId: string;
  readonly summary: string;
  /** The request body; `datasource` and `dryRun` are read by every kind's route. */
  readonly schema: z.ZodType<R & { datasource: string; dryRun?: boolean | undefined }>;
  /** Only answer with the plan unless the request says `"dryRun": false` (work that deletes for good). */
  readonly dryRunByDefault?: boolean;
  /**
   * Reads what the plan needs (Druid's segments, the ledger) and plans: the job, its partitions and a line
   * per item for the dry run. A field wrong past the schema is a `UsageError` with `details.path`.
   */
  plan(context: RequestContext, request: R): Promise<PlannedRequest>;
  /**
   * What names the request, from the request alone (no Druid, no ledger; `requestKeyOf`): stored with the
   * job it starts (`options.requestKey`). The same request while that job is open resumes it (CLI) or
   * answers with it (API) before anything is planned again, so a run that crashed is finished by its rerun
   * even when a new plan would now refuse (the live version not served yet, a chunk between a rollback's
   * marks): the job's own steps check again what they must before they act.
   */
  key(request: R, cluster: ClusterBinding): string;
  /**
   * Its CLI command (`segops <name> <datasource> …`): flags that fill this request's body. The kind's
   * registry entry (jobs/registry.ts) loads the same object alone, so `segops --help` lists it without
   * loading the kind.
   */
  readonly command?: KindCommand;
}

/**
 * A kind's CLI command: each flag and the field of the request body it fills. The CLI checks the body with
 * the request's schema, plans it with the request's `plan` and runs the job as it runs every job. Data
 * and nothing heavier (no zod, no commander, no I/O) in a module of its own (`ops/<kind>/command.ts`), so
 * `segops --help` lists it without loading the kind.
 */
export interface KindCommand {
  /** `segops <name>`. */
  readonly name: string;
  /** One line in `segops --help`. */
  readonly description: string;
  /** The help of its one argument, `<datasource>`: the request's `datasource`. */
  readonly datasource: string;
  readonly flags: readonly KindFlag[];
  /** One partition of its job, counted in its messages: `chunk(s) to compact`. */
  readonly unit: string;
  /** Groups of flags (by long name: `--before`) of which exactly one must be given. */
  readonly exactlyOne?: readonly (readonly string[])[];
  /** Command lines shown at the end of `--help` (after `segops `). */
  readonly examples?: readonly string[];
}

/**
 * A flag of a kind's command and the request field it fills, by its `value`: `text` as given; `count` a
 * whole number from 1 up; `list` repeatable, the field left out when not given; `switch` takes no value
 * and sets the field to `sets` (`--yes`: `dryRun` false).
 */
export type KindFlag = {
  /** Its spelling: `--older-than <period>`, `--all`. */
  readonly flag: string;
  readonly description: string;
  /** The field of the request body it fills. */
  readonly field: string;
  readonly required?: boolean;
} & (
  | { readonly value: "text" | "list" }
  | { readonly value: "count"; readonly default?: number }
  | { readonly value: "switch"; readonly sets: boolean }
);

/** What a kind's request is planned with. */
export interface RequestContext {
  readonly client: DruidClient;
  readonly store: Store;
  readonly cluster: ClusterBinding;
  now(): number;
}

/** A planned request: its job and partitions, and what each item of the plan does (the dry run's lines). */
export interface PlannedRequest extends PlannedWork {
  readonly items: ReadonlyArray<{ interval: string; what: string }>;
  /** The plan in the kind's own words, for the CLI's `--json` (else its items are shown). */
  readonly detail?: Readonly<Record<string, unknown>>;
  /** Lines the CLI prints after the items (e.g. every segment a kill deletes). */
  readonly notes?: readonly string[];
}

/** A planned job: its row and its partitions' tasks, ready for `Store.createJob` (idempotent on the id). */
export interface PlannedWork {
  readonly job: NewJob;
  readonly tasks: readonly NewTask[];
}

/** A partition as every kind shows it. */
export interface PartitionView {
  /** The partition's interval (canonical), or another short label for work that has none. */
  interval: string;
  /** The kind's current step. */
  step: string | null;
  /** Druid task id of the current attempt. */
  druidTaskId: string | null;
  druidState: string | null;
  version: string | null;
  /** Rows stored, else rows ingested; null when not known. */
  rows: number | null;
  segments: number | null;
  bytes: number | null;
  /** Druid's row counters of the latest attempt, when the kind ingests. */
  rowStats: { processed: number; processedWithError: number; unparseable: number; thrownAway: number } | null;
  /** The first parse-error messages of the latest attempt's report. */
  parseErrors: string[];
  /** Everything the kind recorded about earlier attempts (failure classes, messages). */
  failures: JsonObject[];
  /**
   * Why the partition ended without being done, when segops decided it (e.g. `rolled-back`: a replace
   * that failed its gates was undone). Absent for kinds that do not say.
   */
  outcome?: string | null;
  /** The version of the input the partition reads (given or fingerprinted), when the kind has one. */
  sourceVersion?: string | null;
}

/** A partition view with nothing known but its interval: what a kind fills in, or shows of a kind it lacks. */
export function emptyPartitionView(interval: string): PartitionView {
  return {
    interval,
    step: null,
    druidTaskId: null,
    druidState: null,
    version: null,
    rows: null,
    segments: null,
    bytes: null,
    rowStats: null,
    parseErrors: [],
    failures: [],
  };
}

/** Decodes one of a task's JSON columns with its kind's schema: a malformed row is a clear error, not a cast. */
/** The part of a kind that says how its rows are encoded. */
export type KindEncoding = Pick<KindOfWork<never, never>, "name" | "payload" | "progress">;

function decode<T>(kind: KindEncoding, task: TaskRow, column: "payload" | "progress"): T {
  const parsed = kind[column].safeParse(task[column]);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`);
    throw new Error(`${column} of ${task.id} is not a ${kind.name} ${column}: ${issues.join("; ")}`);
  }
  return parsed.data as T;
}

/** Decodes a task's progress with its kind's schema. */
export function progressOf<T extends object>(kind: KindEncoding, task: TaskRow): T {
  return decode<T>(kind, task, "progress");
}

/** Decodes a task's payload with its kind's schema. */
export function payloadOf<T extends object>(kind: KindEncoding, task: TaskRow): T {
  return decode<T>(kind, task, "payload");
}

/**
 * For handlers: decodes a row and turns a malformed one into `TaskAbort` naming the field, so a bad row
 * ends its partition with the reason instead of looping through retries.
 */
export function decodedForHandler<T extends object>(
  kind: KindEncoding,
  task: TaskRow,
  column: "payload" | "progress",
): T {
  try {
    return decode<T>(kind, task, column);
  } catch (error) {
    throw new TaskAbort(error instanceof Error ? error.message : String(error));
  }
}

/** Looks a task's kind up in a registry; null for a kind this process does not know. */
export function kindOf<S>(kinds: readonly KindOfWork<S>[], name: string): KindOfWork<S> | null {
  return kinds.find((k) => k.name === name) ?? null;
}
