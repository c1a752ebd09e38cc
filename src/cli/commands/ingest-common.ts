import { systemClock } from "../../core/clock.js";
import { DEFAULTS } from "../../core/defaults.js";
import { type ErrorCode, ExitCode, SegopsError, UsageError } from "../../core/errors.js";
import type { KindOfWork } from "../../driver/kind.js";
import { DruidClient } from "../../druid/client.js";
import { type ClusterBinding, clusterOf } from "../../druid/cluster.js";
import { OutageMonitor } from "../../druid/outage.js";
import type { IngestJobInput, PlannedJob } from "../../ingest/plan.js";
import { releaseErrors, releaseToCheck } from "../../ingest/release-check.js";
import { type EngineResult, runIngestJob } from "../../jobs/engine.js";
import { formatJobReport, jobReport, resumeHint } from "../../jobs/report.js";
import {
  BackfillFlagsRequest,
  createPlannedJob,
  type IngestRequest,
  planRequestWithSources,
  RunFlagsRequest,
} from "../../jobs/requests.js";
import { adoptSources, alreadyFinished } from "../../jobs/rerun.js";
import { fileSystemProbe } from "../../jobs/source-probe.js";
import type { Store } from "../../ledger/store.js";
import {
  formatSummary,
  InvalidSpecError,
  parseVars,
  readTemplateFile,
  type SpecIssue,
  summariseIssues,
} from "../../spec/index.js";
import type { DruidServices } from "../../work/services.js";
import { connectWatched } from "../connect-watched.js";
import { openLedger } from "../context.js";
import { type DruidFlags, druidOptionsFrom } from "../options.js";
import { BlockedCondition, progressMode, startProgress } from "../progress.js";
import type { BackfillFlags, IngestFlags } from "./ingest-flags.js";

/** `segops run`: one partition over the interval. */
export function runCommand(template: string, flags: IngestFlags & { interval: string }): Promise<number> {
  return executeIngest("run", template, flags, { interval: flags.interval });
}

/** `segops backfill`: a range, one partition per granularity bucket. */
export function backfillCommand(template: string, flags: BackfillFlags): Promise<number> {
  return executeIngest("backfill", template, flags, {
    from: flags.from,
    to: flags.to,
    ...(flags.granularity !== undefined ? { granularity: flags.granularity } : {}),
  });
}

export { connectWatched };

/** Errors of planning that are about the range the flags gave (`--interval`, or `--from` and `--to`). */
const RANGE_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>(["TaskId", "Interval", "Partition"]);

/** Where segops injects the partition's interval into a native spec. */
const INTERVALS_PATH = "spec.dataSchema.granularitySpec.intervals";

