import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { JsonValue } from "../../src/core/canonical-json.js";

/** A deterministic JSON-lines dataset, one file per UTC day, for backfills on the emulator's local reader. */
export function writeDailyFiles(
  dir: string,
  options: { from: string; days: number; rowsPerDay: number },
): void {
  mkdirSync(dir, { recursive: true });
  const start = Date.parse(`${options.from}T00:00:00Z`);
  for (let d = 0; d < options.days; d++) {
    const dayStart = start + d * 86_400_000;
    const lines: string[] = [];
    for (let i = 0; i < options.rowsPerDay; i++) {
      const ts = new Date(dayStart + Math.floor((i * 86_400_000) / options.rowsPerDay)).toISOString();
      lines.push(
        JSON.stringify({ ts, channel: `#c${i % 5}`, page: `p${(i * 7 + d) % 11}`, added: (i % 13) + 1 }),
      );
    }
    const day = new Date(dayStart).toISOString().slice(0, 10);
    writeFileSync(join(dir, `events-${day}.json`), `${lines.join("\n")}\n`);
  }
}

/** An `index_parallel` template reading one day file per partition, replacing that day (k sub-tasks). */
export function dailyTemplate(datasource: string, k: number): { [key: string]: JsonValue } {
  return {
    type: "index_parallel",
    spec: {
      dataSchema: {
        dataSource: datasource,
        timestampSpec: { column: "ts", format: "iso" },
        dimensionsSpec: { dimensions: ["channel", "page"] },
        metricsSpec: [
          { type: "count", name: "count" },
          { type: "longSum", name: "added", fieldName: "added" },
        ],
        granularitySpec: { segmentGranularity: "day", queryGranularity: "none", rollup: false },
      },
      ioConfig: {
        type: "index_parallel",
        inputSource: {
          type: "local",
          baseDir: "{{var.dataDir}}",
          filter: "events-{{start:yyyy-MM-dd}}.json",
        },
        inputFormat: { type: "json" },
        appendToExisting: false,
        dropExisting: true,
      },
      tuningConfig: {
        type: "index_parallel",
        maxNumConcurrentSubTasks: k,
        partitionsSpec: { type: "dynamic" },
      },
    },
  };
}
