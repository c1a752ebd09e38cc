import type { Command } from "commander";
import { registerAudit } from "./audit.js";
import { registerBackfill } from "./backfill.js";
import { registerDemo } from "./demo.js";
import { registerId } from "./id.js";
import { registerLedgerCommands } from "./ledger-commands.js";
import { registerPoll } from "./poll.js";
import { registerRender } from "./render.js";
import { registerResume } from "./resume.js";
import { registerRun } from "./run.js";
import { registerSim } from "./sim.js";
import { registerSubmit } from "./submit.js";
import { registerValidate } from "./validate.js";
import { registerWait } from "./wait.js";

/** Each command lives in its own module and registers itself on the program. */
export type RegisterCommand = (program: Command) => void;

export const commands: RegisterCommand[] = [
  registerDemo,
  registerRun,
  registerBackfill,
  registerResume,
  registerSubmit,
  registerWait,
  registerPoll,
  registerLedgerCommands,
  registerAudit,
  registerSim,
  registerRender,
  registerValidate,
  registerId,
];
