/**
 * Process warnings seen while a benchmark runs, counted instead of printed one by one: a leak warning fired
 * per task would bury the tables, but it is still a finding, so `bench/run.ts` reports the counts.
 */
export interface CapturedWarning {
  name: string;
  count: number;
  /** The first message of this kind. */
  example: string;
}

export interface WarningCapture {
  readonly seen: Map<string, CapturedWarning>;
  /** Puts Node's own warning printer back. */
  restore(): void;
}

export function captureWarnings(): WarningCapture {
  const previous = process.listeners("warning");
  const seen = new Map<string, CapturedWarning>();
  const onWarning = (warning: Error) => {
    const entry = seen.get(warning.name);
    if (entry) entry.count++;
    else seen.set(warning.name, { name: warning.name, count: 1, example: warning.message });
  };
  process.removeAllListeners("warning");
  process.on("warning", onWarning);
  return {
    seen,
    restore: () => {
      process.off("warning", onWarning);
      for (const listener of previous) process.on("warning", listener);
    },
  };
}
