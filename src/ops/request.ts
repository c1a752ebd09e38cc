import { z } from "zod";
import { UsageError } from "../core/errors.js";
import { type Interval, parseInstant, parseInterval, parsePeriodMs } from "../core/interval.js";

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
