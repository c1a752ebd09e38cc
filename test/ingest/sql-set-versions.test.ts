import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import { runCli } from "../helpers/cli-process.js";
import { writeDailyDataset } from "../helpers/dataset.js";

/**
 * SET statements in an SQL template across releases (apache/druid #17894, Druid 34): on an emulated 33, which
 * refuses them as several statements, segops sends them in the request context and the backfill runs with
 * them; a SET over a key segops pins is refused before anything is submitted, on any release.
 */

const SIGNATURE =
  '[{"name":"ts","type":"string"},{"name":"channel","type":"string"},{"name":"added","type":"long"}]';

function template(datasource: string, sets: string): string {
  return [
    sets,
    `REPLACE INTO "${datasource}" OVERWRITE WHERE __time >= TIMESTAMP '{{start}}' AND __time < TIMESTAMP '{{end}}'`,
    `SELECT TIME_PARSE("ts") AS __time, "channel", "added"`,
    `FROM TABLE(EXTERN('{"type":"local","baseDir":"{{var.dataDir}}","filter":"events-{{start:yyyy-MM-dd}}.json"}', '{"type":"json"}', '${SIGNATURE}'))`,
    "PARTITIONED BY DAY",
    "",
  ].join("\n");
}

const sims: SimHandle[] = [];
let old: SimHandle;
beforeAll(async () => {
  old = await startSim({
    druidVersion: 33,
    timeScale: 200,
    capacity: 6,
    handoffDelayMs: 500,
    baseDurationMs: 2000,
  });
  sims.push(old);
});
afterAll(async () => {
  for (const s of sims) await s.close();
});

function args(sim: SimHandle, datasource: string, sets: string): string[] {
  const work = mkdtempSync(join(tmpdir(), `segops-set-${datasource}-`));
  const dataDir = writeDailyDataset({ from: "2026-07-01", days: 2, rowsPerDay: 10, dir: join(work, "data") });
  const file = join(work, "daily.sql");
  writeFileSync(file, template(datasource, sets));
  return [
    "backfill",
    file,
    "--from",
    "2026-07-01",
    "--to",
    "2026-07-03",
    "--var",
    `dataDir=${dataDir}`,
    "--druid",
    sim.url,
    "--ledger",
    `sqlite:${join(work, "ledger.db")}`,
    "--tick",
    "20",
    "--json",
  ];
}

describe("SET statements in SQL templates by Druid release", () => {
  it("on Druid 33 sends the template's SETs in the request context: the queries run with them", async () => {
    const run = await runCli(args(old, "set33", "SET maxNumTasks = 3;\nSET sqlTimeZone = 'Etc/UTC';")).done;
    expect(run.code, run.stderr).toBe(0);
    const controllers = [...old.engine.tasks.values()].filter(
      (t) => t.type === "query_controller" && t.dataSource === "set33",
    );
    expect(controllers).toHaveLength(2);
    // maxNumTasks = 3 reached Druid (a controller and two workers): the context carried it.
    expect(controllers.every((t) => t.plan.slots === 3)).toBe(true);
    // No submission was refused as several statements.
    const refused = old.stats().submissions.filter((s) => s.status >= 400);
    expect(refused).toEqual([]);
  }, 90_000);

  it("refuses a SET over the query id segops pins, naming the statement's position, before submitting", async () => {
    const before = old.stats().submissions.length;
    const run = await runCli(args(old, "setpinned", "SET maxNumTasks = 2;\nSET sqlQueryId = 'mine';")).done;
    expect(run.code).toBe(2);
    expect(run.stdout + run.stderr).toContain("query.set.sqlQueryId");
    expect(run.stdout + run.stderr).toContain("line 2, column 1: SET sqlQueryId = 'mine';");
    expect(old.stats().submissions.length).toBe(before);
  }, 90_000);
});
