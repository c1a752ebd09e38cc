import type { Interval } from "../core/interval.js";
import { instantText } from "./instant-text.js";
import type { Rng } from "./rng.js";

/**
 * Druid's `IdUtils.validateId` (docs/druid-api.md §2.2): returns the message Druid would raise, or null when valid.
 * Used for task ids (as an `invalidInput` ErrorResponse) and datasource names (inside a Jackson error).
 */
export function validateId(field: string, value: unknown): string | null {
  const prefix = `Invalid value for field [${field}]:`;
  if (value === null || value === undefined || value === "") return `${prefix} must not be null`;
  const id = String(value);
  if (id.startsWith(".")) return `${prefix} Value [${id}] cannot start with '.'.`;
  if (id.includes("/")) return `${prefix} Value [${id}] cannot contain '/'.`;
  if (/[^\S ]/u.test(id))
    return `${prefix} Value [${id}] contains illegal whitespace characters.  Only space is allowed.`;
  let position = 0;
  for (const ch of id) {
    const c = ch.codePointAt(0) as number;
    if (c <= 0x1f || (c >= 0x7f && c <= 0x9f) || (c >= 0xfff0 && c <= 0xffff)) {
      return `${prefix} Value [${id}] contains illegal UTF8 character [#${c}] at position [${position}]`;
    }
    position++;
  }
  return null;
}

/** `IdUtils.newTaskId`: `<type>_<dataSource>_<8 random a–p>_<nowISO>` (docs/druid-api.md §2.2). */
export function newTaskId(type: string, dataSource: string, nowMs: number, rng: Rng): string {
  let suffix = "";
  for (let i = 0; i < 8; i++) suffix += String.fromCharCode(97 + rng.int(0, 15));
  return `${type}_${dataSource}_${suffix}_${instantText(nowMs)}`;
}

/** `SegmentId#toString` (docs/druid-api.md §4.1): `_partitionNum` is omitted when it is 0. */
export function segmentId(
  dataSource: string,
  interval: Interval,
  version: string,
  partitionNum: number,
): string {
  const base = `${dataSource}_${instantText(interval.start)}_${instantText(interval.end)}_${version}`;
  return partitionNum === 0 ? base : `${base}_${partitionNum}`;
}
