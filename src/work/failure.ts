/**
 * Why a Druid task FAILED, reduced to a class (architecture doc, "One ingestion, step by step"): the same
 * deterministic class failing `poisonAfter` times dead-letters the partition; transient classes (a lost
 * worker, a revoked lock, an OOM kill, an operator's shutdown) only consume retries. Pure.
 */

export interface FailureClass {
  /** Stable name, compared across attempts. */
  name: string;
  /** Will the same input fail the same way again? */
  deterministic: boolean;
}

interface Rule extends FailureClass {
  pattern: RegExp;
}

// Messages from docs/druid-api.md §2.3, §4.4, §5 and Druid's task runners; order matters (first match wins).
const RULES: readonly Rule[] = [
  {
    name: "parse-exceptions",
    deterministic: true,
    // Native batch, and MSQ's TooManyWarnings over CannotParseExternalData (docs/druid-api.md §6).
    pattern: /max parse exceptions|unparseable|parse exception|TooManyWarnings|CannotParseExternalData/i,
  },
  {
    // Another writer took the interval: retry later, never poison. Druid's wordings: the emulator's and the
    // Overlord's "Lock revoked", AbstractBatchIndexTask's "Lock for interval [%s] was revoked.", TaskLockbox's
    // "Lock was revoked.", SegmentNukeAction's "Some locks for task[%s] are already revoked", and from Druid 34
    // the forbidden DruidException of a task action under revoked locks (apache/druid #18182; its exact words
    // not verified, so any "lock … revoked" in one line); MSQ's InsertLockPreempted.
    name: "lock-revoked",
    deterministic: false,
    pattern:
      /\blocks?\b[^\n]{0,160}\brevoked\b|\brevoked\b[^\n]{0,40}\blocks?\b|cannot acquire a lock|InsertLockPreempted/i,
  },
  { name: "shutdown", deterministic: false, pattern: /shutdown request from user|canceled: query canceled/i },
  {
    name: "lost-worker",
    deterministic: false,
    pattern:
      /lost worker|worker.*(disappeared|went away|died)|task location|peon|process exited|failed to run/i,
  },
  { name: "out-of-memory", deterministic: false, pattern: /outofmemory|out of memory|oom|killed/i },
  { name: "timeout", deterministic: false, pattern: /timed? ?out|timeout/i },
  {
    name: "invalid-input",
    deterministic: true,
    pattern:
      /cannot construct instance|invalid input|invalidinput|classcast|no such file|not found|illegal argument|must not be null/i,
  },
  { name: "phase-failure", deterministic: true, pattern: /failed in phase\[/i },
];

export function classifyTaskFailure(errorMsg: string | null | undefined): FailureClass {
  const message = errorMsg ?? "";
  for (const rule of RULES)
    if (rule.pattern.test(message)) return { name: rule.name, deterministic: rule.deterministic };
  // An unexplained failure is treated as deterministic so that a broken input cannot loop forever;
  // `poisonAfter` attempts still give flaky infrastructure its chances.
  return { name: message ? "unclassified" : "no-message", deterministic: true };
}

export interface AttemptFailure {
  attempt: number;
  taskId: string;
  failureClass: string;
  deterministic: boolean;
  errorMsg: string | null;
}

/**
 * Poison: the newest `poisonAfter` failures are all the same deterministic class. A transient failure
 * in between breaks the run (it may have hidden the real cause).
 */
export function isPoisoned(failures: readonly AttemptFailure[], poisonAfter: number): boolean {
  if (failures.length < poisonAfter || poisonAfter < 1) return false;
  const recent = failures.slice(-poisonAfter);
  const first = recent[0] as AttemptFailure;
  return first.deterministic && recent.every((f) => f.failureClass === first.failureClass);
}
