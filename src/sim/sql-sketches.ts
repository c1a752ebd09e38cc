import { type SqlType, Timestamp, unsupported, type Value } from "./sql.js";

/**
 * Druid's DataSketches SQL (the druid-datasketches extension; Druid's docs/querying/sql-aggregations.md, its
 * sketch functions, and the extension's HLL and Theta pages under docs/development/extensions-core/): APPROX_COUNT_DISTINCT_DS_HLL,
 * APPROX_COUNT_DISTINCT_DS_THETA, DS_HLL and DS_THETA over a group's rows, and HLL_SKETCH_ESTIMATE /
 * THETA_SKETCH_ESTIMATE of such a sketch. The aggregates are compiled in sql-sketch-aggregates.ts.
 *
 * The emulator keeps the distinct values themselves: that is what the sketches hold where they are exact. A Theta
 * sketch is exact while it holds no more than its nominal entries (`size`, Druid's default 16384,
 * SketchAggregatorFactory; DataSketches' Theta sketch stays in exact mode, theta 1.0, until then). An HLL sketch
 * keeps a list, then a hash set, of coupons and becomes an HLL array when that set, at its largest 2^(lgK−3) slots,
 * is more than 3/4 full (DataSketches' CouponHashSet.checkGrowOrPromote): past 384 distinct values at Druid's
 * default lgK 12. Below that its estimate rounds to the number of distinct values (APPROX_COUNT_DISTINCT_DS_HLL
 * rounds). Past those sizes Druid estimates and the emulator still counts exactly
 * (docs/emulator.md).
 *
 * Observed on a real Druid 33 with druid-datasketches: null and empty strings are not counted (('a'), (''), (NULL),
 * ('a') → 1); a group with no rows counts 0 (and 0.0 estimated); HLL_SKETCH_ESTIMATE(…, TRUE) rounds but stays a
 * DOUBLE (10.0). Unrounded, an HLL sketch's estimate comes from the library's coupon-mapping interpolation (3
 * distinct values → 3.000000014901161): the emulator refuses that rather than answer 3.0.
 */

/** A sketch as the emulator holds it: its distinct, non-empty input values. */
export class Sketch {
  constructor(
    readonly kind: "HLL" | "THETA",
    readonly keys: ReadonlySet<string>,
  ) {}
  /** As the emulator's state file keeps it (persistence.ts reads it back with reviveSketch). */
  toJSON(): { $sketch: Sketch["kind"]; keys: string[] } {
    return { $sketch: this.kind, keys: [...this.keys] };
  }
}

/** A JSON.parse reviver: a saved sketch back as a Sketch. */
export function reviveSketch(_key: string, v: unknown): unknown {
  if (typeof v !== "object" || v === null || !("$sketch" in v)) return v;
  const o = v as { $sketch: Sketch["kind"]; keys: string[] };
  return new Sketch(o.$sketch, new Set(o.keys));
}

/** sql-functions.ts' ScalarFn, written out here so that the two modules do not import each other. */
interface ScalarFn {
  min: number;
  max: number;
  type(args: Array<{ type: SqlType }>): { type: SqlType };
  run(args: Value[]): Value;
}

/**
 * What a sketch counts a value as: numbers by value, text by its characters, each element of a list; null and ''
 * are not counted (DataSketches' update ignores null and empty input).
 */
export function sketchKeys(v: unknown): string[] {
  if (v === null || v === undefined) return [];
  if (Array.isArray(v)) return v.flatMap(sketchKeys);
  if (v instanceof Timestamp) return [`n:${v.ms}`];
  if (typeof v === "number") return [`n:${v}`];
  if (typeof v === "string") return v === "" ? [] : [`s:${v}`];
  if (typeof v === "boolean") return [`n:${v ? 1 : 0}`];
  throw unsupported("A sketch of a COMPLEX value");
}

/**
 * The native metrics that build a sketch from raw input (ingestion's `metricsSpec`, and what MSQ writes for a
 * sketch aggregate): `HLLSketchBuild` (HllSketchBuildAggregatorFactory) and `thetaSketch` (SketchMergeAggregatorFactory
 * over raw input). A row's value is a Sketch; rows rolled up together take the union.
 */
export const SKETCH_METRICS: Readonly<Record<string, Sketch["kind"]>> = {
  HLLSketchBuild: "HLL",
  thetaSketch: "THETA",
};

export function sketchMetricInput(type: string, raw: unknown): Sketch {
  return new Sketch(SKETCH_METRICS[type] ?? "THETA", new Set(sketchKeys(raw)));
}

export function unionSketches(a: unknown, b: unknown): Sketch {
  const x = a as Sketch;
  const y = b as Sketch;
  return new Sketch(x.kind, new Set([...x.keys, ...y.keys]));
}

/**
 * The refusal for a sketch in a result: Druid prints its serialized bytes as base64 (a real Druid 33 answered
 * `"AgEHDAMIAgATBRwHwmWhBw=="` for a DS_HLL), which the emulator does not produce.
 */
export function refuseSketchCell(v: unknown): void {
  if (v instanceof Sketch)
    throw unsupported(
      `A ${v.kind === "HLL" ? "DS_HLL" : "DS_THETA"} sketch in a result (Druid prints its bytes)`,
    );
}

function sketchArg(v: Value | undefined, fn: string, kind: Sketch["kind"]): Sketch | null {
  if (v === null || v === undefined) return null;
  const s = v as unknown;
  if (s instanceof Sketch && s.kind === kind) return s;
  throw unsupported(`${fn} of anything but a ${kind === "HLL" ? "DS_HLL" : "DS_THETA"} aggregate`);
}

/** HLL_SKETCH_ESTIMATE(sketch[, round]) and THETA_SKETCH_ESTIMATE(sketch), both DOUBLE (observed). */
export const SKETCH_SCALARS: Record<string, ScalarFn> = {
  HLL_SKETCH_ESTIMATE: {
    min: 1,
    max: 2,
    type: () => ({ type: "DOUBLE" }),
    run([v, round]) {
      const s = sketchArg(v, "HLL_SKETCH_ESTIMATE", "HLL");
      if (s === null) return null;
      if (round !== 1 && round !== "true" && s.keys.size > 1)
        throw unsupported(
          "HLL_SKETCH_ESTIMATE without rounding (Druid interpolates DataSketches' coupon mapping: 3 distinct values estimate 3.000000014901161); HLL_SKETCH_ESTIMATE(…, TRUE)",
        );
      return s.keys.size;
    },
  },
  THETA_SKETCH_ESTIMATE: {
    min: 1,
    max: 1,
    type: () => ({ type: "DOUBLE" }),
    run([v]) {
      const s = sketchArg(v, "THETA_SKETCH_ESTIMATE", "THETA");
      return s === null ? null : s.keys.size;
    },
  },
};
