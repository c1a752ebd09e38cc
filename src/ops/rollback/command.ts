import type { KindCommand } from "../../driver/kind.js";

/** `segops rollback`: the fields of `POST /api/v1/rollbacks` as flags (light: read by `segops --help`). */
export const rollbackCommand: KindCommand = {
  name: "rollback",
  description:
    "serve an earlier version of an interval again: newer versions unused, V used, served and audited",
  datasource: "the datasource to roll back",
  unit: "chunk(s) to roll back",
  flags: [
    {
      flag: "--interval <interval>",
      description: "the interval to roll back (ISO-8601)",
      field: "interval",
      value: "text",
      required: true,
    },
    {
      flag: "--to-version <version>",
      description: "the segment version to restore in each chunk (see `segops audit`)",
      field: "toVersion",
      value: "text",
    },
    {
      flag: "--before <instant>",
      description: "restore, in each chunk, the newest version written before this instant",
      field: "before",
      value: "text",
    },
    {
      flag: "--dry-run",
      description: "show what would change, change nothing",
      field: "dryRun",
      value: "switch",
      sets: true,
    },
  ],
  exactlyOne: [["--to-version", "--before"]],
  examples: [
    "rollback wikipedia --interval 2026-01-01/2026-01-08 --before 2026-01-10T00:00:00Z --dry-run --druid http://localhost:8888",
    "rollback wikipedia --interval 2026-01-01/2026-01-02 --to-version 2026-01-02T03:04:05.678Z --druid http://localhost:8888",
  ],
};
