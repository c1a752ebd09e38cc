import type { Command } from "commander";
import { SegopsError } from "../../core/errors.js";
import type { Interval } from "../../core/interval.js";
import {
  type LoadedTemplate,
  parsePartitionInterval,
  readTemplateFile,
  type ValidationResult,
  validateTemplate,
} from "../../spec/index.js";
import { parseVars } from "../../spec/template.js";
import { printWarnings, writers } from "./render.js";

/** `segops validate`'s implementation, loaded when the command runs (its flags are in validate.ts). */

export interface ValidateFlags {
  interval?: string;
  var?: string[];
  json?: boolean;
}

function check(
  template: LoadedTemplate,
  interval: Interval | undefined,
  vars: Record<string, string>,
): ValidationResult {
  // Rendered like a real run would, then validated; every problem comes back (for --json too).
  return validateTemplate(template, { ...(interval !== undefined ? { interval } : {}), vars });
}

export async function validateAction(file: string, flags: ValidateFlags, cmd: Command): Promise<void> {
  const { out, err } = writers(cmd);
  const interval = flags.interval === undefined ? undefined : parsePartitionInterval(flags.interval);
  const vars = parseVars(flags.var ?? []);
  const result = check(await readTemplateFile(file), interval, vars);
  if (flags.json) {
    out(
      `${JSON.stringify({ valid: result.valid, errors: result.errors, warnings: result.warnings }, null, 2)}\n`,
    );
  } else {
    printWarnings(err, result.warnings);
    for (const e of result.errors) err(`${e.path}: ${e.message}\n`);
  }
  if (!result.valid) {
    const n = result.errors.length;
    throw new SegopsError("InvalidSpec", `${file}: ${n} error${n === 1 ? "" : "s"}, nothing submitted`, {
      errors: result.errors,
    });
  }
}
