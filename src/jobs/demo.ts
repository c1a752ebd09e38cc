import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { JsonObject } from "../ledger/types.js";
import type { FaultRule } from "../sim/faults.js";

/**
 * The demo's fixtures: a week of deterministic click events (one file per day) and a template that reads
 * them, with one day carrying a corrupt row so that its partition is poison (Druid's parse-exception limit
 * fails it the same way every attempt) — the dead letter is part of the show.
 */

export const DEMO_DATASOURCE = "demo_clicks";
export const DEMO_FROM = "2026-01-05";
export const DEMO_DAYS = 7;
export const DEMO_POISON_DAY = "2026-01-08";

export function writeDemoData(dir: string, rowsPerDay = 240): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const start = Date.parse(`${DEMO_FROM}T00:00:00Z`);
  const pages = ["home", "search", "cart", "checkout", "help"];
  for (let d = 0; d < DEMO_DAYS; d++) {
    const day = new Date(start + d * 86_400_000).toISOString().slice(0, 10);
    const lines: string[] = [];
    for (let i = 0; i < rowsPerDay; i++) {
      const ts = new Date(start + d * 86_400_000 + Math.floor((i * 86_400_000) / rowsPerDay)).toISOString();
      lines.push(
        JSON.stringify({
          ts,
          page: pages[(i * 7 + d) % pages.length],
          country: ["DE", "FR", "JP", "US"][i % 4],
          clicks: (i % 9) + 1,
        }),
      );
    }
    if (day === DEMO_POISON_DAY)
      lines.splice(rowsPerDay / 2, 0, '{"ts": "2026-01-08T12:00:00Z", "page": "home", "clicks": 3');
    writeFileSync(join(dir, `clicks-${day}.json`), `${lines.join("\n")}\n`);
  }
}

export function demoTemplate(): JsonObject {
  return {
    type: "index_parallel",
    spec: {
      dataSchema: {
        dataSource: DEMO_DATASOURCE,
        timestampSpec: { column: "ts", format: "iso" },
        dimensionsSpec: { dimensions: ["page", "country"] },
        metricsSpec: [
          { type: "count", name: "count" },
          { type: "longSum", name: "clicks", fieldName: "clicks" },
        ],
        granularitySpec: { segmentGranularity: "day", queryGranularity: "hour", rollup: true },
      },
      ioConfig: {
        type: "index_parallel",
        inputSource: {
          type: "local",
          baseDir: "{{var.dataDir}}",
          filter: "clicks-{{start:yyyy-MM-dd}}.json",
        },
        inputFormat: { type: "json" },
        appendToExisting: false,
        dropExisting: true,
      },
      tuningConfig: {
        type: "index_parallel",
        maxNumConcurrentSubTasks: 1,
        maxParseExceptions: 0,
        partitionsSpec: { type: "dynamic" },
      },
    },
  };
}

/** A few faults a real cluster throws at you: a flaky submit, a leader failover, a status-endpoint outage. */
export const DEMO_FAULTS: FaultRule[] = [
  { path: "/druid/indexer/v1/task", method: "POST", kind: "status", status: 503, count: 2 },
  { path: "/druid/indexer/v1/taskStatus", kind: "failover", count: 3 },
  { path: "/druid/indexer/v1/taskStatus", kind: "status", status: 500, rate: 0.1, count: 5 },
  { path: "/druid/coordinator/v1/metadata", kind: "reset", count: 1 },
];
