import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Command } from "commander";
import { parseInterval } from "../../core/interval.js";
import { DruidClient } from "../../druid/client.js";
import { planIngestJob } from "../../ingest/plan.js";
import type { IngestProgress } from "../../ingest/types.js";
import {
  DEMO_DAYS,
  DEMO_FAULTS,
  DEMO_FROM,
  DEMO_POISON_DAY,
  demoTemplate,
  writeDemoData,
} from "../../jobs/demo.js";
import { startSim } from "../../sim/server.js";
import { openLedger } from "../context.js";
import { driveJob } from "./ingest-common.js";
import { writers } from "./render.js";

/** `segops demo`'s implementation, loaded when the command runs (its flags are in demo.ts). */

export interface DemoFlags {
  dir: string;
  timeScale: number;
  json?: boolean;
}

export async function demoAction(flags: DemoFlags, cmd: Command): Promise<void> {
  const { err } = writers(cmd);
  const dir = resolve(flags.dir);
  const dataDir = join(dir, "data");
  writeDemoData(dataDir);
  mkdirSync(dir, { recursive: true });
  const ledgerPath = join(dir, "ledger.db");
  // A fresh ledger each time: the demo shows a whole run, not a resumed one.
  for (const f of [ledgerPath, `${ledgerPath}-wal`, `${ledgerPath}-shm`]) rmSync(f, { force: true });
  const templatePath = join(dir, "clicks.template.json");
  writeFileSync(templatePath, `${JSON.stringify(demoTemplate(), null, 2)}\n`);

  const sim = await startSim({
    timeScale: flags.timeScale,
    capacity: 4,
    handoffDelayMs: 4000,
    faults: DEMO_FAULTS,
    seed: 42,
  });
  const client = new DruidClient({ url: sim.url, retry: { baseMs: 100, capMs: 1000 } });
  const ledgerUrl = `sqlite:${ledgerPath}`;
  const store = await openLedger(ledgerUrl);
  try {
    if (!flags.json) {
      err(
        `segops demo: Druid emulator at ${sim.url} (faults: flaky submits, a leader failover, status outages)\n`,
      );
      err(`data: ${DEMO_DAYS} days of clicks in ${dataDir} (${DEMO_POISON_DAY} has a corrupt row)\n`);
    }
    const end = new Date(Date.parse(`${DEMO_FROM}T00:00:00Z`) + DEMO_DAYS * 86_400_000)
      .toISOString()
      .slice(0, 10);
    const plan = planIngestJob({
      kind: "backfill",
      template: { kind: "task", value: demoTemplate() as never },
      templateName: templatePath,
      range: parseInterval(`${DEMO_FROM}/${end}`),
      vars: { dataDir },
    });
    await store.createJob(plan.job, plan.tasks, "demo");
    const code = await driveJob({
      store,
      client,
      jobId: plan.job.id,
      total: plan.tasks.length,
      flags: {
        maxConcurrency: 4,
        poisonAfter: 3,
        handoffTimeout: 120,
        tick: 100,
        lease: 10_000,
        json: flags.json === true,
      },
    });
    const tasks = await store.listTasks(plan.job.id);
    const dead = tasks.filter((t) => t.state === "dead");
    const poison = dead.length === 1 ? dead[0] : undefined;
    const asDesigned =
      code === 1 &&
      tasks.filter((t) => t.state === "done").length === DEMO_DAYS - 1 &&
      poison !== undefined &&
      (poison.payload as { interval?: string }).interval?.startsWith(DEMO_POISON_DAY) === true &&
      ((poison.progress as IngestProgress).failures ?? []).every(
        (f) => f.failureClass === "parse-exceptions",
      );
    const stats = sim.stats();
    if (!flags.json) {
      err(
        `\nemulator saw ${stats.submissions.filter((s) => s.accepted).length} accepted submissions, ${stats.faultsInjected} injected faults, ${stats.requests["POST /druid/indexer/v1/taskStatus"] ?? 0} bulk status requests\n`,
      );
      err(`ledger: ${ledgerUrl}\n`);
      err(`  npx segops status --ledger ${ledgerUrl}\n`);
      // The dead-letter queue only when something is in it.
      if (dead.length > 0) err(`  npx segops dlq list --ledger ${ledgerUrl}\n`);
      err(
        asDesigned
          ? `demo ran as designed: ${DEMO_DAYS - 1} partitions done and audited, ${DEMO_POISON_DAY} dead-lettered as poison (fix its file and run segops dlq retry)\n`
          : "demo did NOT run as designed: see the report above\n",
      );
    }
    process.exitCode = asDesigned ? 0 : 1;
  } finally {
    await store.close();
    await client.close();
    await sim.close();
  }
}
