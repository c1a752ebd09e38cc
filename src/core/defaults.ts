/**
 * Every default that more than one layer needs, in one table: the CLI's flags, the engine, the runner,
 * the driver and the batchers read these names, so a default is changed in one place.
 */
export const DEFAULTS = {
  /** Polling cadence: status batches, handoff checks, worker refreshes. */
  tickMs: 1000,
  /**
   * How long questions asked after a tick or more of quiet gather before they are looked up together (a
   * status or handoff check): a task that just started or succeeded gets its first look at once, not a
   * tick later, and still at most one lookup a tick.
   */
  gatherMs: 50,
  /** Partitions of one run in flight at once (also bounded by the cluster's free worker slots). */
  maxConcurrency: 8,
  /**
   * Partitions past SUCCESS that may wait for handoff at once, as a multiple of `--max-concurrency`:
   * beyond it no new partition is submitted until the Coordinator catches up (src/ingest/runner.ts).
   */
  handoffWaitFactor: 3,
  /** Ledger lease: how long a crashed process's partitions stay locked. */
  leaseMs: 30_000,
  /** How long after SUCCESS the data must become queryable. */
  handoffTimeoutMs: 15 * 60_000,
  /** Stop a run (work handed back) when Druid has not answered for this long. */
  druidOutageTimeoutMs: 10 * 60_000,
  /** Same-class deterministic failures before a partition is dead-lettered. */
  poisonAfter: 3,
  /** Retry ceiling for transient failures of one partition. */
  maxRetry: 10,
  /** First retry delay after a failed attempt, in ticks (grows to 60× with full jitter). */
  retryBaseTicks: 5,
  /**
   * The most partitions one run or backfill request to `segops serve` may plan: 136 years of days, 5.7 of
   * hours. The service plans and stores them a piece at a time, but they are still one caller's work.
   */
  maxPartitionsPerRequest: 50_000,
  /**
   * A service's worker with claimable work, none held and no progress this long, and no outage to excuse
   * it, is stalled (`/readyz` 503): longer than any claim cycle or Druid hiccup short of an outage.
   */
  stallTimeoutMs: 300_000,
} as const;
