import { type SqlType, Timestamp, type Value } from "./sql.js";
import { timestampText, type Zone } from "./sql-time.js";

/**
 * Converting between multi-value strings and arrays (docs/querying/sql-multivalue-string-functions.md,
 * docs/querying/multi-value-dimensions.md): a multi-value string row and an ARRAY are JS arrays at runtime
 * (the segment stores a multi-value string dimension's row as its list of values). Registered in
 * sql-functions.ts's SCALARS (its `ScalarFn` shape, written out here so the two modules do not import each other).
 */

interface FnContext {
  timeZone: Zone;
}

interface ScalarFn {
  min: number;
  max: number;
  type(): { type: SqlType };
  run(args: Value[], ctx: FnContext): Value;
}

/** One element as text (a multi-value string holds strings; a null element stays null). */
function elementText(v: unknown, ctx: FnContext): string | null {
  if (v === null || v === undefined) return null;
  return v instanceof Timestamp ? timestampText(v.ms, ctx.timeZone) : String(v);
}

const asValue = (v: unknown): Value => v as Value;

export const MULTIVALUE_SCALARS: Record<string, ScalarFn> = {
  /**
   * An ARRAY (or a string) as a multi-value VARCHAR (`ArrayToMultiValueStringOperatorConversion`: STRING or ARRAY
   * operands; a real Druid 33 answered `ARRAY_TO_MV(1)` as '1').
   */
  ARRAY_TO_MV: {
    min: 1,
    max: 1,
    type: () => ({ type: "VARCHAR" }),
    run: ([v], ctx) => {
      if (v === null || v === undefined) return null;
      if (Array.isArray(v)) return asValue((v as unknown[]).map((x) => elementText(x, ctx)));
      return elementText(v, ctx);
    },
  },
  /**
   * A multi-value string column as a VARCHAR ARRAY (`MultiValueStringToArrayOperatorConversion`: STRING operands;
   * a column only, which sql-eval.ts checks); a single value is an array of one.
   */
  MV_TO_ARRAY: {
    min: 1,
    max: 1,
    type: () => ({ type: "ARRAY" }),
    run: ([v], ctx) => {
      if (v === null || v === undefined) return null;
      if (Array.isArray(v)) return asValue((v as unknown[]).map((x) => elementText(x, ctx)));
      return asValue([elementText(v, ctx)]);
    },
  },
};
