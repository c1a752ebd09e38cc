import { Duration } from "luxon";

/**
 * How long Druid keeps a version after it is marked unused, which bounds how far back a replace can be rolled
 * back (segops' rollback uses the replaced version again; once Druid's auto-kill deleted it, nothing is left to
 * restore). Two killers read their buffer from runtime properties, which `GET /status/properties` of the service
 * answers (unless hidden by `druid.server.hiddenProperties`):
 *
 * - the Coordinator's `KillUnusedSegments` duty: `druid.coordinator.kill.on` (default false),
 *   `druid.coordinator.kill.bufferPeriod` (default P30D; apache/druid #12599, #15710);
 * - from Druid 34, the Overlord's embedded kill (`UnusedSegmentsKiller`, `UnusedSegmentKillerConfig`; apache/druid
 *   #18028, documented in #18124): `druid.manager.segments.killUnused.enabled` (default false),
 *   `druid.manager.segments.killUnused.bufferPeriod` (default P30D: #18028 first merged it with 90 days; the config
 *   as released, `UnusedSegmentKillerConfig.DEFAULT_BUFFER_PERIOD`, and the 34.0.0 release notes say 30).
 *
 * Pure: the caller (the doctor) reads the properties and asks.
 */

export interface AutoKiller {
  /** Which killer, in words. */
  readonly name: string;
  /** The property that sets its buffer, to name in a warning. */
  readonly property: string;
  readonly enabled: boolean;
  /** ISO period an unused segment is kept before it may be deleted. */
  readonly bufferPeriod: string;
}

const COORDINATOR_ON = "druid.coordinator.kill.on";
const COORDINATOR_BUFFER = "druid.coordinator.kill.bufferPeriod";
const EMBEDDED_ON = "druid.manager.segments.killUnused.enabled";
const EMBEDDED_BUFFER = "druid.manager.segments.killUnused.bufferPeriod";

const on = (v: string | undefined) => v?.trim().toLowerCase() === "true";

/** The Coordinator's auto-kill as its `/status/properties` configure it (Druid's defaults where unset). */
export function coordinatorKiller(properties: Readonly<Record<string, string>>): AutoKiller {
  return {
    name: "the Coordinator's auto-kill (KillUnusedSegments)",
    property: COORDINATOR_BUFFER,
    enabled: on(properties[COORDINATOR_ON]),
    bufferPeriod: properties[COORDINATOR_BUFFER]?.trim() || "P30D",
  };
}

/**
 * The Overlord's embedded kill as its `/status/properties` configure it; null before Druid 34, which has none
 * (`major` from capabilities.ts; unknown: judged by the properties alone).
 */
export function embeddedKiller(
  properties: Readonly<Record<string, string>>,
  major?: number,
): AutoKiller | null {
  if (major !== undefined && major < 34) return null;
  return {
    name: "the Overlord's embedded kill (UnusedSegmentsKiller, Druid 34+)",
    property: EMBEDDED_BUFFER,
    enabled: on(properties[EMBEDDED_ON]),
    bufferPeriod: properties[EMBEDDED_BUFFER]?.trim() || "P30D",
  };
}

function periodMs(iso: string): number | null {
  const d = Duration.fromISO(iso);
  return d.isValid ? d.toMillis() : null;
}

/**
 * One warning per enabled killer whose buffer is shorter than the rollback horizon asked (an ISO period, e.g.
 * `P60D`): a replace older than its buffer may have lost the version a rollback would use again. Empty when every
 * enabled killer keeps unused versions at least that long (or none is enabled).
 */
export function rollbackHorizonWarnings(asked: string, killers: readonly (AutoKiller | null)[]): string[] {
  const askedMs = periodMs(asked);
  if (askedMs === null)
    throw new RangeError(`the rollback horizon "${asked}" is not an ISO-8601 period (e.g. P30D)`);
  const out: string[] = [];
  for (const k of killers) {
    if (!k?.enabled) continue;
    const ms = periodMs(k.bufferPeriod);
    if (ms === null) {
      out.push(
        `${k.name} is on with ${k.property}=${k.bufferPeriod}, which segops cannot read as a period: how long a replace stays undoable is not known`,
      );
    } else if (ms < askedMs) {
      out.push(
        `${k.name} deletes unused segments ${k.bufferPeriod} after they are marked unused (${k.property}), shorter than the ${asked} asked: a replace older than that may not be rolled back; raise ${k.property} or roll back sooner`,
      );
    }
  }
  return out;
}

/**
 * What `segops kill` says when Druid already deletes unused segments itself: one line naming every enabled auto-kill
 * and its buffer, or null when none is on (or none could be read). A kill of segops' then only deletes sooner.
 */
export function druidKillsNote(killers: readonly (AutoKiller | null)[]): string | null {
  const on = killers.filter((k): k is AutoKiller => k?.enabled === true);
  if (on.length === 0) return null;
  const which = on.map((k) => `${k.name} after ${k.bufferPeriod} (${k.property})`).join("; ");
  return `Druid already deletes unused segments itself: ${which}. This kill only deletes the segments it lists sooner than that.`;
}
