import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import { sqlCount } from "../helpers/sql-count.js";

/**
 * docs/getting-started.md's blocks marked `<!-- test -->`, run in order by bash, exactly as written, with
 * `segops` on the PATH (this checkout's CLI) and `DRUID` pointing at the emulator: the path a new user takes
 * has to work as the page says.
 */

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PAGE = readFileSync(join(ROOT, "docs/getting-started.md"), "utf8");

/** The tested blocks: a fenced block right after a `<!-- test -->` line. */
function testedBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/<!-- test -->\n```bash\n([\s\S]*?)\n```/g)].map((m) => m[1] as string);
}

interface Ran {
  code: number | null;
  out: string;
}

function bash(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn("bash", ["-euo", "pipefail", "-c", script], {
      cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      out += d;
    });
    child.on("close", (code) => resolve({ code, out }));
  });
}

let sim: SimHandle;
let work: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  sim = await startSim({ timeScale: 200, capacity: 6, handoffDelayMs: 1000, baseDurationMs: 2000, seed: 7 });
  work = mkdtempSync(join(tmpdir(), "segops-getting-started-"));
  const bin = mkdtempSync(join(tmpdir(), "segops-bin-"));
  const shim = join(bin, "segops");
  writeFileSync(
    shim,
    `#!/bin/sh\nexec "${process.execPath}" --import "${import.meta.resolve("tsx")}" "${join(ROOT, "src/cli/bin.ts")}" "$@"\n`,
  );
  chmodSync(shim, 0o755);
  // tsx by its path: the commands run in the user's own directory, where no node_modules is.
  env = { ...process.env, PATH: `${bin}:${process.env.PATH}`, DRUID: sim.url };
});

afterAll(async () => {
  await sim.close();
});

describe("docs/getting-started.md", () => {
  const blocks = testedBlocks(PAGE);

  it("marks the steps a test can run: the data, doctor, validate and one day, the backfill and its audit", () => {
    expect(blocks).toHaveLength(4);
    expect(blocks.join("\n")).toMatch(
      /segops doctor[\s\S]*segops validate[\s\S]*segops run[\s\S]*segops backfill/,
    );
  });

  it("runs as written against the emulator: every block exits 0, and Druid serves the week's rows", async () => {
    const outputs: string[] = [];
    for (const block of blocks) {
      const ran = await bash(block, work, env);
      expect(ran.code, `${block}\n---\n${ran.out}`).toBe(0);
      outputs.push(ran.out);
    }
    const [, doctor, oneDay, backfill] = outputs as [string, string, string, string];
    expect(doctor).toMatch(/Druid \d+/);
    expect(oneDay).toMatch(/^ok: daily\.json/m);
    expect(backfill).toMatch(/events/);
    // 7 days × 24 rows, each day once: the day `run` loaded first was not loaded again by the backfill.
    expect(await sqlCount(sim.url, "events")).toBe(7 * 24);
  }, 300_000);
});
