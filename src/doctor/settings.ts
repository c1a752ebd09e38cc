import { type AutoKiller, rollbackHorizonWarnings } from "../druid/auto-kill.js";
import type { Finding } from "./report.js";

/**
 * Coordinator settings that act on what a backfill writes: a datasource's auto-compaction config (it rewrites
 * intervals segops has verified, and its tasks take slots and locks), and the kill settings (a kill deletes the
 * unused segments a rollback would mark used again). Pure: the two configs as Druid answered them (null: not
 * read) and the templates' datasources.
 */

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * `skipIntervals`: whether segops keeps auto-compaction out of a partition while writing it on this release
 * (the capability row `compactionSkipIntervals`, Druid 39): then a configured datasource is a note, else a warning.
 */
export function compactionFindings(
  config: unknown,
  dataSources: readonly string[],
  skipIntervals = false,
): Finding[] {
  if (!isRecord(config)) return [];
  const out: Finding[] = [];
  const list = Array.isArray(config.compactionConfigs) ? config.compactionConfigs.filter(isRecord) : [];
  for (const ds of dataSources) {
    const entry = list.find((c) => c.dataSource === ds);
    if (!entry) continue;
    const skip =
      typeof entry.skipOffsetFromLatest === "string" ? entry.skipOffsetFromLatest : "P1D (Druid's default)";
    out.push(
      skipIntervals
        ? {
            severity: "note",
            code: "auto-compaction",
            message: `auto-compaction is configured for ${ds} (skipOffsetFromLatest ${skip}): segops adds each partition's interval to its skipIntervals while writing it and takes it out after (Druid 39), so compaction waits; it needs CONFIG WRITE for that, and compacts the backfilled intervals later, with new versions`,
          }
        : {
            severity: "warning",
            code: "auto-compaction",
            message: `auto-compaction is configured for ${ds} (skipOffsetFromLatest ${skip}): it rewrites backfilled intervals older than that with new segment versions after segops verified them, and its tasks compete with the backfill for slots and locks (this release has no skipIntervals to keep it out). Pause it for the datasource during the backfill, or run segops compact instead`,
          },
    );
  }
  const ratio = config.compactionTaskSlotRatio;
  const max = config.maxCompactionTaskSlots;
  if (list.length > 0 && typeof ratio === "number") {
    out.push({
      severity: "note",
      code: "compaction-slots",
      message: `auto-compaction may take up to ${Math.round(ratio * 100)}% of task slots${typeof max === "number" && max < 2_147_483_647 ? ` (at most ${max})` : ""} (compactionTaskSlotRatio): admission counts them as busy`,
    });
  }
  return out;
}

/**
 * The kill settings. `killers`: Druid's auto-kills as the services' runtime properties configure them
 * (src/druid/auto-kill.ts), or null when the properties could not be read; `horizon`: how far back the user wants
 * to roll back (an ISO period), when asked.
 */
export function killFindings(
  dynamicConfig: unknown,
  dataSources: readonly string[],
  killers: readonly (AutoKiller | null)[] | null = null,
  horizon?: string,
): Finding[] {
  const out: Finding[] = [];
  const config = isRecord(dynamicConfig) ? dynamicConfig : null;
  const listed = Array.isArray(config?.killDataSourceWhitelist)
    ? config.killDataSourceWhitelist.filter((x): x is string => typeof x === "string")
    : [];
  const maxKill = config?.maxKillTaskSlots;
  const killsAll = listed.length === 0;
  const hit = killsAll ? [...dataSources] : dataSources.filter((d) => listed.includes(d));
  const scope = killsAll
    ? "every datasource (killDataSourceWhitelist is empty)"
    : `only ${listed.join(", ")}`;
  const slots =
    typeof maxKill === "number" && maxKill < 2_147_483_647 ? `, ${maxKill} kill task(s) at a time` : "";
  if (killers === null) {
    if (!config) return out;
    out.push({
      severity: hit.length > 0 ? "warning" : "note",
      code: "coordinator-kill",
      message: `when the Coordinator's kill duty is on (druid.coordinator.kill.on: its runtime properties could not be read), it deletes unused segments of ${scope} older than its buffer${slots}${hit.length > 0 ? `: a rollback of ${hit.join(", ")} needs the replaced segments, so keep the buffer longer than the time you may want to roll back` : ""}`,
    });
    return out;
  }
  const enabled = killers.filter((k): k is AutoKiller => k?.enabled === true);
  if (enabled.length === 0) {
    out.push({
      severity: "note",
      code: "auto-kill",
      message:
        "no auto-kill is on (druid.coordinator.kill.on, and from Druid 34 druid.manager.segments.killUnused.enabled): replaced versions stay until killed by hand, so a replace can always be rolled back",
    });
  }
  for (const k of enabled) {
    const coordinator = k.property.startsWith("druid.coordinator.");
    out.push({
      severity: "note",
      code: "auto-kill",
      message: `${k.name} is on: unused segments${coordinator ? ` of ${scope}` : ""} are deleted ${k.bufferPeriod} after they are marked unused (${k.property})${coordinator ? slots : ""}, so a replace can be rolled back for that long`,
    });
  }
  if (horizon !== undefined) {
    for (const message of rollbackHorizonWarnings(horizon, killers)) {
      out.push({ severity: "warning", code: "rollback-horizon", message });
    }
  }
  return out;
}
