import type { KindCommand, KindOfWork } from "../driver/kind.js";
import type { DruidServices } from "../work/services.js";

/**
 * One kind of work of this build: the kind, loaded when work runs, and for a kind whose request declares a
 * CLI command, that command's flag table alone (the same object the request names), so that `segops --help`
 * lists every command without loading any kind.
 */
export interface RegisteredKind {
  kind(): Promise<KindOfWork<DruidServices, never>>;
  command?(): Promise<KindCommand>;
}

/**
 * Every kind of work this build runs, one entry each, in the order `segops --help` lists their commands.
 * A new kind is one folder and one entry here; `KINDS` (jobs/kinds.ts) is this list loaded.
 */
export const REGISTRY: readonly RegisteredKind[] = [
  { kind: async () => (await import("../ingest/kind.js")).ingestKind },
  {
    kind: async () => (await import("../ops/rollback/kind.js")).rollbackKind,
    command: async () => (await import("../ops/rollback/command.js")).rollbackCommand,
  },
  {
    kind: async () => (await import("../ops/kill/kind.js")).killKind,
    command: async () => (await import("../ops/kill/command.js")).killCommand,
  },
  {
    kind: async () => (await import("../ops/compact/kind.js")).compactKind,
    command: async () => (await import("../ops/compact/command.js")).compactCommand,
  },
];

/** The registry's commands, in its order, without loading any kind. */
export async function registeredCommands(
  registry: readonly RegisteredKind[] = REGISTRY,
): Promise<KindCommand[]> {
  const commands = await Promise.all(registry.map((r) => r.command?.()));
  return commands.filter((c): c is KindCommand => c !== undefined);
}
