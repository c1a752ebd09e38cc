import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Command } from "commander";
import { afterAll, describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/main.js";

/**
 * A start of the CLI loads only what the command uses: the module graph of `segops --help` and of
 * `segops validate`, recorded by a loader hook in a real process (no timing here: see bench/startup.ts),
 * and the help of the commands whose modules are loaded only when named (src/cli/commands/index.ts).
 */

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BIN = join(ROOT, "src/cli/bin.ts");
const work = mkdtempSync(join(tmpdir(), "segops-startup-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

// Every module the ESM loader loads (its `load` hook, in the hooks thread) and, at exit, every CommonJS
// module in require's cache (what a CommonJS package requires inside itself never passes the hook).
writeFileSync(
  join(work, "hooks.mjs"),
  `import { appendFileSync } from "node:fs";
let out;
export function initialize(data) { out = data.out; }
export async function load(url, context, next) {
  appendFileSync(out, url + "\\n");
  return next(url, context);
}
`,
);
writeFileSync(
  join(work, "record.mjs"),
  `import { appendFileSync } from "node:fs";
import { createRequire, register } from "node:module";
const out = process.env.SEGOPS_MODULES_OUT;
register("./hooks.mjs", import.meta.url, { data: { out } });
const { cache } = createRequire(import.meta.url);
process.on("exit", () => appendFileSync(out, Object.keys(cache).map((f) => "file://" + f + "\\n").join("")));
`,
);

let runs = 0;
/** Runs `segops …` from source and returns its exit code, stdout and every module URL it loaded. */
function segopsLoading(args: string[]): Promise<{ code: number | null; stdout: string; modules: string[] }> {
  const out = join(work, `modules-${++runs}.txt`);
  writeFileSync(out, "");
  const recorder = pathToFileURL(join(work, "record.mjs")).href;
  const child = spawn(process.execPath, ["--import", "tsx", "--import", recorder, BIN, ...args], {
    cwd: ROOT,
    env: { ...process.env, SEGOPS_MODULES_OUT: out },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => {
    stdout += d;
  });
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) process.stderr.write(stderr);
      const modules = readFileSync(out, "utf8").split("\n").filter(Boolean);
      resolve({ code, stdout, modules: modules.map((m) => m.replaceAll("\\", "/")) });
    });
  });
}

const src = (dir: string) => pathToFileURL(join(ROOT, "src", dir)).href;
const pkg = (name: string) => `/node_modules/${name}/`;

/** What neither `--help` nor `validate` may load: the emulator, the engine, the ledger, the Druid client. */
const NEVER = {
  "src/sim/ (the emulator)": (m: string) => m.startsWith(`${src("sim")}/`),
  // The registry of kinds alone may load: it imports nothing, each kind and command is loaded on demand.
  "src/jobs/": (m: string) => m.startsWith(`${src("jobs")}/`) && !m.startsWith(src("jobs/registry.")),
  "src/ingest/": (m: string) => m.startsWith(`${src("ingest")}/`),
  "src/driver/": (m: string) => m.startsWith(`${src("driver")}/`),
  "src/ledger/": (m: string) => m.startsWith(`${src("ledger")}/`),
  pg: (m: string) => m.includes(pkg("pg")),
  "better-sqlite3": (m: string) => m.includes(pkg("better-sqlite3")),
  undici: (m: string) => m.includes(pkg("undici")),
  "cli-progress": (m: string) => m.includes(pkg("cli-progress")),
};

function loadedOf(modules: string[], forbidden: Record<string, (m: string) => boolean>): string[] {
  return Object.entries(forbidden)
    .filter(([, matches]) => modules.some(matches))
    .map(([what]) => `${what}: ${modules.find(forbidden[what] as (m: string) => boolean)}`);
}

describe("segops start-up: modules load when their command runs", () => {
  it("`segops --help` loads none of the emulator, the engine, the ledger drivers, undici or the spec toolkit", async () => {
    const { code, stdout, modules } = await segopsLoading(["--help"]);
    expect(code).toBe(0);
    // The recorder works: it saw the CLI itself and commander (a CommonJS package).
    expect(modules).toContain(pathToFileURL(join(ROOT, "src/cli/main.ts")).href);
    expect(modules.some((m) => m.includes(pkg("commander")))).toBe(true);
    expect(
      loadedOf(modules, {
        ...NEVER,
        "src/spec/": (m) => m.startsWith(`${src("spec")}/`),
        zod: (m) => m.includes(pkg("zod")),
        yaml: (m) => m.includes(pkg("yaml")),
      }),
    ).toEqual([]);
    // …and still lists every command, the ones registered only when named included.
    for (const cmd of (await buildProgram()).commands)
      expect(stdout).toMatch(new RegExp(`^  ${cmd.name()} `, "m"));
  });

  it("`segops validate` of a template loads the spec toolkit only", async () => {
    const { code, modules } = await segopsLoading([
      "validate",
      join(ROOT, "samples/templates/wikipedia-daily.json"),
      "--interval",
      "2016-06-27/P1D",
      "--var",
      `dataDir=${join(ROOT, "samples/wikipedia-sample")}`,
    ]);
    expect(code).toBe(0);
    expect(modules.some((m) => m.startsWith(`${src("spec")}/`))).toBe(true);
    expect(loadedOf(modules, NEVER)).toEqual([]);
  });
});

/** Every command's help, dlq's subcommands' included, by command path. */
function _helpOf(program: Command): Map<string, string> {
  const help = new Map<string, string>();
  const walk = (cmd: Command, path: string) => {
    help.set(path, cmd.helpInformation());
    for (const sub of cmd.commands) walk(sub, `${path} ${sub.name()}`.trim());
  };
  walk(program, "");
  return help;
}
