import { Option } from "commander";
import type { KindCommand, KindFlag, KindOfWork } from "../../driver/kind.js";
import type { DruidServices } from "../../work/services.js";
import type { ResumeFlags } from "./resume-action.js";

/** How the flags of a kind's command (its table, `KindCommand`) become the kind's request body. */

/** The kinds a program runs, when given (tests); otherwise the registry's, loaded when a command runs. */
export type Kinds = readonly KindOfWork<DruidServices, never>[];

/** A kind's command line as commander hands it over: the shared flags and the table's, by attribute. */
export type KindCommandFlags = ResumeFlags & Record<string, unknown>;

/** The key commander stores a flag's value under (`--older-than` → `olderThan`). */
export function attributeOf(flag: KindFlag): string {
  return new Option(flag.flag).attributeName();
}

/** Whether the command line gave the flag (a switch set, a list not empty, a value). */
export function given(flag: KindFlag, flags: Record<string, unknown>): boolean {
  const value = flags[attributeOf(flag)];
  if (flag.value === "switch") return value === true;
  if (flag.value === "list") return Array.isArray(value) && value.length > 0;
  return value !== undefined;
}

/** The request body the command line says: the datasource and each flag given, in its field. */
export function requestBodyOf(
  command: KindCommand,
  datasource: string,
  flags: Record<string, unknown>,
): Record<string, unknown> {
  const body: Record<string, unknown> = { datasource };
  for (const flag of command.flags) {
    if (!given(flag, flags)) continue;
    body[flag.field] = flag.value === "switch" ? flag.sets : flags[attributeOf(flag)];
  }
  return body;
}
