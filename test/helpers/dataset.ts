import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { JsonValue } from "../../src/core/canonical-json.js";

/** A deterministic JSON-lines dataset: one file per day, `rowsPerDay` rows each, spread over the day. */
export function writeDailyDataset(options: {
  from: string;
  days: number;
  rowsPerDay: number;
  dir?: string;
}): string {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), "segops-data-"));
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
    writeFileSync(
      join(dir, `events-${new Date(dayStart).toISOString().slice(0, 10)}.json`),
      `${lines.join("\n")}\n`,
    );
  }
  return dir;
}

/** A day file of the daily dataset whose lines are not JSON: Druid fails its task at the first parse error. */
export function writeCorruptDay(dir: string, day: string): void {
  writeFileSync(join(dir, `events-${day}.json`), "{broken row one\n{broken row two\n");
}

/** An index_parallel template reading one day file per partition, replacing the partition's chunks. */
export function dailyTemplate(options: {
  datasource: string;
  dropExisting?: boolean;
  append?: boolean;
  k?: number;
}): { [key: string]: JsonValue } {
  return {
    type: "index_parallel",
    spec: {
      dataSchema: {
        dataSource: options.datasource,
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
        appendToExisting: options.append ?? false,
        dropExisting: options.append ? false : (options.dropExisting ?? true),
      },
      tuningConfig: {
        type: "index_parallel",
        maxNumConcurrentSubTasks: options.k ?? 1,
        partitionsSpec: { type: "dynamic" },
      },
    },
  };
}
