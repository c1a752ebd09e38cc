import { systemClock } from "../../core/clock.js";
import { UsageError } from "../../core/errors.js";
import type { KindCommand, KindFlag, KindRequest, PlannedRequest } from "../../driver/kind.js";
import { clusterOf } from "../../druid/cluster.js";
import { OutageMonitor } from "../../druid/outage.js";
import { openJobOfRequest } from "../../jobs/actions.js";
import { KINDS } from "../../jobs/kinds.js";
import { NoLedgerError, openStore } from "../../ledger/open.js";
import type { Store } from "../../ledger/store.js";
import type { JobRow } from "../../ledger/types.js";
import { openLedger } from "../context.js";
import { connectWatched, driveJob } from "./ingest-common.js";
import { given, type KindCommandFlags, type Kinds, requestBodyOf } from "./kind-flags.js";

/**
 * What the command of every kind that declares one does (its flags come from the kind's table, in
 * kind-command.ts): the flags become the kind's request body, checked by the request's schema; the
 * request is planned as the API plans it; a dry run prints the plan; otherwise the same request's open job
 * is resumed, or the planned job created, and run to its end here. Loaded when such a command runs.
 */

const longName = (flag: KindFlag): string => flag.flag.split(" ")[0] as string;

/** The flag (or the argument) a request field comes from, for messages. */
function flagOf(command: KindCommand, field: string): string {
  if (field === "datasource") return "<datasource>";
  const flag = command.flags.find((f) => f.field === field);
  return flag ? longName(flag) : field;
}

const listed = (words: readonly string[]): string =>
  words.length < 2 ? words.join("") : `${words.slice(0, -1).join(", ")} and ${words.at(-1)}`;

/** The request body of the command line, checked whole: an error names the flag and what it expects. */
function bodyOf(
  command: KindCommand,
  request: KindRequest<unknown>,
  datasource: string,
  flags: KindCommandFlags,
): { datasource: string; dryRun?: boolean | undefined } {
  for (const group of command.exactlyOne ?? []) {
    const members = command.flags.filter((f) => group.includes(longName(f)));
    if (members.filter((f) => given(f, flags)).length !== 1)
      throw new UsageError(`give exactly one of ${listed(members.map((f) => f.flag))}`, {
        flag: group.join(", "),
      });
  }
  const parsed = request.schema.safeParse(requestBodyOf(command, datasource, flags));
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const flag = flagOf(command, String(issue?.path[0] ?? ""));
  throw new UsageError(`${flag}: ${issue?.message ?? "invalid"}`, { flag });
}

/**
 * A refusal of the plan in the request's words, said in the command's: the field it starts with, and any
 * field named in camelCase (`maxSegmentMb`), become their flags; plain words are left as they are.
 */
function inFlagWords(command: KindCommand, message: string): string {
  let text = message;
  for (const flag of command.flags) {
    if (text.startsWith(`${flag.field}:`) || text.startsWith(`${flag.field} (`))
      text = longName(flag) + text.slice(flag.field.length);
    if (/[A-Z]/.test(flag.field)) text = text.replace(new RegExp(`\\b${flag.field}\\b`, "g"), longName(flag));
  }
  return text;
}

async function planOf(command: KindCommand, plan: () => Promise<PlannedRequest>): Promise<PlannedRequest> {
  try {
    return await plan();
  } catch (error) {
    if (!(error instanceof UsageError) || typeof error.details.path !== "string") throw error;
    const flag = flagOf(command, error.details.path);
    throw new UsageError(inFlagWords(command, error.message), { ...error.details, flag });
  }
}

/** The plan's items (and notes), a line each. */
function planLines(planned: PlannedRequest, notes: boolean): string {
  const lines = [
    ...planned.items.map((i) => `${i.interval}: ${i.what}`),
    ...(notes ? (planned.notes ?? []) : []),
  ];
  return lines.map((l) => `  ${l}\n`).join("");
}

