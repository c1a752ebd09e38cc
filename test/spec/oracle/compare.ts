import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { ValidationResult } from "../../../src/spec/issues.js";
import { validateSql } from "../../../src/spec/msq.js";
import { validateSpec } from "../../../src/spec/validate.js";
import type { OracleItem } from "./corpus.js";

/** What the oracle said about one spec (one line of scripts/druid/oracle/run). */
export interface OracleVerdict {
  readonly verdict: "accept" | "reject";
  readonly message: string;
}

/** The Druid release the oracle runs; `segops validate --druid-version` is given the same. */
export const ORACLE_DRUID_VERSION = 33;

/** segops' reading of an item: Druid's rules only (segops' partition rules are not Druid's), for Druid 33. */
export function segopsVerdict(item: OracleItem): ValidationResult {
  if (item.sql !== undefined) return validateSql(item.sql, { rules: "druid" });
  return validateSpec(item.spec, { rules: "druid", druidVersion: ORACLE_DRUID_VERSION });
}

/** Why segops and the oracle (or the mutation's own expectation) disagree on an item, or undefined. */
export function disagreement(
  item: OracleItem,
  oracle: OracleVerdict,
  segops: ValidationResult,
): string | undefined {
  const ours = segops.valid ? "accept" : "reject";
  const m = item.mutation;
  // SQL: the oracle only parses. What Druid's parser refuses segops must refuse; a statement that parses may
  // still break a planner rule (a mutation says which, pinned to Druid's source).
  const parseOnly = item.sql !== undefined && oracle.verdict === "accept";
  if (ours !== oracle.verdict && !(parseOnly && m?.confirmedBy === "source")) {
    return parseOnly
      ? "segops rejects a statement Druid 33 parses, and no mutation pins the rule to Druid's source"
      : `segops ${ours}s, Druid 33 ${oracle.verdict}s`;
  }
  if (m === undefined) return undefined;
  const druidShould = m.expect === "reject" && m.confirmedBy !== "source" ? "reject" : "accept";
  if (oracle.verdict !== druidShould) return `the mutation expects Druid to ${druidShould}`;
  if (m.path !== undefined) {
    const list = m.expect === "reject" ? segops.errors : m.expect === "warn" ? segops.warnings : [];
    if (m.expect !== "accept" && !list.some((i) => i.path === m.path)) {
      return `segops reports no ${m.expect === "reject" ? "error" : "warning"} at ${m.path}`;
    }
  }
  return undefined;
}

/** The first few segops findings, one line. */
export function describeSegops(r: ValidationResult): string {
  const list = r.valid
    ? r.warnings.map((w) => `warning ${w.path}: ${w.message}`)
    : r.errors.map((e) => `${e.path}: ${e.message}`);
  return list.length === 0 ? "(nothing to say)" : list.slice(0, 2).join(" | ");
}

/** The oracle's verdicts as last recorded (`agree.ts --record`), read by the Java-free test. */
export const RECORDED = fileURLToPath(new URL("../../fixtures/oracle-verdicts.json", import.meta.url));

export function readRecorded(): Record<string, OracleVerdict> {
  if (!existsSync(RECORDED)) return {};
  return (JSON.parse(readFileSync(RECORDED, "utf8")) as { verdicts: Record<string, OracleVerdict> }).verdicts;
}
