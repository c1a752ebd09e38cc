/** What every benchmark hands back to `bench/run.ts`. */
export interface BenchResult {
  /** Section title in the results file. */
  title: string;
  /** One paragraph: what was measured and how. */
  setup: string;
  /** Markdown tables (with ratios against the baselines of the same run). */
  tables: string[];
  /** Footnotes under the tables (extrapolations, caveats). */
  notes: string[];
  /** Rows for the headline table (README material). */
  headline: Array<[benchmark: string, segops: string, baselines: string]>;
  /** Correctness problems found by the benchmark's own checks; any makes the run exit non-zero. */
  problems: string[];
  /** Named figures for `npm run bench -- --json` (one flat object over every benchmark that ran). */
  figures?: Record<string, unknown>;
}

/** Collects correctness problems instead of throwing, so one bad variant does not hide the others' figures. */
export class Checks {
  readonly problems: string[] = [];

  expect(ok: boolean, message: string): void {
    if (!ok) this.problems.push(message);
  }

  equal(actual: unknown, expected: unknown, what: string): void {
    if (actual !== expected)
      this.problems.push(`${what}: expected ${String(expected)}, got ${String(actual)}`);
  }
}
