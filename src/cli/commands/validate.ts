import type { Command } from "commander";
import { SegopsError } from "../../core/errors.js";
import type { Interval } from "../../core/interval.js";
import {
  hasPlaceholders,
  INTERVAL_RULE,
  type LoadedTemplate,
  parsePartitionInterval,
  prepareSpec,
  readTemplateFile,
  TemplateError,
  type ValidationResult,
  validateSpec,
  validateSql,
} from "../../spec/index.js";
import { parseVars } from "../../spec/template.js";
import { collect, printWarnings, writers } from "./render.js";

interface ValidateFlags {
  interval?: string;
  var?: string[];
  json?: boolean;
}

function check(
  template: LoadedTemplate,
  interval: Interval | undefined,
  vars: Record<string, string>,
): ValidationResult {
  const placeholders =
    template.kind === "sql" ? template.text.includes("{{") : hasPlaceholders(template.value);
  if (interval === undefined) {
    if (placeholders)
      throw new TemplateError("the template has placeholders: pass --interval to render it first");
    if (template.kind === "sql") return validateSql(template.text);
    return validateSpec(template.value);
  }
  // Render like a real run would (same interval injection and id pinning), then validate the result.
  let prepared: ReturnType<typeof prepareSpec>;
  try {
    prepared = prepareSpec(template, { interval, vars });
  } catch (e) {
    // A rendering problem with a path (e.g. the template's own intervals) is reported like any spec error.
    const path = e instanceof TemplateError && e.details.rule === INTERVAL_RULE ? e.details.path : undefined;
    if (typeof path !== "string" || !(e instanceof TemplateError)) throw e;
    const message = e.message.startsWith(`${path}: `) ? e.message.slice(path.length + 2) : e.message;
    return { valid: false, errors: [{ path, message }], warnings: [] };
  }
  const result =
    prepared.kind === "sql"
      ? validateSql(prepared.body.query, { partition: interval })
      : validateSpec(prepared.spec, { partition: interval });
  return { ...result, warnings: [...prepared.warnings, ...result.warnings] };
}

/**
 * `segops validate <template|spec> [--interval I] [--var k=v] [--json]`: exit 0 when valid (warnings on
 * stderr), exit 2 with one `path: message` line per error.
 */
export function registerValidate(program: Command): void {
  program
    .command("validate")
    .description(
      "check a spec or template before anything is submitted (Druid's rules and segops' partition rules)",
    )
    .argument("<file>", "spec or template file: JSON, YAML or SQL")
    .option("--interval <interval>", "partition interval; required for templates, checks interval tightness")
    .option("--var <name=value>", "template variable for {{var.NAME}} (repeatable)", collect)
    .option("--json", "print {valid, errors, warnings} as JSON on stdout")
    .action(async (file: string, flags: ValidateFlags, cmd: Command) => {
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
    });
}
