import type { KindCommand } from "../../driver/kind.js";

/** `segops kill`: the fields of `POST /api/v1/kills` as flags (light: read by `segops --help`). */
export const killCommand: KindCommand = {
  name: "kill",
  description:
    "delete unused segments for good (dry run unless --yes): only unused ones, never what is served",
  datasource: "the datasource to clean",
  unit: "kill task(s)",
  flags: [
    {
      flag: "--interval <interval>",
      description: "the interval to clean (ISO-8601); segments wholly inside it",
      field: "interval",
      value: "text",
      required: true,
    },
    {
      flag: "--older-than <period>",
      description: "only segments marked unused at least this long ago (ISO-8601 period, e.g. P30D)",
      field: "olderThan",
      value: "text",
    },
    {
      flag: "--version <v>",
      description: "only this version (repeatable)",
      field: "versions",
      value: "list",
    },
    {
      flag: "--batch-size <n>",
      description: "segments per kill task",
      field: "batchSize",
      value: "count",
      default: 100,
    },
    // A kill deletes for good: the request is a dry run unless told otherwise.
    {
      flag: "--yes",
      description: "delete (without it: a dry run that changes nothing)",
      field: "dryRun",
      value: "switch",
      sets: false,
    },
  ],
  examples: [
    "kill wikipedia --interval 2026-01-01/2026-02-01 --older-than P30D --druid http://localhost:8888",
    "kill wikipedia --interval 2026-01-01/2026-02-01 --older-than P30D --yes --druid http://localhost:8888",
  ],
};
