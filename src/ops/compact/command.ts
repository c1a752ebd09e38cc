import type { KindCommand } from "../../driver/kind.js";

/** `segops compact`: the fields of `POST /api/v1/compactions` as flags (light: read by `segops --help`). */
export const compactCommand: KindCommand = {
  name: "compact",
  description:
    "compact fragmented time chunks: one compact task per chunk, data checked unchanged, one version each",
  datasource: "the datasource to compact",
  unit: "chunk(s) to compact",
  flags: [
    {
      flag: "--interval <interval>",
      description: "the interval to compact (ISO-8601)",
      field: "interval",
      value: "text",
      required: true,
    },
    {
      flag: "--all",
      description: "every chunk with data, not only those the audit flags",
      field: "all",
      value: "switch",
      sets: true,
    },
    {
      flag: "--min-segment-mb <n>",
      description: "segments below this size are small",
      field: "minSegmentMb",
      value: "count",
      default: 300,
    },
    {
      flag: "--max-segment-mb <n>",
      description: "segments above this size are large",
      field: "maxSegmentMb",
      value: "count",
      default: 700,
    },
    {
      flag: "--max-rows-per-segment <n>",
      description: "rows per segment the compaction writes (and the most a healthy one has)",
      field: "maxRowsPerSegment",
      value: "count",
      default: 5_000_000,
    },
    {
      flag: "--dry-run",
      description: "show the chunks and why, change nothing",
      field: "dryRun",
      value: "switch",
      sets: true,
    },
  ],
  examples: [
    "compact wikipedia --interval 2026-01-01/2026-02-01 --dry-run --druid http://localhost:8888",
    "compact wikipedia --interval 2026-01-01/2026-02-01 --all --druid http://localhost:8888",
  ],
};
