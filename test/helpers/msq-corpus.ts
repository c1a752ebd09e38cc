import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The MSQ corpus (test/fixtures/msq-corpus/SOURCES.md): real ingestion queries from Druid's docs and tests,
 * each file a `-- key: value` header (origin, what Druid does with it, the rows it writes) and the query.
 * Read by test/sim/msq-corpus.test.ts and bench/sql-engines.ts.
 */

export const CORPUS_DIR = join(import.meta.dirname, "../fixtures/msq-corpus");

export interface CorpusEntry {
  id: string;
  sql: string;
  origin: string;
  druid: string;
  error?: string;
  fault?: string;
  context: Record<string, unknown>;
  after: string[];
  rows?: { dataSource: string; count: number };
  expect: Array<{ dataSource: string; row: Record<string, unknown> }>;
  gap?: string;
  setup: boolean;
}

/** Reads the corpus: each file's `-- key: value` header, then the query (`{{CORPUS}}` = the corpus folder). */
export function readCorpus(dir = CORPUS_DIR): CorpusEntry[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".sql"))
    .sort()
    .map((file) => {
      const text = readFileSync(join(dir, file), "utf8");
      const header: Record<string, string[]> = {};
      const lines = text.split("\n");
      let i = 0;
      for (; i < lines.length; i++) {
        const m = /^-- (\w+): (.*)$/.exec(lines[i] as string);
        if (!m) break;
        const key = m[1] as string;
        header[key] = [...(header[key] ?? []), m[2] as string];
      }
      const one = (k: string) => header[k]?.[0];
      const rows = one("rows")?.split(" ");
      return {
        id: file.replace(/\.sql$/, ""),
        sql: lines.slice(i).join("\n").replaceAll("{{CORPUS}}", dir),
        origin: one("origin") ?? "",
        druid: one("druid") ?? "",
        error: one("error"),
        fault: one("fault"),
        context: JSON.parse(one("context") ?? "{}"),
        after: (one("after") ?? "")
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean),
        rows: rows ? { dataSource: rows[0] as string, count: Number(rows[1]) } : undefined,
        expect: (header.expect ?? []).map((e) => {
          const at = e.indexOf(" ");
          return { dataSource: e.slice(0, at), row: JSON.parse(e.slice(at + 1)) };
        }),
        gap: one("gap"),
        setup: one("setup") !== undefined,
      };
    });
}