/** The flag a request field comes from: `maxUnparseable` → `--max-unparseable`. */
function flagOf(path: string): string {
  return `--${path.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

/**
 * The flags as the request `POST /api/v1/runs` takes (the same schema, the same planner), so the CLI
 * and the service name the same job for the same inputs; errors name the flag.
 */
function requestOfFlags(
  kind: IngestJobInput["kind"],
  templatePath: string,
  flags: IngestFlags,
  range: Record<string, string>,
): IngestRequest {
  const fields = {
    templateName: templatePath,
    vars: parseVars(flags.var),
    ...(flags.specVersion !== undefined ? { specVersion: flags.specVersion } : {}),
    ...(flags.prefix !== undefined ? { prefix: flags.prefix } : {}),
    ...(flags.new ? { new: true } : {}),
    ...(flags.sourceVersion !== undefined ? { sourceVersion: flags.sourceVersion } : {}),
    ...(flags.allowEmpty ? { allowEmpty: true } : {}),
    ...(flags.maxRowDrop !== undefined ? { maxRowDrop: flags.maxRowDrop } : {}),
    maxUnparseable: flags.maxUnparseable ?? "0",
    minRows: flags.minRows ?? 0,
    maxConcurrency: flags.maxConcurrency,
    poisonAfter: flags.poisonAfter,
    ...range,
  };
  const parsed = (kind === "run" ? RunFlagsRequest : BackfillFlagsRequest).safeParse(fields);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const flag = flagOf(String(issue?.path[0] ?? ""));
  throw new UsageError(`${flag}: ${issue?.message ?? "invalid"}`, { flag });
}

/**
 * Plans (validating every partition), checks Druid and the ledger, stores the job (or finds it again),
 * runs it to completion with a progress display, prints the report and returns the exit code.
 * Nothing is written or submitted until every check has passed.
 */
export async function executeIngest(
  kind: IngestJobInput["kind"],
  templatePath: string,
  flags: IngestFlags,
  range: Record<string, string>,
): Promise<number> {
  const request = requestOfFlags(kind, templatePath, flags, range);
  const template = await readTemplateFile(templatePath);
  const cluster = await clusterOfFlags(flags);
  let plan: PlannedJob;
  try {
    plan = await planRequestWithSources(kind, request, { template, cluster, probe: fileSystemProbe() });
  } catch (error) {
    // A field the planner refused is named by its flag here.
    const path = error instanceof UsageError ? error.details.path : undefined;
    if (error instanceof UsageError && typeof path === "string")
      throw new UsageError(`${flagOf(path)}: ${String(error.details.problem)}`, { flag: flagOf(path) });
    // The range cannot be named in a task id or cut into partitions (e.g. a day of year 9999 ends in
    // 10000): the flags that gave it are named, as for every other refusal.
    const flag = kind === "run" ? "--interval" : "--from/--to";
    // A task-id error naming a spec field (an empty dataSource) is the template's, not the range's.
    if (error instanceof SegopsError && RANGE_CODES.has(error.code) && error.details.path === undefined)
      throw new UsageError(`${flag}: ${error.message}`, { flag });
    // The partition's interval, injected into the spec, broke Druid's rules (not on the spec's
    // segmentGranularity): the flag it came from is named before the spec's path.
    if (error instanceof InvalidSpecError && error.errors[0]?.path.startsWith(INTERVALS_PATH))
      throw new UsageError(`${flag}: ${error.message}`, { flag, errors: error.errors });
    if (error instanceof InvalidSpecError) throw reportInvalidSpec(templatePath, error);
    throw error;
  }
  for (const w of plan.warnings) process.stderr.write(`warning: ${w.path}: ${w.message}\n`);
  const monitor = new OutageMonitor(systemClock);
  const client = await connectWatched(flags, monitor);
  // Planned with Druid 33's rules (before connecting); what the cluster's own release refuses stops here.
  const release = releaseToCheck(await client.capabilities());
  const refused = release === null ? [] : releaseErrors(plan, release);
  if (release !== null && refused.length > 0) {
    await client.close();
    // The warnings were said above; the errors name the partition and the release's rule.
    throw reportInvalidSpec(templatePath, new InvalidSpecError(refused, { template: templatePath }), release);
  }
  let store: Store | undefined;
  try {
    store = await openLedger(flags.ledger);
    const stored = await createPlannedJob(store, plan, "cli", flags.new === true);
    const { job, changed, busy } = stored.created
      ? { job: stored.job, changed: [], busy: [] }
      : await adoptSources(store, stored.job, plan.tasks, "cli");
    if (!flags.json) {
      const finished = stored.created ? null : alreadyFinished(job);
      process.stderr.write(
        finished
          ? `${finished}\n`
          : `${stored.created ? "job" : "resuming job"} ${job.id}: ${plan.tasks.length} partition(s) of ${plan.datasource}, ledger ${flags.ledger}\n`,
      );
      for (const line of [...changed, ...busy]) process.stderr.write(`${line}\n`);
    }
    return await driveJob({ store, client, monitor, jobId: job.id, total: plan.tasks.length, flags });
  } finally {
    await store?.close();
    await client.close();
  }
}

/**
 * A spec refused while planning, said as `validate` says it: the warnings (an unknown field's "check the
 * spelling" often explains an error), then each distinct error once with the partitions it is in — not
 * the first of nine copies — and the error to exit with.
 */
/** `release`: the cluster's Druid release, when it is what refuses the template (Druid 33's rules let it through). */
function reportInvalidSpec(templatePath: string, error: InvalidSpecError, release?: number): SegopsError {
  const warnings = (error.details.warnings ?? []) as SpecIssue[];
  for (const w of warnings) process.stderr.write(`warning: ${w.path}: ${w.message}\n`);
  const distinct = summariseIssues(error.errors);
  for (const e of distinct) process.stderr.write(`${formatSummary(e)}\n`);
  const partitions = new Set(distinct.flatMap((e) => e.partitions)).size;
  const n = distinct.length;
  const where = partitions > 1 ? ` in ${partitions} partitions` : "";
  return new SegopsError(
    "InvalidSpec",
    release === undefined
      ? `${templatePath}: ${n} error${n === 1 ? "" : "s"}${where}, nothing submitted (segops validate ${templatePath} --interval … checks one partition)`
      : `${templatePath}: ${n} error${n === 1 ? "" : "s"} on the cluster's Druid ${release}, nothing submitted (segops validate ${templatePath} --interval … --druid-version ${release} checks one partition)`,
    { errors: error.errors, warnings },
  );
}

