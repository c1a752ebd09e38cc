import { describe, expect, it } from "vitest";
import { parseInterval } from "../../src/core/interval.js";
import type { DataSegment } from "../../src/druid/types.js";
import { planCompaction } from "../../src/ops/compact/plan.js";
import { segmentId } from "../../src/work/segments.js";

/** `segops compact` plans by the same candidate rule as the audit, with the datasource's compaction config. */

const DS = "small";
const DAY = "2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z";
const NEXT = "2026-01-02T00:00:00.000Z/2026-01-03T00:00:00.000Z";
const V1 = "2026-02-01T00:00:00.000Z";

function seg(interval: string, partitionNum: number, partitions: number, rows: number): DataSegment {
  return {
    dataSource: DS,
    interval,
    version: V1,
    loadSpec: { type: "local" },
    dimensions: "",
    metrics: "",
    shardSpec: { type: "numbered", partitionNum, partitions },
    binaryVersion: 9,
    size: 30 * 1024,
    totalRows: rows,
  } as DataSegment;
}

function plan(
  used: DataSegment[],
  compactionConfig: Record<string, unknown> | null = null,
  maxRowsPerSegment?: number,
) {
  return planCompaction({
    request: {
      datasource: DS,
      interval: parseInterval(`${DAY.split("/")[0]}/${NEXT.split("/")[1]}`),
      ...(maxRowsPerSegment !== undefined ? { maxRowsPerSegment } : {}),
    },
    used,
    served: used.map(segmentId),
    locked: [],
    compactionConfig,
  });
}

describe("compaction planning of a small datasource", () => {
  const fragmented = [seg(DAY, 0, 2, 800), seg(DAY, 1, 2, 800)];
  const whole = [seg(NEXT, 0, 1, 900)];

  it("merges a chunk's several small segments, and leaves a chunk's one small segment alone", () => {
    const p = plan([...fragmented, ...whole]);
    expect(p.chunks.map((c) => [c.interval, c.reasons])).toEqual([
      [DAY, ["2 segments, 2 below the size band"]],
    ]);
    expect(p.tasks).toHaveLength(1);
  });

  it("with the datasource's compaction config: its rows cap decides what merging can change, and is written", () => {
    const config = {
      dataSource: DS,
      tuningConfig: { partitionsSpec: { type: "dynamic", maxRowsPerSegment: 1000 } },
    };
    // 1600 rows need two segments of at most 1000: the fragmented day is as compaction would write it.
    expect(plan([...fragmented, ...whole], config).chunks).toEqual([]);
    const cap = { ...config, tuningConfig: { partitionsSpec: { type: "dynamic", maxRowsPerSegment: 2000 } } };
    const planned = plan([...fragmented, ...whole], cap);
    expect(planned.chunks.map((c) => c.interval)).toEqual([DAY]);
    expect(planned.tasks[0]?.payload).toMatchObject({ maxRowsPerSegment: 2000, sizeBand: { maxRows: 2000 } });
  });

  it("an explicit maxRowsPerSegment wins over the config", () => {
    const config = {
      dataSource: DS,
      tuningConfig: { partitionsSpec: { type: "dynamic", maxRowsPerSegment: 1000 } },
    };
    const planned = plan([...fragmented, ...whole], config, 5_000_000);
    expect(planned.chunks.map((c) => c.interval)).toEqual([DAY]);
    expect(planned.tasks[0]?.payload).toMatchObject({ maxRowsPerSegment: 5_000_000 });
  });
});
