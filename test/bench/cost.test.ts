import { expect, it } from "vitest";
import { runCostBench } from "../../bench/cost.js";

/**
 * A smoke test of the cost benchmark's code (no timing: the figures are `npm run bench`'s): on a small seeded
 * history, each of the three pollers sees every partition succeed, and the per-endpoint tables name what each
 * sends — the baselines only submissions and per-task status GETs, segops its bulk lookup and handoff reads.
 */
it("drives a small backfill with segops and both baselines and counts each one's requests by endpoint", async () => {
  const result = await runCostBench({
    partitions: [4],
    timeScale: 50,
    history: { tasks: 200, segments: 400, dataSources: 3 },
  });
  expect(result.problems).toEqual([]);
  const [summary, endpoints] = result.tables.slice(1);
  expect(summary).toMatch(/\*\*segops\*\*/);
  const rows = (endpoints ?? "").split("\n").filter((l) => /^\| (segops|seed|operator) \|/.test(l));
  const of = (poller: string) =>
    rows.filter((l) => l.startsWith(`| ${poller} |`)).map((l) => l.split("|")[2]?.trim());
  for (const baseline of ["seed", "operator"])
    expect(of(baseline)?.sort()).toEqual([
      "`GET /druid/indexer/v1/task/:taskId/status`",
      "`POST /druid/indexer/v1/task`",
    ]);
  expect(of("segops")).toEqual(
    expect.arrayContaining([
      "`POST /druid/indexer/v1/taskStatus`",
      "`POST /druid/coordinator/v1/metadata/datasources/:dataSource/segments`",
    ]),
  );
  const figures = result.figures?.cost4 as Record<
    string,
    { requestsPerTask: number; bytesPerTask: number; handoffSeenP99Ms?: number }
  >;
  for (const poller of ["segops", "seed", "operator"]) {
    expect(figures[poller]?.requestsPerTask).toBeGreaterThanOrEqual(2);
    expect(figures[poller]?.bytesPerTask).toBeGreaterThan(0);
  }
  // The floor rows (not pollers) sit beside the three, from the same run: the cheapest status entry measured
  // is a bulk answer's share per id asked (the ids counted from the requests), below a per-task GET's.
  expect(summary?.match(/\| floor \(not a poller\): every finish seen within (2|1) s/g)).toHaveLength(2);
  const floors = result.figures?.cost4 as Record<
    string,
    { looksPerTask: number; statusEntrySource: string; statusEntryBytes: number; bytesPerTask: number }
  >;
  expect(floors.floor2s?.statusEntrySource).toMatch(/^segops' bulk `POST \/taskStatus`: .* ids asked$/);
  expect(floors.floor2s?.looksPerTask).toBeGreaterThanOrEqual(1);
  expect(floors.floor1s?.looksPerTask).toBeGreaterThan(floors.floor2s?.looksPerTask ?? Number.NaN);
  expect(floors.floor1s?.bytesPerTask).toBeGreaterThan(floors.floor2s?.bytesPerTask ?? Number.NaN);
  // segops' handoff gate saw every partition's segments served (a lag measured for each, never negative).
  expect(figures.segops?.handoffSeenP99Ms).toBeGreaterThanOrEqual(0);
  expect(result.notes.join("\n")).toMatch(
    /segops saw a handoff .* after the emulator served the segments \(4 partitions;/,
  );
}, 120_000);
