import type { Command } from "commander";
import { UsageError } from "../../core/errors.js";
import type { SpecIssue } from "../../spec/index.js";

/** stdout/stderr writers of a command (its commander output configuration, so tests can capture them). */
export function writers(cmd: Command): { out: (s: string) => void; err: (s: string) => void } {
  const cfg = cmd.configureOutput();
  return {
    out: (s) => (cfg.writeOut ? cfg.writeOut(s) : process.stdout.write(s)),
    err: (s) => (cfg.writeErr ? cfg.writeErr(s) : process.stderr.write(s)),
  };
}

/** Commander collector for repeatable `--var NAME=value`. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export function printWarnings(err: (s: string) => void, warnings: readonly SpecIssue[]): void {
  for (const w of warnings) err(`warning: ${w.path}: ${w.message}\n`);
}

/** Options shared by `render` and `id`. */
export interface PrepareFlags {
  interval: string;
  var?: string[];
  specVersion: string;
  attempt: string;
  prefix: string;
}

export function addPrepareOptions(cmd: Command): Command {
  return cmd
    .requiredOption("--interval <interval>", "partition interval, ISO-8601 START/END or START/PERIOD")
    .option("--var <name=value>", "template variable for {{var.NAME}} (repeatable)", collect)
    .option("--spec-version <version>", "spec version; changing it forces new task ids", "1")
    .option("--attempt <n>", "attempt number of the Druid task", "1")
    .option("--prefix <prefix>", "task id prefix", "segops");
}

export async function prepareFromFlags(file: string, flags: PrepareFlags) {
  // The spec toolkit (zod, yaml, luxon) loads when a command uses it: this module is also registration.
  const [
    { parseAttempt, parsePartitionInterval, prepareSpec, readTemplateFile },
    { parseVars },
    { TaskIdError },
  ] = await Promise.all([
    import("../../spec/index.js"),
    import("../../spec/template.js"),
    import("../../core/task-id.js"),
  ]);
  const interval = parsePartitionInterval(flags.interval);
  const vars = parseVars(flags.var ?? []);
  const attempt = parseAttempt(flags.attempt);
  const template = await readTemplateFile(file);
  try {
    return prepareSpec(template, {
      interval,
      vars,
      specVersion: flags.specVersion,
      attempt,
      prefix: flags.prefix,
    });
  } catch (e) {
    // A bad --prefix or a spec without a datasource is bad input: exit code 2, like other usage errors.
    if (e instanceof TaskIdError) throw new UsageError(e.message, { ...e.details });
    throw e;
  }
}

/** `segops render <template> --interval I`: prints the rendered task (or SQL task body) with its id pinned. */
export function registerRender(program: Command): void {
  addPrepareOptions(
    program
      .command("render")
      .description("render a spec template for one partition and print it (JSON), with the derived task id")
      .argument("<template>", "template file: JSON, YAML or SQL"),
  ).action(async (file: string, flags: PrepareFlags, cmd: Command) => {
    const { out, err } = writers(cmd);
    const prepared = await prepareFromFlags(file, flags);
    printWarnings(err, prepared.warnings);
    if (prepared.kind === "task" && prepared.spec.type === "index_hadoop") {
      err(`warning: type: ${(await import("../../spec/hadoop-exit.js")).hadoopExitMessage(file)}\n`);
    }
    out(`${JSON.stringify(prepared.kind === "task" ? prepared.spec : prepared.body, null, 2)}\n`);
  });
}
