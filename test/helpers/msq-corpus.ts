import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * The MSQ corpus (test/fixtures/msq-corpus/SOURCES.md): real ingestion queries from Druid's docs and tests,
 * each file a `-- key: value` header (origin, what Druid does with it, the rows it writes) and the query.
 * Read by test/sim/msq-corpus.test.ts and bench/sql-engines.ts.
 */

export const CORPUS_DIR = join(import.meta.dirname, "../fixtures/msq-corpus");

/** Where generated inputs go (`-- generate: <file> <rows>`). */
const GENERATED_DIR = join(tmpdir(), "segops-msq-corpus");

/**
 * `MSQFaultsTest.createNdJsonFile`'s input: `rows` lines of `{"timestamp":"2016-06-27T00:00:11.080Z"}`, written
 * once (too large to keep in the repository, as in Druid's tests, which write it on the fly).
 */
function generate(file: string, rows: number): void {
  const path = join(GENERATED_DIR, file);
  if (existsSync(path)) return;
  mkdirSync(GENERATED_DIR, { recursive: true });
  // Written aside and renamed, so a reader in another process never sees half a file.
  const part = `${path}.${process.pid}.part`;
  writeFileSync(part, '{"timestamp":"2016-06-27T00:00:11.080Z"}\n'.repeat(rows));
  renameSync(part, path);
}

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
      for (const g of header.generate ?? []) {
        const [name, rows] = g.split(" ");
        generate(name as string, Number(rows));
      }
      const rows = one("rows")?.split(" ");
      return {
        id: file.replace(/\.sql$/, ""),
        sql: lines
          .slice(i)
          .join("\n")
          .replaceAll("{{CORPUS}}", dir)
          .replaceAll("{{GENERATED}}", GENERATED_DIR),
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
