import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { UsageError } from "../../src/core/errors.js";
import { emptyPartitionView, type KindOfWork, type KindRequest } from "../../src/driver/kind.js";
import { TaskProgress } from "../../src/driver/signals.js";
import { KINDS } from "../../src/jobs/kinds.js";
import { openStore } from "../../src/ledger/open.js";
import type { TaskRow } from "../../src/ledger/types.js";
import { requestKeyOf } from "../../src/ops/request.js";
import { startSim } from "../../src/sim/server.js";
import type { DruidServices } from "../../src/work/services.js";
import { segopsInProcess } from "../helpers/cli-in-process.js";
import { startTestService } from "../helpers/serve.js";

/**
 * A kind of work declared in one object and registered in one line gets its API route, its OpenAPI entry,
 * its dry run, its run by the service's worker and its partition drawer, and its CLI command from its flag
 * table — with no other file changed. The toy kind here counts to a number per label, one checkpointed
 * step at a time.
 */

const TallyPayload = z.looseObject({ label: z.string(), target: z.number().int() });
const TallyProgress = z.looseObject({ count: z.number().int().optional() });

const TallyRequest = z.strictObject({
  datasource: z.string().min(1),
  labels: z.array(z.string().regex(/^[a-z]+$/)).min(1),
  target: z.number().int().min(1).max(5),
  dryRun: z.boolean().optional(),
});

const tallyRequest: KindRequest<z.infer<typeof TallyRequest>> = {
  resource: "tallies",
  operationId: "createTally",
  summary: "Count to a number for each label (a toy kind of work)",
  schema: TallyRequest,
  command: {
    name: "tally",
    description: "count to a number for each label (a toy kind of work)",
    datasource: "whose tally it is",
    unit: "label(s) to count",
    flags: [
      {
        flag: "--label <name>",
        description: "a label to count for (repeatable)",
        field: "labels",
        value: "list",
      },
      {
        flag: "--target <n>",
        description: "how far to count",
        field: "target",
        value: "count",
        required: true,
      },
      {
        flag: "--dry-run",
        description: "show the labels, count nothing",
        field: "dryRun",
        value: "switch",
        sets: true,
      },
    ],
    examples: ["tally toys --label a --label b --target 3"],
  },
  key: (r, cluster) =>
    requestKeyOf(
      "tally",
      { datasource: r.datasource, labels: [...r.labels].sort(), target: r.target },
      cluster,
    ),
  async plan(_context, r) {
    if (r.labels.includes("never"))
      throw new UsageError('labels: "never" is not a label', { path: "labels", problem: "no never" });
    const job = `tally_${r.datasource}_${r.labels.join("-")}_${r.target}`;
    return {
      job: { id: job, kind: "tally", options: { datasource: r.datasource } },
      tasks: r.labels.map((label) => ({
        id: `${job}/${label}`,
        kind: "tally",
        payload: { label, target: r.target },
      })),
      items: r.labels.map((label) => ({ interval: label, what: `count to ${r.target}` })),
    };
  },
};

const tallyKind: KindOfWork<DruidServices, never> = {
  name: "tally",
  plan: () => {
    throw new Error("planned through its request");
  },
  payload: TallyPayload,
  progress: TallyProgress,
  runner: () => ({
    kind: "tally",
    concurrency: 2,
    maxRetry: 0,
    progressDelayMs: 1,
    handler: async (task, ctx) => {
      const { target } = TallyPayload.parse(task.payload);
      const count = (TallyProgress.parse(task.progress).count ?? 0) + 1;
      if (!(await ctx.checkpoint({ count }))) throw new Error("checkpoint refused");
      if (count < target) throw new TaskProgress(`counted ${count}`, 1);
    },
  }),
  describe: (task: TaskRow) => ({
    ...emptyPartitionView(TallyPayload.parse(task.payload).label),
    step: `counted ${TallyProgress.parse(task.progress).count ?? 0}`,
    rows: TallyProgress.parse(task.progress).count ?? null,
  }),
  activeDruidTasks: () => [],
  request: tallyRequest,
};

const kinds = [...KINDS, tallyKind]; // the one registration line

describe("a kind registered in one line", () => {
  it("gets its API route, OpenAPI entry, dry run, worker and partition drawer", async () => {
    const t = await startTestService({ service: { kinds } });

    const doc = (await t.call("/openapi.json")).json;
    expect(doc.paths["/api/v1/tallies"].post.operationId).toBe("createTally");
    expect(Object.keys(doc.paths["/api/v1/tallies"].post.requestBody.content)).toEqual(["application/json"]);

    const body = { datasource: "toys", labels: ["a", "b"], target: 3 };
    const dry = await t.call("/api/v1/tallies", { json: { ...body, dryRun: true } });
    expect(dry.status).toBe(200);
    expect(dry.json).toMatchObject({ kind: "tally", datasource: "toys", dryRun: true, tasks: 2 });
    expect(dry.json.items).toEqual([
      { interval: "a", what: "count to 3" },
      { interval: "b", what: "count to 3" },
    ]);
    expect(await t.store.listJobs()).toEqual([]);

    // Bad input: the schema's field, or the plan's own refusal, named; nothing stored.
    const bad = await t.call("/api/v1/tallies", { json: { ...body, target: 9 } });
    expect([bad.status, bad.json.errors[0].path]).toEqual([400, "target"]);
    const refused = await t.call("/api/v1/tallies", { json: { ...body, labels: ["never"] } });
    expect([refused.status, refused.json.errors[0].path]).toEqual([400, "labels"]);
    expect(await t.store.listJobs()).toEqual([]);

    const created = await t.call("/api/v1/tallies", { json: body });
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    const again = await t.call("/api/v1/tallies", { json: body });
    expect([again.status, again.json.id]).toEqual([200, id]);
    const ended = await t.call(`/api/v1/jobs/${encodeURIComponent(id)}/wait?timeout=60`);
    expect(ended.json).toMatchObject({ ended: true, job: { state: "done", counts: { done: 2 } } });

    // The drawer describes the partition by its kind.
    const drawer = await t.call(`/api/v1/partitions/${encodeURIComponent(`${id}/a`)}`);
    expect(drawer.status).toBe(200);
    expect(drawer.json).toMatchObject({ interval: "a", step: "counted 3", rows: 3, state: "done" });
    const grid = await t.call(`/api/v1/jobs/${encodeURIComponent(id)}/grid`);
    expect(grid.json.items.map((c: { interval: string }) => c.interval)).toEqual(["a", "b"]);
  });

  it("is not served where it is not registered", async () => {
    const t = await startTestService();
    expect((await t.call("/openapi.json")).json.paths["/api/v1/tallies"]).toBeUndefined();
    expect((await t.call("/api/v1/tallies", { json: {} })).status).toBe(404);
  });
});

