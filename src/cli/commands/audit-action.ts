import type { Command } from "commander";
import type { DruidClient } from "../../druid/client.js";
import { type AuditResult, auditDatasource, explainAuditGaps } from "../../jobs/actions.js";
import { formatGaps } from "../../jobs/report.js";
import { LedgerError } from "../../ledger/errors.js";
import { NoLedgerError } from "../../ledger/open.js";
import type { Gap } from "../../work/audit.js";
import { connectDruid, openLedger } from "../context.js";
import type { DruidFlags } from "../options.js";
import { writers } from "./render.js";

/** `segops audit`'s implementation, loaded when the command runs (its flags are in audit.ts). */

export type AuditFlags = DruidFlags & {
  interval?: string;
  granularity?: string;
  expectFull?: boolean;
  json?: boolean;
  ledger: string;
};

/**
 * The gaps with the ledger's reasons. The ledger is opened only when there is a gap, and only if it
 * exists; one that cannot be read leaves the reasons out (the gaps are Druid's to tell), with a warning.
 */
async function withReasons(
  client: DruidClient,
  datasource: string,
  gaps: Gap[],
  flags: AuditFlags,
  err: (s: string) => void,
): Promise<{ gaps: Gap[]; note: string | null }> {
  if (gaps.length === 0) return { gaps, note: null };
  let store: Awaited<ReturnType<typeof openLedger>>;
  try {
    store = await openLedger(flags.ledger, { mustExist: true });
  } catch (error) {
    if (error instanceof NoLedgerError) return { gaps, note: `${error.message}: reasons unknown` };
    if (!(error instanceof LedgerError)) throw error;
    err(`warning: ${error.message}; gaps listed without the ledger's reasons\n`);
    return { gaps, note: "the ledger could not be read: reasons unknown" };
  }
  try {
    return { gaps: await explainAuditGaps(store, client, datasource, gaps), note: null };
  } catch (error) {
    if (!(error instanceof LedgerError)) throw error;
    err(`warning: ${error.message}; gaps listed without the ledger's reasons\n`);
    return { gaps, note: "the ledger could not be read: reasons unknown" };
  } finally {
    await store.close();
  }
}

function printText(out: (s: string) => void, report: AuditResult, gaps: Gap[], note: string | null): void {
  for (const c of report.chunks) {
    out(
      `${c.interval}  ${c.liveVersions.join(",") || "(none)"}  rows ${c.rows ?? "?"}  segments ${c.segments}${c.notes.length ? `  (${c.notes.join("; ")})` : ""}\n`,
    );
  }
  for (const v of report.violations) out(`VIOLATION ${v.chunk} ${v.kind}: ${v.message}\n`);
  if (report.compactionCandidates.length > 0) {
    out(
      `${report.compactionCandidates.length} segment(s) that compacting their chunk would merge or split (compaction candidates)\n`,
    );
  }
  printGaps(out, gaps, note);
}

function printGaps(out: (s: string) => void, gaps: Gap[], note: string | null): void {
  const header = `GAPS: ${gaps.length} part(s) of the range hold no live data${note ? ` (${note})` : ""}:`;
  for (const line of formatGaps(gaps, header)) out(`${line}\n`);
}

export async function auditAction(datasource: string, flags: AuditFlags, cmd: Command): Promise<void> {
  const { out, err } = writers(cmd);
  const client = await connectDruid(flags);
  try {
    const audited = await auditDatasource(
      client,
      {
        datasource,
        ...(flags.interval ? { interval: flags.interval } : {}),
        ...(flags.granularity ? { granularity: flags.granularity } : {}),
      },
      { gaps: {} },
    );
    const { gaps, note } = await withReasons(client, datasource, audited.gaps ?? [], flags, err);
    const report: AuditResult = { ...audited, gaps };
    // A gap fails the audit only when asked (--expect-full): a range may be sparse on purpose.
    const full = !flags.expectFull || gaps.length === 0;
    // Nothing to audit is not a pass: a misspelt datasource would otherwise read "AUDIT OK".
    if (report.noSegments) {
      if (flags.json) {
        const { noSegments: _n, problem, ...rest } = report;
        out(`${JSON.stringify({ ...rest, ok: false, noSegments: true, problem }, null, 2)}\n`);
      } else {
        printGaps(out, gaps, note);
        out(`AUDIT FAILED: ${report.problem}\n`);
      }
      process.exitCode = 1;
      return;
    }
    const ok = report.ok && full;
    const { noSegments: _n, ...shown } = report;
    if (flags.json) out(`${JSON.stringify({ ...shown, ok }, null, 2)}\n`);
    else {
      printText(out, report, gaps, note);
      const gapNote = gaps.length > 0 ? `; ${gaps.length} gap(s) with no live data (listed above)` : "";
      out(
        !report.ok
          ? `AUDIT FAILED: ${report.violations.length} violation(s)${gapNote}\n`
          : !full
            ? `AUDIT FAILED (--expect-full): ${gaps.length} gap(s) with no live data\n`
            : `AUDIT OK: ${report.chunks.length} chunk(s), ${report.totals.rows ?? "?"} rows${gapNote}\n`,
      );
    }
    process.exitCode = ok ? 0 : 1;
  } finally {
    await client.close();
  }
}
