import { z } from "zod";
import { UsageError } from "../core/errors.js";
import { type Interval, parseInterval } from "../core/interval.js";

/** What the segment operations' requests share: their common fields and how a field is refused. */

export const MB = 1024 * 1024;
export const Datasource = z.string().min(1, "must not be empty").max(500);
export const IntervalText = z.string().min(1, "must not be empty").max(200);

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