/** A plan not run (a dry run, or nothing to do): JSON in the kind's words, or a line per item. */
function printPlan(
  command: KindCommand,
  datasource: string,
  planned: PlannedRequest,
  dryRun: boolean,
  json: boolean,
): void {
  if (json) {
    const shown = planned.detail ?? { items: planned.items };
    process.stdout.write(`${JSON.stringify({ job: planned.job.id, dryRun, ...shown }, null, 2)}\n`);
    return;
  }
  const confirm = command.flags.find((f) => f.field === "dryRun" && f.value === "switch" && !f.sets);
  const head = dryRun
    ? ` (dry run, nothing changed${confirm ? `; ${longName(confirm)} to run it` : ""})`
    : "";
  const count = planned.tasks.length === 0 ? "nothing to do" : `${planned.tasks.length} ${command.unit}`;
  process.stdout.write(`${command.name} ${datasource}${head}: ${count}\n${planLines(planned, true)}`);
}

/** The ledger to plan with: the one named if it exists, else an empty one (a dry run creates no file). */
async function existingLedger(url: string): Promise<Store | null> {
  try {
    return await openLedger(url, { mustExist: true });
  } catch (error) {
    if (error instanceof NoLedgerError) return null;
    throw error;
  }
}

async function openJob(store: Store, id: string): Promise<JobRow | null> {
  const job = await store.getJob(id);
  return job?.state === "open" ? job : null;
}

export async function kindCommandAction(
  command: KindCommand,
  datasource: string,
  flags: KindCommandFlags,
  kinds: Kinds = KINDS,
): Promise<void> {
  const kind = kinds.find((k) => k.request?.command?.name === command.name);
  const request = kind?.request;
  if (!kind || !request)
    throw new Error(`no kind of work of this build declares the command ${command.name}`);
  const body = bodyOf(command, request, datasource, flags);
  const dryRun = body.dryRun ?? request.dryRunByDefault === true;
  const monitor = new OutageMonitor(systemClock);
  const client = await connectWatched(flags, monitor);
  const stores: Store[] = [];
  try {
    const existing = await existingLedger(flags.ledger);
    if (existing) stores.push(existing);
    const cluster = clusterOf(client);
    const key = request.key(body, cluster);
    const drive = (store: Store, jobId: string, total: number) =>
      driveJob({ store, client, monitor, jobId, total, flags, kinds });
    const resume = async (store: Store, open: JobRow) => {
      const total = Object.values(await store.countTasks(open.id)).reduce((a, b) => a + b, 0);
      if (!flags.json)
        process.stderr.write(`resuming job ${open.id}: ${total} partition(s), ledger ${flags.ledger}\n`);
      process.exitCode = await drive(store, open.id, total);
    };
    // The same request's job still open (a run that crashed or was stopped): resumed before anything is
    // planned again, so its Druid tasks in flight keep their ids and a plan that would refuse now (its
    // steps check again before they act) cannot strand it.
    const open = existing && !dryRun ? await openJobOfRequest(existing, kind.name, key) : null;
    if (existing && open) return await resume(existing, open);
    const planning = existing ?? (await openStore("sqlite::memory:"));
    if (!existing) stores.push(planning);
    const context = { client, store: planning, cluster, now: () => systemClock.now() };
    const planned = await planOf(command, () => request.plan(context, body));
    if (dryRun) return printPlan(command, datasource, planned, true, flags.json === true);
    const store = existing ?? (await openLedger(flags.ledger));
    if (!existing) stores.push(store);
    // A job stored before requests carried their key, found by the id the request alone names (a rollback).
    const named = await openJob(store, planned.job.id);
    if (named) return await resume(store, named);
    if (planned.tasks.length === 0)
      return printPlan(command, datasource, planned, false, flags.json === true);
    const job = { ...planned.job, options: { ...planned.job.options, requestKey: key } };
    const { created } = await store.createJob(job, planned.tasks, "cli");
    if (!flags.json)
      process.stderr.write(
        `${created ? "job" : "resuming job"} ${planned.job.id}: ${datasource}, ${planned.tasks.length} ${command.unit}\n${planLines(planned, false)}`,
      );
    process.exitCode = await drive(store, planned.job.id, planned.tasks.length);
  } finally {
    for (const store of stores) await store.close();
    await client.close();
  }
}