/** The cluster the flags point at (no connection is made). */
async function clusterOfFlags(flags: DruidFlags): Promise<ClusterBinding> {
  const client = new DruidClient(druidOptionsFrom(flags));
  try {
    return clusterOf(client);
  } finally {
    await client.close();
  }
}

/** Runs a stored job to the end (or deadline / Ctrl-C) and prints its report; returns the exit code. */
export async function driveJob(options: {
  store: Store;
  client: DruidClient;
  /** Fed by the client's attempts: bounds an outage and shows it in the progress display. */
  monitor?: OutageMonitor;
  jobId: string;
  total: number;
  flags: Pick<IngestFlags, "maxConcurrency" | "tick" | "lease" | "deadline" | "json"> &
    // A kind's command has no --poison-after, and one that waits for nothing no --handoff-timeout.
    Partial<Pick<IngestFlags, "druidOutageTimeout" | "poisonAfter" | "handoffTimeout">>;
  /** The kinds of work it runs and reports. @default KINDS (every kind of this build) */
  kinds?: readonly KindOfWork<DruidServices>[];
}): Promise<number> {
  const { store, client, jobId, flags } = options;
  const clock = systemClock;
  const interrupt = new AbortController();
  const planned = await store.getJob(jobId);
  if (!planned) throw new UsageError(`no job ${jobId} in the ledger`, { jobId });
  const blocked = new BlockedCondition();
  const progress = startProgress({
    mode: progressMode(flags.json === true),
    store,
    jobId,
    total: options.total,
    clock,
    ...(options.monitor ? { outage: options.monitor } : {}),
    blocked,
  });
  const onSignal = () => {
    interrupt.abort();
    // stderr even with --json (stdout carries only the report), after the bar is cleared off the screen.
    void progress.say(`interrupted: handing work back; resume with ${resumeHint(planned)}`);
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  let result: EngineResult;
  try {
    result = await runIngestJob({
      store,
      client,
      clock,
      jobId,
      tickMs: flags.tick,
      leaseMs: flags.lease,
      maxConcurrency: flags.maxConcurrency,
      poisonAfter: flags.poisonAfter ?? DEFAULTS.poisonAfter,
      handoffTimeoutMs: (flags.handoffTimeout ?? DEFAULTS.handoffTimeoutMs / 1000) * 1000,
      signal: interrupt.signal,
      ...(options.kinds ? { kinds: options.kinds } : {}),
      ...(flags.deadline !== undefined ? { deadline: clock.now() + flags.deadline * 1000 } : {}),
      onStep: (task, step, detail) => progress.step(task, step, detail),
      onAdmission: (admission) => blocked.attach(admission),
      ...(options.monitor
        ? {
            outage: {
              monitor: options.monitor,
              timeoutMs: (flags.druidOutageTimeout ?? DEFAULTS.druidOutageTimeoutMs / 1000) * 1000,
            },
          }
        : {}),
    });
  } finally {
    await progress.stop();
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
  const job = await store.getJob(jobId);
  if (!job) throw new UsageError(`job ${jobId} vanished from the ledger`);
  const report = await jobReport(store, job, options.kinds);
  if (result.outage) {
    // Druid stopped answering: the work was handed back like on Ctrl-C; say so, and exit 4 (unreachable).
    process.stderr.write(
      `Druid has not answered since ${new Date(result.outage.since).toISOString()} (${result.outage.lastError ?? "no answer"}); stopped with the work handed back: resume with ${resumeHint(job)} once it is back\n`,
    );
    process.stdout.write(
      flags.json
        ? `${JSON.stringify({ ...report, exitCode: ExitCode.Unreachable, outage: result.outage }, null, 2)}\n`
        : `${formatJobReport(report)}\n`,
    );
    return ExitCode.Unreachable;
  }
  process.stdout.write(flags.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatJobReport(report)}\n`);
  return report.exitCode;
}
