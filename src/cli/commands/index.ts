import type { Command } from "commander";
import { registeredCommands } from "../../jobs/registry.js";
import { registerAudit } from "./audit.js";
import { registerBackfill } from "./backfill.js";
import { registerConvert } from "./convert.js";
import { registerDemo } from "./demo.js";
import { registerDoctor } from "./doctor.js";
import { registerId } from "./id.js";
import { registerKindCommand } from "./kind-command.js";
import type { Kinds } from "./kind-flags.js";
import { registerLedgerCommands } from "./ledger-commands.js";
import { registerPoll } from "./poll.js";
import { registerRender } from "./render.js";
import { registerResume } from "./resume.js";
import { registerRun } from "./run.js";
import { registerServe } from "./serve.js";
import { registerSim } from "./sim.js";
import { registerSubmit } from "./submit.js";
import { registerValidate } from "./validate.js";
import { registerWait } from "./wait.js";

/**
 * Each command lives in its own module and registers itself on the program. A registration is light:
 * flags and descriptions only (commander, `../options.js`, `./ingest-flags.js`, the helpers of
 * `./render.js`); the command's implementation (the emulator, undici, the ledger drivers, the spec
 * toolkit …) is in its `*-action.ts` (or `ingest-common.ts`) and imported by its action, when it runs.
 * The kinds' commands (rollback, kill, compact, and any kind whose request declares one) are their flag
 * tables (`ops/<kind>/command.ts`, which the registry loads alone) with one action for all (kind-action.ts).
 * `segops --help` therefore loads only what it uses (test/cli/startup.test.ts checks the module graph,
 * bench/startup.ts the wall time).
 */
export type RegisterCommand = (program: Command, kinds?: Kinds) => void;

/** The commands before the kinds' commands, in the order `segops --help` lists them. */
const BEFORE_KINDS: readonly RegisterCommand[] = [
  registerDemo,
  registerRun,
  registerBackfill,
  registerResume,
  registerServe,
  registerSubmit,
  registerWait,
  registerPoll,
  registerLedgerCommands,
  registerAudit,
];

/** …and after them. */
const AFTER_KINDS: readonly RegisterCommand[] = [
  registerSim,
  registerRender,
  registerValidate,
  registerId,
  registerDoctor,
  registerConvert,
];

/**
 * Every command. `kinds`: the kinds of work the program runs, each with its command if its request
 * declares one (tests register a kind this way); by default this build's, their commands read from the
 * registry without loading any kind.
 */
export async function registerCommands(program: Command, kinds?: Kinds): Promise<void> {
  for (const register of BEFORE_KINDS) register(program, kinds);
  const commands = kinds ? kinds.flatMap((k) => k.request?.command ?? []) : await registeredCommands();
  for (const command of commands) registerKindCommand(program, command, kinds);
  for (const register of AFTER_KINDS) register(program);
}
