import type { Interval } from "../core/interval.js";

/**
 * Druid's text for instants, including the ends of eternity: segment granularity ALL gives segments over
 * `Intervals.ETERNITY` (Long.MIN_VALUE/2 … Long.MAX_VALUE/2 ms), far outside what a JS Date can print.
 */
const MIN_TEXT = "-146136543-09-08T08:23:32.096Z";
const MAX_TEXT = "146140482-04-24T15:36:27.903Z";
const JS_DATE_LIMIT = 8.64e15;

export function instantText(ms: number): string {
  if (ms <= -JS_DATE_LIMIT) return MIN_TEXT;
  if (ms >= JS_DATE_LIMIT) return MAX_TEXT;
  return new Date(ms).toISOString();
}

export function intervalText(i: Interval): string {
  return `${instantText(i.start)}/${instantText(i.end)}`;
}
