/**
 * The oracle's agreement run (real-Druid stage, scripts/ci-druid.sh): every spec of test/spec/oracle/corpus.ts
 * — the real-spec corpus, the mutations, rendered templates — read by the Druid 33 oracle (one JVM,
 * scripts/druid/oracle/run) and by segops' validator as `segops validate --druid-version 33` reads it (Druid's
 * rules only). Exits 1 on any disagreement, printing both verdicts side by side, or when the verdicts recorded
 * in test/fixtures/oracle-verdicts.json (read by the Java-free vitest test) are not the oracle's.
 *
 * Use: node --import tsx scripts/druid/oracle/agree.ts [--record]   (--record rewrites the recorded verdicts)
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  describeSegops,
  disagreement,
  type OracleVerdict,
  RECORDED,
  readRecorded,
  segopsVerdict,
} from "../../../test/spec/oracle/compare.js";
import { oracleCorpus } from "../../../test/spec/oracle/corpus.js";

const HERE = fileURLToPath(new URL(".", import.meta.url));
const record = process.argv.includes("--record");

const items = oracleCorpus();
const work = mkdtempSync(join(tmpdir(), "segops-oracle-"));
mkdirSync(join(work, "specs"));
const name = (i: number) => `${String(i).padStart(5, "0")}.${items[i]?.sql !== undefined ? "sql" : "json"}`;
items.forEach((item, i) => {
  writeFileSync(join(work, "specs", name(i)), item.sql ?? JSON.stringify(item.spec));
});

const t0 = Date.now();
const run = spawnSync(join(HERE, "run"), [join(work, "specs")], { encoding: "utf8", maxBuffer: 64 << 20 });
const seconds = ((Date.now() - t0) / 1000).toFixed(1);
if (run.status !== 0) {
  process.stderr.write(run.stderr.split("\n").slice(-30).join("\n"));
  console.error(`oracle: FAILED: the oracle exited ${run.status ?? run.signal} (its stderr's tail above)`);
  process.exit(2);
}
const byFile = new Map<string, OracleVerdict>();
for (const line of run.stdout.trim().split("\n")) {
  const v = JSON.parse(line) as { file: string } & OracleVerdict;
  byFile.set(v.file.slice(v.file.lastIndexOf("/") + 1), { verdict: v.verdict, message: v.message });
}

const recorded = readRecorded();
const problems: string[] = [];
const verdicts: Record<string, OracleVerdict> = {};
const counts = { accept: 0, reject: 0, standIns: 0 };
items.forEach((item, i) => {
  const oracle = byFile.get(name(i));
  if (oracle === undefined) {
    problems.push(`${item.id}\n    the oracle printed no verdict`);
    return;
  }
  verdicts[item.id] = oracle;
  counts[oracle.verdict]++;
  if (item.standIns.length > 0) counts.standIns++;
  const segops = segopsVerdict(item);
  const why = disagreement(item, oracle, segops);
  if (why !== undefined) {
    problems.push(
      [
        `${item.id}${item.standIns.length > 0 ? ` (stand-ins: ${item.standIns.join(", ")})` : ""}: ${why}`,
        `    Druid 33: ${oracle.verdict.padEnd(6)} ${oracle.message.slice(0, 300)}`,
        `    segops:   ${(segops.valid ? "accept" : "reject").padEnd(6)} ${describeSegops(segops).slice(0, 300)}`,
      ].join("\n"),
    );
  }
  const before = recorded[item.id];
  if (!record && (before === undefined || before.verdict !== oracle.verdict)) {
    problems.push(
      `${item.id}: recorded verdict ${before?.verdict ?? "(none)"} is stale, the oracle says ${oracle.verdict} (rerun with --record)`,
    );
  }
});
if (!record) {
  for (const id of Object.keys(recorded)) {
    if (!(id in verdicts))
      problems.push(`${id}: recorded in ${RECORDED} but no longer in the corpus (rerun with --record)`);
  }
}
rmSync(work, { recursive: true, force: true });

console.log(
  `oracle: ${items.length} specs in ${seconds} s (one JVM): Druid 33 accepts ${counts.accept}, rejects ${counts.reject}; ${counts.standIns} with extension stand-ins`,
);
if (record) {
  const sorted = Object.fromEntries(Object.entries(verdicts).sort(([a], [b]) => a.localeCompare(b)));
  writeFileSync(RECORDED, `${JSON.stringify({ druid: "33.0.0", verdicts: sorted }, null, 2)}\n`);
  console.log(`oracle: recorded ${Object.keys(sorted).length} verdicts in ${RECORDED}`);
}
if (problems.length > 0) {
  console.log(`\noracle: ${problems.length} disagreement(s):\n`);
  console.log(problems.join("\n\n"));
  process.exit(1);
}
console.log("oracle: segops validate --druid-version 33 agrees with Druid 33 on every spec");
