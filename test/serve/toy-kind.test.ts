import { describe, expect, it } from "vitest";
import { z } from "zod";
import { UsageError } from "../../src/core/errors.js";
import { emptyPartitionView, type KindOfWork, type KindRequest } from "../../src/driver/kind.js";
import { TaskProgress } from "../../src/driver/signals.js";
import { KINDS } from "../../src/jobs/kinds.js";
import type { TaskRow } from "../../src/ledger/types.js";
import type { DruidServices } from "../../src/work/services.js";
import { startTestService } from "../helpers/serve.js";

/**
 * A kind of work declared in one object and registered in one line gets its API route, its OpenAPI entry,
 * its dry run, its run by the service's worker and its partition drawer — with no other file changed. The
 * toy kind here counts to a number per label, one checkpointed step at a time.
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
