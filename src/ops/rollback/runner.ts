import type { Runner } from "../../driver/runner.js";
import type { DruidServices } from "../../work/services.js";
import { type OpsIO, opsIO, type StepTable, stepRunner } from "../step-table.js";
import type { RollbackPayload } from "./plan.js";
import { auditRollback } from "./steps/audit.js";
import { markTarget } from "./steps/mark.js";
import { awaitRestored } from "./steps/served.js";
import { unmarkNewer } from "./steps/unmark.js";
import { ROLLBACK_ENCODING, type RollbackProgress } from "./types.js";

/**
 * One chunk's rollback as steps, each safe to repeat after a crash (every Druid call is idempotent: a
 * second markUnused/markUsed changes nothing): `unmark` the newer versions, `mark` V used, wait until V is
 * `served` (and no newer version is used), `audit` that V is the one live version.
 */
export const ROLLBACK_STEPS: StepTable<RollbackPayload, RollbackProgress, OpsIO> = {
  encoding: ROLLBACK_ENCODING,
  first: "unmark",
  steps: [
    ["unmark", unmarkNewer],
    ["mark", markTarget],
    ["served", awaitRestored],
    ["audit", auditRollback],
  ],
};

export function rollbackRunner(services: DruidServices): Runner {
  return stepRunner(services, ROLLBACK_STEPS, opsIO(services));
}
