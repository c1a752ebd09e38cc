import type { Command } from "commander";
import { SegopsError, UsageError } from "../../core/errors.js";
import { formatInterval, type Interval } from "../../core/interval.js";
import { NEWEST_KNOWN_MAJOR, OLDEST_SUPPORTED_MAJOR } from "../../druid/capabilities.js";
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
  druidVersion?: string;
  json?: boolean;
}

/** `--druid-version`: a major release segops knows the rules of; absent means the oldest supported. */
export function parseDruidVersion(text: string | undefined): number {
  if (text === undefined) return OLDEST_SUPPORTED_MAJOR;
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || n < OLDEST_SUPPORTED_MAJOR || n > NEWEST_KNOWN_MAJOR) {
    throw new UsageError(
      `--druid-version: expected a Druid major release from ${OLDEST_SUPPORTED_MAJOR} to ${NEWEST_KNOWN_MAJOR} (the target cluster's, e.g. 33), got "${text}"`,
      { druidVersion: text },
    );
  }
  return n;
}

/**
 * The line a valid file gets, so silence is never the answer: what was checked (the task type, the
 * partition it was rendered for, the variables by name — their values may be secrets — and the Druid
 * release whose rules apply, none being asked).
 */
export function okLine(
  file: string,
  template: LoadedTemplate,
  interval: Interval | undefined,
  vars: Record<string, string>,
  warnings: number,
  druidVersion: number = OLDEST_SUPPORTED_MAJOR,
): string {
  const type =
    template.kind === "sql"
      ? "SQL (MSQ) template"
      : `${typeof template.value.type === "string" ? template.value.type : "untyped"} task`;
  const checked = [
    type,
    interval !== undefined
      ? `rendered for ${formatInterval(interval)} (alignment and interval rules checked)`
      : "as written (no --interval: the partition rules were not checked)",
    ...(Object.keys(vars).length > 0 ? [`variables ${Object.keys(vars).join(", ")}`] : []),
    `Druid ${OLDEST_SUPPORTED_MAJOR}–${NEWEST_KNOWN_MAJOR}'s spec rules, release-dependent ones as Druid ${druidVersion} (offline: no cluster asked; --druid-version for another target)`,
    ...(warnings > 0 ? [`${warnings} warning${warnings === 1 ? "" : "s"} above`] : []),
  ];
  return `ok: ${file} — ${checked.join("; ")}\n`;
}

function check(
  template: LoadedTemplate,
  interval: Interval | undefined,
  vars: Record<string, string>,
  druidVersion: number,
): ValidationResult {
  // Rendered like a real run would, then validated; every problem comes back (for --json too).
  return validateTemplate(template, { ...(interval !== undefined ? { interval } : {}), vars, druidVersion });
}

export async function validateAction(file: string, flags: ValidateFlags, cmd: Command): Promise<void> {
  const { out, err } = writers(cmd);
  const interval = flags.interval === undefined ? undefined : parsePartitionInterval(flags.interval);
  const vars = parseVars(flags.var ?? []);
  const druidVersion = parseDruidVersion(flags.druidVersion);
  const template = await readTemplateFile(file);
  const result = check(template, interval, vars, druidVersion);
  if (flags.json) {
    out(
      `${JSON.stringify({ valid: result.valid, errors: result.errors, warnings: result.warnings }, null, 2)}\n`,
    );
  } else {
    printWarnings(err, result.warnings);
    for (const e of result.errors) err(`${e.path}: ${e.message}\n`);
    if (result.valid) out(okLine(file, template, interval, vars, result.warnings.length, druidVersion));
  }
  if (!result.valid) {
    const n = result.errors.length;
    throw new SegopsError("InvalidSpec", `${file}: ${n} error${n === 1 ? "" : "s"}, nothing submitted`, {
      errors: result.errors,
    });
  }
}