/** `segops …` in this process with the kinds given (by default the toy's). */
const segops = (args: string[], options: { kinds?: typeof kinds } = { kinds }) =>
  segopsInProcess(args, options);

describe("a kind registered in one line, on the command line", () => {
  const work = mkdtempSync(join(tmpdir(), "segops-tally-"));
  const ledgerPath = join(work, "ledger.db");
  let druid: Awaited<ReturnType<typeof startSim>> | undefined;
  afterAll(async () => {
    await druid?.close();
  });

  it("gets its command: help, dry run, a run to done, and bad flags named", async () => {
    druid = await startSim({ timeScale: 1000 });
    const common = ["--druid", druid.url, "--ledger", `sqlite:${ledgerPath}`, "--tick", "20"];
    const tally = ["tally", "toys", "--label", "a", "--label", "b", "--target", "3", ...common];

    const help = await segops(["--help"]);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/^ {2}tally \[options\] <datasource> +count to a number for each label/m);
    const own = await segops(["tally", "--help"]);
    expect(own.code).toBe(0);
    expect(own.out).toContain("--label <name>");
    expect(own.out).toContain("--target <n>");
    expect(own.out).toContain("$ segops tally toys --label a --label b --target 3");

    // A dry run prints its items and writes nothing.
    const dry = await segops([...tally, "--dry-run"]);
    expect(dry.code, dry.err).toBe(0);
    expect(dry.out).toContain("tally toys (dry run, nothing changed): 2 label(s) to count");
    expect(dry.out).toContain("  a: count to 3\n  b: count to 3\n");
    const dryJson = await segops([...tally, "--dry-run", "--json"]);
    expect(JSON.parse(dryJson.out)).toEqual({
      job: "tally_toys_a-b_3",
      dryRun: true,
      items: [
        { interval: "a", what: "count to 3" },
        { interval: "b", what: "count to 3" },
      ],
    });
    expect(existsSync(ledgerPath)).toBe(false);

    // Bad input: the flag named with what it expects, exit 2, nothing written.
    const tooFar = await segops(["tally", "toys", "--label", "a", "--target", "9", ...common]);
    expect([tooFar.code, tooFar.err]).toEqual([2, expect.stringMatching(/^segops: --target: .*<=5/)]);
    const badLabel = await segops(["tally", "toys", "--label", "A", "--target", "2", ...common]);
    expect([badLabel.code, badLabel.err]).toEqual([2, expect.stringMatching(/^segops: --label: /)]);
    const refused = await segops(["tally", "toys", "--label", "never", "--target", "2", ...common]);
    expect([refused.code, refused.err]).toEqual([2, 'segops: --label: "never" is not a label\n']);
    const notCount = await segops(["tally", "toys", "--label", "a", "--target", "x", ...common]);
    expect(notCount.code).toBe(2);
    expect(notCount.err).toContain("--target must be a whole number");
    expect(existsSync(ledgerPath)).toBe(false);

    // A run creates the job and drives it to the end: the report describes each label by its kind.
    const run = await segops([...tally, "--json"]);
    expect(run.code, run.err).toBe(0);
    const report = JSON.parse(run.out);
    expect(report).toMatchObject({ job: "tally_toys_a-b_3", state: "done", counts: { done: 2 } });
    expect(report.partitions.map((p: { interval: string; rows: number }) => [p.interval, p.rows])).toEqual([
      ["a", 3],
      ["b", 3],
    ]);
    const ledger = await openStore(`sqlite:${ledgerPath}`);
    expect((await ledger.listJobs({ kind: "tally" })).map((j) => j.state)).toEqual(["done"]);

    // A stored job of the kind (stopped before it ran) is resumed like any other, where it is registered.
    const [first] = await ledger.listTasks("tally_toys_a-b_3");
    await ledger.createJob({ id: "tally_stopped", kind: "tally", options: {} }, [
      { id: "tally_stopped/a", kind: "tally", payload: first!.payload },
    ]);
    await ledger.close();
    const unknown = await segops(["resume", "tally_stopped", ...common], {});
    expect([unknown.code, unknown.err]).toEqual([2, expect.stringContaining("is a tally job; resume runs")]);
    const resumed = await segops(["resume", "tally_stopped", ...common, "--json"]);
    expect(resumed.code, resumed.err).toBe(0);
    expect(JSON.parse(resumed.out)).toMatchObject({
      job: "tally_stopped",
      state: "done",
      counts: { done: 1 },
    });

    // Not registered, no command.
    expect((await segops(["tally", "toys", "--target", "1"], {})).code).toBe(2);
  });
});
