import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
let built: Promise<string | null> | null = null;

/**
 * Compiles dist/ (`tsc -p tsconfig.build.json`) once per benchmark process, so the CLI figures are of the
 * current source. Resolves with tsc's first line of complaint (dist/ is emitted anyway), or null.
 */
export function buildOnce(): Promise<string | null> {
  built ??= new Promise((resolve, reject) => {
    const tsc = join(root, "node_modules/typescript/bin/tsc");
    const child = spawn(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: root });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve(code === 0 ? null : (out.trim().split("\n")[0] ?? "tsc failed")));
  });
  return built;
}
