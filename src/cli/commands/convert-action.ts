import { existsSync, renameSync, rmSync, writeFileSync } from "node:fs";
import type { Command } from "commander";
import { convertHadoopSpec } from "../../convert/index.js";
import { UsageError } from "../../core/errors.js";
import { readTemplateFile } from "../../spec/index.js";
import { writers } from "./render.js";

/** `segops convert`'s implementation, loaded when the command runs (its flags are in convert.ts). */

export interface ConvertFlags {
  output?: string;
  force?: boolean;
  json?: boolean;
}

/** Writes the whole file or nothing: a temporary file beside it, renamed over it. */
function writeAtomically(path: string, text: string): void {
  const tmp = `${path}.segops-${process.pid}.tmp`;
  try {
    writeFileSync(tmp, text, { flag: "wx" });
    renameSync(tmp, path);
  } catch (error) {
    rmSync(tmp, { force: true });
    throw new UsageError(`--output ${path}: cannot write it: ${(error as Error).message}`, {
      flag: "--output",
    });
  }
}

export async function convertAction(file: string, flags: ConvertFlags, cmd: Command): Promise<void> {
  const { out, err } = writers(cmd);
  if (flags.output !== undefined && existsSync(flags.output) && !flags.force) {
    throw new UsageError(
      `--output ${flags.output} exists: pass --force to replace it, or choose another file`,
      {
        flag: "--output",
      },
    );
  }
  const loaded = await readTemplateFile(file);
  if (loaded.kind !== "task") {
    throw new UsageError(
      `${file}: an SQL file is not a Hadoop spec: segops convert reads index_hadoop JSON or YAML`,
    );
  }
  const { template, notes } = convertHadoopSpec(loaded.value);
  const text = `${JSON.stringify(template, null, 2)}\n`;
  if (flags.output !== undefined) writeAtomically(flags.output, text);
  if (flags.json) {
    out(
      `${JSON.stringify(flags.output !== undefined ? { output: flags.output, notes } : { template, notes }, null, 2)}\n`,
    );
  } else {
    if (flags.output === undefined) out(text);
    for (const n of notes) err(`note: ${n.path}: ${n.kind}: ${n.message}\n`);
    if (flags.output !== undefined)
      err(
        `wrote ${flags.output}: check it with segops validate ${flags.output} --interval <one partition>\n`,
      );
  }
}
