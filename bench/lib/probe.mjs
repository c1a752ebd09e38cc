/**
 * Preloaded (`node --import ./bench/lib/probe.mjs …`) into a measured segops process by bench/scale.ts.
 * Once a second it appends one JSON line to the file named by SEGOPS_BENCH_PROBE: event-loop utilisation
 * and the longest event-loop delay of that second, and the SQLite statements run so far (writes: INSERT,
 * UPDATE, DELETE; reads: the rest), counted by wrapping better-sqlite3's prepared statements. Plain
 * JavaScript, so the measured process needs no TypeScript loader; it changes nothing the process does.
 */
import { appendFileSync } from "node:fs";
import { createRequire } from "node:module";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";

const out = process.env.SEGOPS_BENCH_PROBE;
const counts = { writes: 0, reads: 0 };
const WRITE = /\b(insert|update|delete)\b/i;

try {
  const require = createRequire(`${process.cwd()}/package.json`);
  const Database = require("better-sqlite3");
  const prepare = Database.prototype.prepare;
  Database.prototype.prepare = function (sql) {
    const statement = prepare.call(this, sql);
    const key = WRITE.test(sql) ? "writes" : "reads";
    for (const method of ["run", "get", "all"]) {
      const original = statement[method];
      statement[method] = function (...args) {
        counts[key]++;
        return original.apply(this, args);
      };
    }
    return statement;
  };
} catch {
  // No better-sqlite3 here: nothing to count.
}

if (out) {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  let last = performance.eventLoopUtilization();
  const sample = () => {
    const now = performance.eventLoopUtilization();
    const elu = performance.eventLoopUtilization(now, last);
    last = now;
    const mem = process.memoryUsage();
    appendFileSync(
      out,
      `${JSON.stringify({
        t: performance.now(),
        activeMs: elu.active,
        idleMs: elu.idle,
        maxDelayMs: delay.max / 1e6,
        writes: counts.writes,
        reads: counts.reads,
        rss: mem.rss,
        heapUsed: mem.heapUsed,
      })}\n`,
    );
    delay.reset();
  };
  setInterval(sample, 1000).unref();
  process.on("exit", sample);
}
