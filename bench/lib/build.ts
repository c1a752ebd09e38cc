import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
/** What the last build here compiled and what it left in dist/ (.tmp/ is not in git or the package). */
const STAMP = join(root, ".tmp", "bench-build.json");
let built: Promise<string | null> | null = null;

function files(dir: string, suffix: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(suffix))
    .sort();
}

/** The compiler's inputs: every source file's path and content, the two tsconfigs, TypeScript's version. */
function sourcesHash(): string {
  const hash = createHash("sha256");
  for (const f of ["tsconfig.json", "tsconfig.build.json", "node_modules/typescript/package.json"])
    hash.update(`${f}\0`).update(readFileSync(join(root, f)));
  for (const f of files(join(root, "src"), ".ts"))
    hash.update(`${f}\0`).update(readFileSync(join(root, "src", f)));
  return hash.digest("hex");
}

/** dist/ as it is now: each file's path, size and modification time (any other build changes them). */
function distHash(): string {
  const hash = createHash("sha256");
  for (const f of files(join(root, "dist"), "")) {
    const s = statSync(join(root, "dist", f));
    if (s.isFile()) hash.update(`${f}\0${s.size}\0${s.mtimeMs}\0`);
  }
  return hash.digest("hex");
}

function upToDate(sources: string): boolean {
  try {
    const stamp = JSON.parse(readFileSync(STAMP, "utf8")) as { sources?: string; dist?: string };
    return (
      stamp.sources === sources && stamp.dist === distHash() && existsSync(join(root, "dist/cli/bin.js"))
    );
  } catch {
    return false;
  }
}

/**
 * Compiles dist/ (`tsc -p tsconfig.build.json`) once per benchmark process, so the CLI figures are of the
 * current source, and not at all when this source was compiled by the last benchmark run and dist/ is as
 * that build left it. `--noCheck`: the benchmarks need the JavaScript, which type checking does not change
 * (the typecheck is the test command's), and it halves a build on a loaded machine. Resolves with tsc's
 * first line of complaint (dist/ is emitted anyway), or null.
 */
export function buildOnce(): Promise<string | null> {
  built ??= new Promise((resolve, reject) => {
    const sources = sourcesHash();
    if (upToDate(sources)) return resolve(null);
    const tsc = join(root, "node_modules/typescript/bin/tsc");
    const child = spawn(process.execPath, [tsc, "-p", "tsconfig.build.json", "--noCheck"], { cwd: root });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) {
        mkdirSync(dirname(STAMP), { recursive: true });
        writeFileSync(STAMP, `${JSON.stringify({ sources, dist: distHash() })}\n`);
      }
      resolve(code === 0 ? null : (out.trim().split("\n")[0] ?? "tsc failed"));
    });
  });
  return built;
}
