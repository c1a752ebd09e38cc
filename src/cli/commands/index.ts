import type { Command } from "commander";
import { registerAudit } from "./audit.js";
import { registerBackfill } from "./backfill.js";
import { registerCompact } from "./compact.js";
import { registerDemo } from "./demo.js";
import { registerId } from "./id.js";
import { registerKill } from "./kill.js";
import { registerLedgerCommands } from "./ledger-commands.js";
import { registerPoll } from "./poll.js";
import { registerRender } from "./render.js";
import { registerResume } from "./resume.js";
import { registerRollback } from "./rollback.js";
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
 * `segops --help` therefore loads only what it uses (test/cli/startup.test.ts checks the module graph,
 * bench/startup.ts the wall time).
 */
export type RegisterCommand = (program: Command) => void;

/** Every command, in the order `segops --help` lists them. */
export const commands: readonly RegisterCommand[] = [
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
  registerRollback,
  registerKill,
  registerCompact,
  registerSim,
  registerRender,
  registerValidate,
  registerId,
];

export function registerCommands(program: Command): void {
  for (const register of commands) register(program);
}
