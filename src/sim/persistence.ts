import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RuleBook } from "./coordinator.js";
import type { SimEngine } from "./engine.js";
import { reviveSketch } from "./sql-sketches.js";
import type { SimTask } from "./task.js";
import type { SimSegment } from "./timeline.js";

/**
 * Optional persistence (`dataDir`): tasks, segments and the version counter are written to one JSON file,
 * atomically (temp file + rename) and debounced, so a restarted emulator keeps its tasks and segments.
 * Load rules are kept too. On restart, tasks that were *running* FAIL the way Druid fails tasks whose worker vanished
 * (`LOST_WORKER_MESSAGE`); waiting and pending tasks are queued again and re-acquire their locks.
 */
export const LOST_WORKER_MESSAGE =
  "The worker that this task was assigned disappeared and did not report cleanup within timeout[PT900S]. See overlord logs for more details.";

const FILE = "sim-state.json";
const FORMAT = 1;

export interface SavedState {
  format: number;
  savedAt: number;
  counters: { seq: number; lastVersion: number; failCounts: Record<string, number> };
  tasks: SimTask[];
  segments: SimSegment[];
  /** Load rules and their audit log (absent in files written before rules were emulated). */
  rules?: ReturnType<RuleBook["toJSON"]>;
  /** The Coordinator dynamic config. */
  dynamicConfig?: Record<string, unknown>;
  /** The Overlord's dynamic worker config (absent in older files, and while none was set). */
  workerConfig?: Record<string, unknown> | null;
}

export function loadState(dir: string): SavedState | null {
  let raw: string;
  try {
    raw = readFileSync(join(dir, FILE), "utf8");
  } catch {
    return null;
  }
  const state = JSON.parse(raw, reviveSketch) as SavedState;
  if (state.format !== FORMAT)
    throw new Error(`${join(dir, FILE)}: unsupported state format ${String(state.format)}`);
  return state;
}

export function restoreState(engine: SimEngine, state: SavedState): void {
  engine.restoreCounters(state.counters.seq, state.counters.lastVersion, state.counters.failCounts);
  engine.store.add(state.segments);
  if (state.rules) engine.rules.restore(state.rules);
  if (state.dynamicConfig) engine.dynamicConfig = { ...engine.dynamicConfig, ...state.dynamicConfig };
  if (state.workerConfig) engine.workerConfig = state.workerConfig;
  for (const task of state.tasks) engine.tasks.set(task.id, task);
  engine.requeueAfterRestart(LOST_WORKER_MESSAGE);
}

export interface Persistence {
  /** Writes now if anything changed since the last write. */
  flush(): void;
}

/** Hooks the engine's change notifications to a debounced atomic writer. */
export function persistTo(dir: string, engine: SimEngine, debounceMs = 50): Persistence {
  mkdirSync(dir, { recursive: true });
  let timer: NodeJS.Timeout | null = null;
  let dirty = false;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (!dirty) return;
    dirty = false;
    const state: SavedState = {
      format: FORMAT,
      savedAt: engine.now,
      counters: engine.counters(),
      // Complete tasks no longer need their chunk rows (the segments hold them).
      tasks: [...engine.tasks.values()].map((t) =>
        t.result && t.phase !== "running" ? { ...t, result: { ...t.result, chunks: [] } } : t,
      ),
      segments: engine.store.toJSON(),
      rules: engine.rules.toJSON(),
      dynamicConfig: engine.dynamicConfig,
      workerConfig: engine.workerConfig,
    };
    const path = join(dir, FILE);
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(state));
    renameSync(tmp, path);
  };
  engine.onChange = () => {
    dirty = true;
    if (!timer) {
      timer = setTimeout(flush, debounceMs);
      timer.unref();
    }
  };
  dirty = true;
  return { flush };
}
