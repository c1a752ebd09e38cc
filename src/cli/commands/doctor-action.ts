import type { Command } from "commander";
import { Duration } from "luxon";
import { UsageError } from "../../core/errors.js";
import { formatReport, runDoctor } from "../../doctor/index.js";
import { readTemplateFile } from "../../spec/index.js";
import { type DruidFlags, druidOptionsFrom } from "../options.js";
import { writers } from "./render.js";

/** `segops doctor`'s implementation, loaded when the command runs (its flags are in doctor.ts). */

export interface DoctorFlags extends DruidFlags {
  json?: boolean;
  rollbackHorizon?: string;
}

export async function doctorAction(files: string[], flags: DoctorFlags, cmd: Command): Promise<void> {
  const { out } = writers(cmd);
  // Bad input (a flag, an unreadable or unparsable template) fails here, before Druid is asked anything.
  const druid = druidOptionsFrom(flags);
  if (flags.rollbackHorizon !== undefined && !Duration.fromISO(flags.rollbackHorizon).isValid) {
    throw new UsageError(
      `--rollback-horizon: expected an ISO-8601 period such as P30D, got "${flags.rollbackHorizon}"`,
      { flag: "--rollback-horizon" },
    );
  }
  const templates = [];
  for (const file of files) templates.push({ file, template: await readTemplateFile(file) });
  const throughOneUrl = flags.overlord === undefined && flags.coordinator === undefined;
  const retryBudgetMs = Math.min(flags.retryBudget ?? 5, 30) * 1000;
  const report = await runDoctor({
    druid: {
      ...druid,
      retry: {
        maxAttempts: 3,
        maxTotalWaitMs: retryBudgetMs,
        ...(flags.retryBase !== undefined ? { baseMs: flags.retryBase } : {}),
      },
    },
    throughOneUrl,
    templates,
    ...(flags.rollbackHorizon !== undefined ? { rollbackHorizon: flags.rollbackHorizon } : {}),
  });
  out(flags.json ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
  if (report.exitCode !== 0) process.exitCode = report.exitCode;
}
