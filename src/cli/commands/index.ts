import type { Command } from "commander";
import { registerBackfill } from "./backfill.js";
import { registerRun } from "./run.js";

/** Each command lives in its own module and registers itself on the program. */
export type RegisterCommand = (program: Command) => void;

export const commands: RegisterCommand[] = [registerRun, registerBackfill];
