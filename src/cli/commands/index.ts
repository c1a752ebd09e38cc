import { type Command, Help } from "commander";
import { registerAudit } from "./audit.js";
import { registerDemo } from "./demo.js";
import { registerId } from "./id.js";
import { registerPoll } from "./poll.js";
import { registerRender } from "./render.js";
import { registerSim } from "./sim.js";
import { registerSubmit } from "./submit.js";
import { registerValidate } from "./validate.js";

/**
 * Each command lives in its own module and registers itself on the program. A registration is light:
 * flags and descriptions only (commander, `../options.js`, the helpers of `./render.js`); the command's
 * implementation (the emulator, undici, the ledger drivers, the spec toolkit …) is imported by its action,
 * when it runs. `segops --help` and `segops validate` therefore load only what they use
 * (test/cli/startup.test.ts checks the module graph, bench/startup.ts the wall time).
 */
export type RegisterCommand = (program: Command) => void;

/** What `segops --help` lists for a command: its term (`name [options] <args>`) and its description. */
export type CommandListing = readonly [term: string, description: string];

/**
 * Commands whose module registers them and imports their implementation at its top, so that loading it
 * for `segops --help` would load the ingestion engine, undici and both ledger drivers: `run` and
 * `backfill` (their shared flags are defined in ingest-common.ts, next to `executeIngest`), `resume`,
 * `wait` and the ledger commands. `segops --help` lists them from `listing` (test/cli/startup.test.ts
 * holds it to the modules' own registration); the module is imported, and registers them for real, only
 * when the command line names one of them (see `loadCommands`). Once a module's registration is split
 * from its implementation like the others', it moves to a plain `RegisterCommand`.
 */
export interface DeferredCommands {
  readonly load: () => Promise<RegisterCommand>;
  /** Every command the module registers on the program, in its order. */
  readonly listing: readonly CommandListing[];
}

const deferred = (load: DeferredCommands["load"], ...listing: CommandListing[]): DeferredCommands => ({
  load,
  listing,
});

/** Every command, in the order `segops --help` lists them. */
export const commands: ReadonlyArray<RegisterCommand | DeferredCommands> = [
  registerDemo,
  deferred(
    async () => (await import("./run.js")).registerRun,
    [
      "run [options] <template>",
      "ingest one interval end to end: submit, await SUCCESS, handoff gate, version audit",
    ],
  ),
  deferred(
    async () => (await import("./backfill.js")).registerBackfill,
    [
      "backfill [options] <template>",
      "ingest a date range, one partition per granularity bucket; rerunning the same command resumes the job",
    ],
  ),
  deferred(
    async () => (await import("./resume.js")).registerResume,
    [
      "resume [options] <job>",
      "run a stored job (run or backfill) from where it stopped, against the cluster it belongs to",
    ],
  ),
  registerSubmit,
  deferred(
    async () => (await import("./wait.js")).registerWait,
    [
      "wait [options] <taskId>",
      "wait for a Druid task: exit 0 on SUCCESS (and handoff with --handoff), 1 on FAILED, 3 on timeout, 5 when superseded",
    ],
  ),
  registerPoll,
  deferred(
    async () => (await import("./ledger-commands.js")).registerLedgerCommands,
    ["jobs [options]", "list jobs in the ledger with their partition counts"],
    ["status [options] [job]", "show a job's partitions (default: the newest job)"],
    ["cancel [options] <id>", "cancel a job or one partition (works while the job runs in another shell)"],
    [
      "retry [options] <id>",
      "send a job's failed, canceled and dead-lettered partitions (or one partition) back to run",
    ],
    ["dlq", "dead-lettered partitions: list, show, retry, drop"],
  ),
  registerAudit,
  registerSim,
  registerRender,
  registerValidate,
  registerId,
];

/** Placeholders of deferred commands that are not registered for real yet, with their module and term. */
const placeholders = new WeakMap<Command, { group: DeferredCommands; term: string }>();

/**
 * Registers every command on `program`, in `commands`' order: light ones for real, deferred ones as
 * placeholders (name and description; help lists their term) until `loadCommands` registers them.
 */
export function registerCommands(program: Command): void {
  program.configureHelp({
    ...program.configureHelp(),
    subcommandTerm(this: Help, cmd: Command): string {
      return placeholders.get(cmd)?.term ?? Help.prototype.subcommandTerm.call(this, cmd);
    },
  });
  // A safety net for a command line `loadCommands` did not foresee: still registered before it parses.
  program.hook("preSubcommand", (_program, sub) => {
    const placeholder = placeholders.get(sub);
    if (!placeholder) return;
    // commander saved the option values for parsing before the options existed: save them again.
    return load(program, placeholder.group).then(() => sub.saveStateBeforeParse());
  });
  for (const entry of commands) {
    if (typeof entry === "function") {
      entry(program);
      continue;
    }
    for (const [term, description] of entry.listing) {
      const name = term.split(" ")[0] as string;
      placeholders.set(program.command(name).description(description), { group: entry, term });
    }
  }
}

/** The command `argv` (node, script, arguments…) names: its first operand, or the one after `help`. */
function commandNamed(argv: readonly string[]): string | undefined {
  // segops' own options (--help, --version) take no value, so the first operand is the command.
  const operands = argv.slice(2).filter((arg) => !arg.startsWith("-"));
  return operands[0] === "help" ? operands[1] : operands[0];
}

/**
 * Registers for real the deferred commands `argv` names (`segops wait …`, `segops help wait`,
 * `segops dlq list …`), or every deferred command when `argv` is left out. Call it before parsing.
 */
export async function loadCommands(program: Command, argv?: readonly string[]): Promise<void> {
  const wanted = (cmd: Command) => argv === undefined || cmd.name() === commandNamed(argv);
  const groups = new Set<DeferredCommands>();
  for (const cmd of program.commands) {
    const placeholder = placeholders.get(cmd);
    if (placeholder && wanted(cmd)) groups.add(placeholder.group);
  }
  for (const group of groups) await load(program, group);
}

/** Imports a deferred module and lets it register its commands onto their placeholders. */
async function load(program: Command, group: DeferredCommands): Promise<void> {
  const waiting = new Map<string, Command>();
  for (const cmd of program.commands)
    if (placeholders.get(cmd)?.group === group) waiting.set(cmd.name(), cmd);
  if (waiting.size === 0) return;
  const register = await group.load();
  const internal = (problem: string) =>
    new Error(`internal: ${problem} (deferred commands are listed in src/cli/commands/index.ts)`);
  // The module registers on a stand-in for `program` whose `command()` hands out the placeholder (given
  // the arguments it names) instead of a new command; any other use of the program is a mistake here.
  const parent = new Proxy(program, {
    get(_target, key) {
      if (key !== "command") throw internal(`a deferred command module used program.${String(key)}`);
      return (nameAndArgs: string, ...rest: unknown[]): Command => {
        const [, name = "", args = ""] = /^\s*(\S+)\s*(.*)$/.exec(nameAndArgs) ?? [];
        const placeholder = waiting.get(name);
        if (!placeholder)
          throw internal(`the module of ${[...waiting.keys()][0]} registers ${name}, unlisted`);
        if (rest.length > 0) throw internal(`${name}: program.command() with options is not supported`);
        waiting.delete(name);
        placeholders.delete(placeholder);
        return args ? placeholder.arguments(args) : placeholder;
      };
    },
  });
  register(parent);
  if (waiting.size > 0) throw internal(`listed but not registered by their module: ${[...waiting.keys()]}`);
}
