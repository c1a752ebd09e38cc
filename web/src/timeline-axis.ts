/**
 * The timeline's time axis (pure): tick instants at whole days, weeks (Mondays), months or years, whichever
 * gives a handful across the span, each with its label.
 */

const DAY = 86_400_000;

export interface Tick {
  at: number;
  label: string;
}

function startOfDay(t: number): number {
  return Math.floor(t / DAY) * DAY;
}

function monthStart(t: number, step: number): number {
  const d = new Date(t);
  const m = d.getUTCFullYear() * 12 + d.getUTCMonth();
  const next = Math.ceil(m / step) * step;
  return Date.UTC(Math.floor(next / 12), next % 12, 1);
}

function addMonths(t: number, months: number): number {
  const d = new Date(t);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + months, 1);
}

/** Ticks within [t0, t1], at most about `most` of them. */
export function ticks(t0: number, t1: number, most = 8): Tick[] {
  const span = t1 - t0;
  if (!(span > 0)) return [];
  const out: Tick[] = [];
  const days = span / DAY;
  if (days <= most * 7) {
    const step = days <= most ? 1 : 7;
    let t = startOfDay(t0);
    if (t < t0) t += DAY;
    // Weeks start on Mondays (1970-01-01 was a Thursday: Monday is day 4 of the epoch modulo 7).
    if (step === 7) while ((((t / DAY) % 7) + 7) % 7 !== 4) t += DAY;
    for (; t <= t1; t += step * DAY) out.push({ at: t, label: new Date(t).toISOString().slice(0, 10) });
    return out;
  }
  const months = days / 30.44;
  const step = [1, 2, 3, 6, 12, 24, 60, 120].find((s) => months / s <= most) ?? 240;
  let first = monthStart(t0, step);
  if (first < t0) first = addMonths(first, step);
  for (let t = first; t <= t1; t = addMonths(t, step))
    out.push({ at: t, label: new Date(t).toISOString().slice(0, step >= 12 ? 4 : 7) });
  return out;
}
