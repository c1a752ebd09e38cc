import { createHash } from "node:crypto";
import { z } from "zod";
import { canonicalJson, type JsonValue } from "../core/canonical-json.js";
import { UsageError } from "../core/errors.js";
import {
  formatInterval,
  type Interval,
  parseInstant,
  parseInterval,
  parsePeriodMs,
} from "../core/interval.js";
import type { ClusterBinding } from "../druid/cluster.js";

/** What the segment operations' requests share: their common fields and how a field is refused. */

export const MB = 1024 * 1024;
export const Datasource = z.string().min(1, "must not be empty").max(500);

/**
 * Text one of segops' parsers must accept, checked with the rest of the schema: a malformed value is
 * refused (HTTP 400, CLI exit 2, naming the field) before Druid or the ledger is asked anything.
 */
function parsedText(max: number, parse: (text: string) => unknown) {
  return z
    .string()
    .min(1, "must not be empty")
    .max(max)
    .superRefine((text, ctx) => {
      try {
        parse(text);
      } catch (error) {
        ctx.addIssue({ code: "custom", message: error instanceof Error ? error.message : String(error) });
      }
    });
}

/** An ISO-8601 interval (`start/end`, `start/period`, `period/end`). */
export const IntervalText = parsedText(200, parseInterval);
/** An ISO-8601 period, not negative (e.g. `P30D`). */
export const PeriodText = parsedText(50, parsePeriodMs);
/** An ISO-8601 instant. */
export const InstantText = parsedText(100, parseInstant);

/** A request field wrong past its schema (an interval, an instant, a period): refused naming it. */
export function requestField<T>(path: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new UsageError(`${path}: ${message}`, { path, problem: message });
  }
}

export const intervalField = (text: string): Interval => requestField("interval", () => parseInterval(text));

/**
 * A request's key (`KindRequest.key`): its fields, normalised by the kind (an interval in one spelling, a
 * default filled in), and the cluster it is for. Nothing read from Druid: the same command line names the
 * same key before and after a crash.
 */
export function requestKeyOf(
  kind: string,
  fields: { [field: string]: JsonValue },
  cluster: ClusterBinding,
): string {
  const identity = {
    kind,
    ...fields,
    cluster: { overlord: cluster.overlord, coordinator: cluster.coordinator },
  };
  return createHash("sha256").update(canonicalJson(identity)).digest("hex").slice(0, 10);
}

/** An interval field in one spelling (`P1D/2026-01-02` and `2026-01-01/2026-01-02` are one request). */
export const intervalKey = (text: string): string => formatInterval(parseInterval(text));
