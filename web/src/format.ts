import type { JobState, TaskState } from "./api";

/** What a cell's state is called and drawn as: the grid's five states, each with a glyph as well as a colour. */
export type GridState = "done" | "running" | "pending" | "failed" | "dead";

export const GRID_STATES: readonly { state: GridState; label: string; glyph: string }[] = [
  { state: "done", label: "done", glyph: "✓" },
  { state: "running", label: "running", glyph: "▶" },
  { state: "pending", label: "pending", glyph: "…" },
  { state: "failed", label: "failed", glyph: "!" },
  { state: "dead", label: "dead-lettered", glyph: "✕" },
];

export function gridState(s: TaskState): GridState {
  if (s === "new" || s === "suspended") return "pending";
  return s;
}

export const JOB_STATE_GLYPH: Record<JobState, string> = {
  open: "▶",
  done: "✓",
  failed: "!",
};

export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return "–";
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}

export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "–";
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s`;
  const h = Math.floor(m / 60);
  return `${h} h ${m % 60} min`;
}

/** `2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z` → `2026-01-01 → 2026-01-02` (times only when not midnight). */
export function interval(text: string): string {
  const short = (t: string) =>
    t
      .replace(/T00:00:00(\.000)?Z$/, "")
      .replace(/:00(\.000)?Z$/, "Z")
      .replace("T", " ");
  const [a, b] = text.split("/");
  return a && b ? `${short(a)} → ${short(b)}` : text;
}

export function time(iso: string | null | undefined): string {
  if (!iso) return "–";
  return iso.replace("T", " ").replace(/\.\d{3}Z$/, "Z");
}

/** A moment as a wall clock in UTC: `12:03 UTC` today, `2026-01-01 12:03 UTC` another day. */
export function clock(iso: string, now = new Date()): string {
  const hm = iso.slice(11, 16);
  return iso.slice(0, 10) === now.toISOString().slice(0, 10) ? `${hm} UTC` : `${iso.slice(0, 10)} ${hm} UTC`;
}

export function num(n: number | null | undefined): string {
  return n === null || n === undefined ? "–" : n.toLocaleString("en-US");
}
