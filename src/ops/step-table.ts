import type { Clock } from "../core/clock.js";
import { DEFAULTS } from "../core/defaults.js";
import { decodedForHandler, type KindEncoding } from "../driver/kind.js";
import type { Runner, TaskContext } from "../driver/runner.js";
import { TaskAbort } from "../driver/signals.js";
import type { DruidClient } from "../druid/client.js";
import { isDruidError } from "../druid/errors.js";
import type { DataSegment } from "../druid/types.js";
import type { JsonObject, TaskRow } from "../ledger/types.js";
import { servedIdsIn } from "../work/segments.js";
import type { DruidServices } from "../work/services.js";

/**
 * A segment operation's runner as a step table, like the ingest kind's: the partition's recorded step
 * picks the function that runs, each step does one thing against Druid over injected I/O and either
 * checkpoints the step after it or throws a signal. Every step is safe to repeat, so a crash anywhere
 * resumes at the recorded step on any host.
 */

/** The progress every segment operation records: at least the step it is at. */
export interface StepProgress {
  step?: string | undefined;
}

/** One partition as its steps see it; steps never write task state themselves. */
export interface Partition<P, G extends StepProgress> {
  readonly task: TaskRow;
  readonly payload: P;
  readonly call: { readonly signal: AbortSignal };
  /** The latest checkpointed progress. */
  progress(): G;
  /** Checkpoints a patch; throws when refused (canceled or taken over): the step must stop. */
  save(patch: G): Promise<void>;
}

/** The I/O every step may use, injected (tests pass fakes). */
export interface OpsIO {
  readonly client: DruidClient;
  readonly clock: Clock;
  readonly settings: {
    /** Cadence of polls for one partition. */
    readonly tickMs: number;
    /** Give up on segments not served this long after they should be. */
    readonly handoffTimeoutMs: number;
  };
}

export type OpsStep<P, G extends StepProgress, IO extends OpsIO = OpsIO> = (
  part: Partition<P, G>,
  io: IO,
) => Promise<void>;

/** A kind's steps in order, keyed by the step name its progress records. */
export interface StepTable<P, G extends StepProgress, IO extends OpsIO> {
  readonly encoding: KindEncoding;
  /** The step of a partition whose progress records none yet. */
  readonly first: NonNullable<G["step"]>;
  readonly steps: ReadonlyArray<readonly [NonNullable<G["step"]>, OpsStep<P, G, IO>]>;
  /** Runs before the recorded step (e.g. a new attempt starting over). */
  readonly prepare?: OpsStep<P, G, IO>;
}

export function opsIO(services: DruidServices): OpsIO {
  return {
    client: services.client,
    clock: services.clock,
    settings: {
      tickMs: services.tickMs ?? DEFAULTS.tickMs,
      handoffTimeoutMs: services.handoffTimeoutMs ?? DEFAULTS.handoffTimeoutMs,
    },
  };
}

function partitionOf<P extends object, G extends StepProgress>(
  encoding: KindEncoding,
  task: TaskRow,
  ctx: TaskContext,
): Partition<P, G> {
  const payload = decodedForHandler<P>(encoding, task, "payload");
  let p = decodedForHandler<G>(encoding, task, "progress");
  return {
    task,
    payload,
    call: { signal: ctx.signal },
    progress: () => p,
    save: async (patch) => {
      if (!(await ctx.checkpoint(patch as unknown as JsonObject)))
        throw new TaskAbort("canceled or taken over");
      p = { ...p, ...patch };
    },
  };
}

/** Runs the partition's recorded step, and each step it checkpoints after it, in the table's order. */
export async function runSteps<P, G extends StepProgress, IO extends OpsIO>(
  table: StepTable<P, G, IO>,
  part: Partition<P, G>,
  io: IO,
): Promise<void> {
  await table.prepare?.(part, io);
  for (const [name, step] of table.steps)
    if ((part.progress().step ?? table.first) === name) await step(part, io);
}

/**
 * The runner of a segment operation from its step table; `hooks` add what the kind holds per partition
 * (a budget at Druid, worker slots).
 */
export function stepRunner<P extends object, G extends StepProgress, IO extends OpsIO>(
  services: DruidServices,
  table: StepTable<P, G, IO>,
  io: IO,
  hooks: Omit<Partial<Runner>, "kind" | "handler"> = {},
): Runner {
  return {
    kind: table.encoding.name,
    concurrency: services.concurrency ?? DEFAULTS.maxConcurrency,
    maxRetry: services.maxRetry ?? DEFAULTS.maxRetry,
    ...hooks,
    handler: async (task, ctx) => {
      try {
        await runSteps(table, partitionOf<P, G>(table.encoding, task, ctx), io);
      } catch (error) {
        // Druid refusing a request (400: a spec or version string it cannot take) will refuse it again.
        if (isDruidError(error) && !error.retryable) throw new TaskAbort(`Druid refused: ${error.message}`);
        throw error;
      }
    },
  };
}

/** A chunk's used segments (overshadowed ones included) and the ids Historicals serve, read together. */
export async function usedAndServed(
  io: OpsIO,
  datasource: string,
  interval: string,
  call: { signal: AbortSignal },
): Promise<{ used: DataSegment[]; served: Set<string> }> {
  const [used, served] = await Promise.all([
    io.client.metadataSegments(datasource, [interval], call),
    servedIdsIn(io.client, datasource, interval, call),
  ]);
  return { used, served };
}

/**
 * Gives up on segments not served `handoffTimeoutMs` after `since` (when they were published or marked
 * used): the Coordinator will not load them, and waiting longer would hold the chunk for nothing.
 */
export function abortWhenOverdue(
  io: OpsIO,
  since: number | undefined,
  why: (seconds: number) => string,
): void {
  const waited = io.clock.now() - (since ?? io.clock.now());
  if (waited > io.settings.handoffTimeoutMs) throw new TaskAbort(why(Math.round(waited / 1000)));
}
