/**
 * What a handler throws to say how its step ended (docs/ledger-and-driver.md, "Signals"). Each signal carries
 * a `kind` discriminant and a global brand, so it is recognised even when it comes from another copy of
 * this module (two installed versions, a bundled plugin): `instanceof` alone would miss those.
 */
const BRAND: unique symbol = Symbol.for("segops.driver.signal") as never;

export type SignalKind = "defer" | "progress" | "retry" | "abort";

abstract class TaskSignal extends Error {
  abstract readonly kind: SignalKind;
  readonly [BRAND] = true;
  constructor(readonly reason: string) {
    super(reason);
    this.name = new.target.name;
  }
}

/** Not now: release lease and exclusion, run again after `delayMs` (default 0); no retry used. */
export class TaskDefer extends TaskSignal {
  readonly kind = "defer" as const;
  constructor(
    reason: string,
    readonly delayMs?: number,
  ) {
    super(reason);
  }
}

/** Still working (e.g. Druid task RUNNING): keep lease and exclusion, run again after `delayMs`. */
export class TaskProgress extends TaskSignal {
  readonly kind = "progress" as const;
  constructor(
    reason: string,
    readonly delayMs?: number,
  ) {
    super(reason);
  }
}

/** Options of `TaskRetry`. */
export interface RetryOptions {
  /** The next run is a new domain attempt (`attempt + 1`), e.g. a FAILED Druid task needs a new id. @default false */
  readonly newAttempt?: boolean;
}

/** A failed attempt: counts one retry (on the committed row) and runs again after the backoff. */
export class TaskRetry extends TaskSignal {
  readonly kind = "retry" as const;
  constructor(
    reason: string,
    readonly options: RetryOptions = {},
  ) {
    super(reason);
  }
}

/** A deterministic failure: the task ends `failed` with `reason`; never retried. */
export class TaskAbort extends TaskSignal {
  readonly kind = "abort" as const;
}

export type Signal = TaskDefer | TaskProgress | TaskRetry | TaskAbort;

const KINDS: ReadonlySet<string> = new Set<SignalKind>(["defer", "progress", "retry", "abort"]);

/** The signal `error` is (from any module copy), or null for an ordinary error. */
export function asSignal(error: unknown): Signal | null {
  if (typeof error !== "object" || error === null) return null;
  const candidate = error as { [BRAND]?: unknown; kind?: unknown; reason?: unknown };
  if (candidate[BRAND] !== true || typeof candidate.kind !== "string" || !KINDS.has(candidate.kind))
    return null;
  if (typeof candidate.reason !== "string") return null;
  return error as Signal;
}
