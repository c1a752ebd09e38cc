import { DateTime, Duration } from "luxon";

/**
 * The Overlord's embedded kill (Druid 34, apache/druid #18028 and #18124: `UnusedSegmentsKiller`,
 * `UnusedSegmentKillerConfig`): when `druid.manager.segments.killUnused.enabled` is true, the Overlord deletes for
 * good every unused segment whose used status last changed at least `druid.manager.segments.killUnused.bufferPeriod`
 * ago (`EmbeddedKillTask`'s `maxUsedStatusLastUpdatedTime` = now − buffer; P30D by default, the 34.0.0 release
 * notes and `UnusedSegmentKillerConfig.DEFAULT_BUFFER_PERIOD`). Pure: the engine asks which segments are due.
 */

export const EMBEDDED_KILL_SINCE = 34;
export const ENABLED = "druid.manager.segments.killUnused.enabled";
export const BUFFER = "druid.manager.segments.killUnused.bufferPeriod";
export const DEFAULT_BUFFER = "P30D";

/**
 * The buffer period the emulated Overlord kills with, or null when it kills nothing (before 34, or not enabled).
 * Throws a TypeError naming the property when the period cannot be read (Druid would not start).
 */
export function embeddedKillBuffer(
  properties: Readonly<Record<string, string>>,
  druidVersion: number,
): string | null {
  if (druidVersion < EMBEDDED_KILL_SINCE) return null;
  if (properties[ENABLED]?.trim().toLowerCase() !== "true") return null;
  const buffer = properties[BUFFER]?.trim() || DEFAULT_BUFFER;
  if (!Duration.fromISO(buffer).isValid)
    throw new TypeError(
      `Expected \`runtimeProperties["${BUFFER}"]\` to be an ISO-8601 period (e.g. P30D), got ${JSON.stringify(buffer)}`,
    );
  return buffer;
}

/** Whether a segment marked unused at `unusedAt` is past the buffer at `now` (calendar-aware, as Joda's minus). */
export function killable(unusedAt: number | null, now: number, buffer: string): boolean {
  if (unusedAt === null || unusedAt > now) return false;
  return unusedAt <= DateTime.fromMillis(now, { zone: "utc" }).minus(Duration.fromISO(buffer)).toMillis();
}
