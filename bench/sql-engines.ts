/**
 * The evidence behind the emulator's hand-written SQL engine: the MSQ corpus (test/fixtures/msq-corpus) and
 * the Broker queries of the project's tests (test/sim/sql-broker.test.ts, test/conformance/*cases*.ts), run
 * through (a) the emulator and (b) a prototype that translates Druid SQL onto DuckDB (@duckdb/node-api, the
 * engine the project measured as the best embedded candidate). Per engine: coverage — runs (the rows Druid's
 * semantics give), refused-correctly (Druid's error code and message, or its MSQ fault), wrong (other rows, or
 * accepting what Druid refuses, or another error), unsupported (the engine cannot express it) — and its
 * start-up time and resident set, each engine in a fresh process of its own.
 *
 * DuckDB is not a dependency of segops: install it outside the checkout and point the bench at it,
 *
 *   npm i --prefix /tmp/duckdb @duckdb/node-api@1.5.6-r.1
 *   SEGOPS_DUCKDB=/tmp/duckdb/node_modules/@duckdb/node-api node --import tsx bench/sql-engines.ts
 *
 * Without SEGOPS_DUCKDB (or when it cannot be imported) the DuckDB column says "not installed".
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { type CorpusEntry, readCorpus } from "../test/helpers/msq-corpus.js";
import { markdownTable, num } from "./lib/table.js";

type Verdict = "runs" | "refused-correctly" | "wrong" | "unsupported";

interface ChildReport {
  engine: string;
  installed: boolean;
  startMs: number;
  idleRssMb: number;
  afterRssMb: number;
  corpus: Record<string, Verdict>;
  /** Broker queries: answered / refused (a Druid-shaped 4xx) / unsupported / failed. */
  broker: Record<string, number>;
  notes: string[];
}

const root = join(fileURLToPath(import.meta.url), "../..");
const MB = 1024 * 1024;

/** A JSON answer, read loosely (the bench only looks up a few fields). */
// biome-ignore lint/suspicious/noExplicitAny: see above
type Json = any;

/** SELECT statements quoted in the project's Broker tests and conformance cases (string literals). */
function brokerQueries(): string[] {
  const files = [
    "test/sim/sql-broker.test.ts",
    ...readdirSync(join(root, "test/conformance"))
      .filter((f) => /cases.*\.ts$/.test(f))
      .map((f) => `test/conformance/${f}`),
  ];
  const out = new Set<string>();
  for (const f of files) {
    let text: string;
    try {
      text = readFileSync(join(root, f), "utf8");
    } catch {
      continue;
    }
    for (const m of text.matchAll(/(["'`])((?:SELECT|WITH)\s(?:(?!\1)[^\\]|\\.)*?)\1/gis)) {
      const q = (m[2] as string).replace(/\\n/g, "\n").replace(/\\"/g, '"');
      if (!q.includes("${")) out.add(q);
    }
  }
  return [...out];
}

// ------------------------------------------------------------------------------------------- emulator

const sameRow = (want: Record<string, unknown>, got: Record<string, unknown>) =>
  Object.entries(want).every(([k, v]) => {
    const g = got[k];
    if (v === null) return g === null || g === undefined;
    return typeof v === "number" ? Number(g) === v : String(g) === String(v);
  });

async function emulatorChild(): Promise<ChildReport> {
  const t0 = performance.now();
  const { startSim } = await import("../src/sim/index.js");
  const { ManualClock } = await import("../src/core/clock.js");
  const start = async () => {
    const clock = new ManualClock(Date.UTC(2026, 2, 1));
    const sim = await startSim({ port: 0, clock, handoffDelayMs: 0 });
    return { sim, clock };
  };
  const first = await start();
  const startMs = performance.now() - t0;
  const idleRssMb = process.memoryUsage().rss / MB;
  await first.sim.close();
  const corpus: Record<string, Verdict> = {};
  const byId = new Map(readCorpus().map((e) => [e.id, e]));
  let n = 0;
  for (const e of readCorpus().filter((x) => !x.setup)) {
    const { sim, clock } = await start();
    const submit = async (x: CorpusEntry) => {
      const res = await fetch(`${sim.url}/druid/v2/sql/task`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          query: x.sql,
          context: { sqlQueryId: `b${++n}`, simDurationMs: 1000, ...x.context },
        }),
      });
      const body = (await res.json()) as Json;
      await clock.advance(2000);
      const st =
        res.status === 202
          ? ((await (await fetch(`${sim.url}/druid/indexer/v1/task/${body.taskId}/status`)).json()) as Json)
              .status
          : null;
      const rep =
        res.status === 202
          ? ((await (await fetch(`${sim.url}/druid/indexer/v1/task/${body.taskId}/reports`)).json()) as Json)
          : null;
      return {
        status: res.status,
        body,
        st,
        fault: rep?.multiStageQuery?.payload?.status?.errorReport?.error,
      };
    };
    const done = new Set<string>();
    const prepare = async (x: CorpusEntry): Promise<void> => {
      for (const d of x.after) {
        if (done.has(d)) continue;
        const dep = byId.get(d) as CorpusEntry;
        await prepare(dep);
        await submit(dep);
        done.add(d);
      }
    };
    await prepare(e);
    const r = await submit(e);
    const rowsOf = (ds: string) => {
      const visible = sim.engine.store.visible(ds, sim.engine.now);
      return visible.flatMap((s) =>
        ((s.rows ?? []) as Array<Record<string, unknown>>)
          .filter(
            (row) =>
              !visible.some(
                (o) =>
                  o.version > s.version &&
                  (row.__time as number) >= o.interval.start &&
                  (row.__time as number) < o.interval.end,
              ),
          )
          .map((row) => ({ ...row, __time: new Date(row.__time as number).toISOString() })),
      );
    };
    corpus[e.id] = judge(e, {
      unsupported: r.status === 501,
      refusedMessage: r.status === 400 ? `${r.body.error?.errorCode} ${r.body.error?.errorMessage}` : null,
      fault: r.st?.statusCode === "FAILED" && r.fault ? `${r.fault.errorCode} ${r.fault.errorMessage}` : null,
      ran: r.st?.statusCode === "SUCCESS",
      rows: rowsOf,
    });
    await sim.close();
  }
  const broker: Record<string, number> = { answered: 0, refused: 0, unsupported: 0, failed: 0 };
  const { sim } = await start();
  for (const q of brokerQueries()) {
    const res = await fetch(`${sim.url}/druid/v2/sql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: q }),
    });
    const key =
      res.status === 200
        ? "answered"
        : res.status === 501
          ? "unsupported"
          : res.status < 500
            ? "refused"
            : "failed";
    broker[key] = (broker[key] ?? 0) + 1;
  }
  await sim.close();
  return {
    engine: "emulator",
    installed: true,
    startMs,
    idleRssMb,
    afterRssMb: process.memoryUsage().rss / MB,
    corpus,
    broker,
    notes: [],
  };
}

interface Outcome {
  unsupported: boolean;
  /** `code message` of a planning refusal. */
  refusedMessage: string | null;
  /** `code message` of an MSQ fault. */
  fault: string | null;
  ran: boolean;
  rows: (dataSource: string) => Array<Record<string, unknown>>;
}

/** What the engine did with an entry, against what Druid does (the entry's header). */
function judge(e: CorpusEntry, o: Outcome): Verdict {
  if (o.unsupported) return "unsupported";
  const matches = (got: string | null, spec: string | undefined) => {
    if (!got || !spec) return false;
    const [code = "", ...rest] = spec.split(" ");
    const message = rest.join(" ");
    if (!got.startsWith(`${code} `)) return false;
    const text = got.slice(code.length + 1);
    if (message === "*") return true;
    if (message.startsWith("/")) return new RegExp(message.slice(1, message.lastIndexOf("/"))).test(text);
    const pos = /\{\{POSITION "([^"]+)"\}\}/.exec(message);
    if (pos) {
      const at = e.sql.indexOf(`"${pos[1]}"`);
      const before = e.sql.slice(0, at);
      return (
        text ===
        message.replace(
          pos[0],
          `(line [${before.split("\n").length}], column [${at - before.lastIndexOf("\n")}])`,
        )
      );
    }
    return text === message;
  };
  if (e.error) return matches(o.refusedMessage, e.error) ? "refused-correctly" : "wrong";
  if (e.fault) return matches(o.fault, e.fault) ? "refused-correctly" : "wrong";
  if (e.gap) return o.ran ? "runs" : "unsupported";
  if (!o.ran) return "wrong";
  const rowsOk = !e.rows || o.rows(e.rows.dataSource).length === e.rows.count;
  const samplesOk = e.expect.every((x) => o.rows(x.dataSource).some((r) => sameRow(x.row, r)));
  return rowsOk && samplesOk ? "runs" : "wrong";
}

// ------------------------------------------------------------------------------------------- DuckDB

const NATIVE_TO_DUCK: Record<string, string> = {
  string: "VARCHAR",
  long: "BIGINT",
  double: "DOUBLE",
  float: "FLOAT",
};
const JODA_TO_STRFTIME: Array<[RegExp, string]> = [
  [/yyyy/g, "%Y"],
  [/MM/g, "%m"],
  [/M/g, "%-m"],
  [/dd/g, "%d"],
  [/d/g, "%-d"],
  [/HH/g, "%H"],
  [/H/g, "%-H"],
  [/mm/g, "%M"],
  [/ss/g, "%S"],
];
const UNIT: Record<string, string> = {
  PT1S: "1 second",
  PT1M: "1 minute",
  PT1H: "1 hour",
  P1D: "1 day",
  P1M: "1 month",
  P1Y: "1 year",
};

/**
 * Druid SQL → DuckDB SQL, the prototype's translation: EXTERN becomes `read_json`/`read_csv` over a file,
 * Druid's time functions become DuckDB's (`TIME_PARSE` → `TRY_CAST … AS TIMESTAMP` or `try_strptime`,
 * `FLOOR(… TO unit)` → `date_trunc`, `TIME_FLOOR` → `time_bucket`, `TIME_IN_INTERVAL` → a range), `TEXTCAT`
 * → `concat`. The statement's INSERT/REPLACE around the SELECT becomes table operations.
 */
function toDuck(
  sql: string,
  scratch: string,
): { verb: string; table: string; overwrite: string | null; select: string } {
  const head =
    /^\s*(INSERT|REPLACE)\s+INTO\s+("[^"]+"|[\w.]+)\s*(?:OVERWRITE\s+(ALL|WHERE\s+([\s\S]*?))\s+)?(?=WITH\b|SELECT\b)/i.exec(
      sql,
    );
  if (!head) throw new Error("Unsupported: statement shape");
  let select = sql.slice(head[0].length).replace(/\s+PARTITIONED\s+BY[\s\S]*$/i, "");
  let k = 0;
  select = select.replace(
    /TABLE\(\s*EXTERN\(\s*'((?:[^']|'')*)'\s*,\s*'((?:[^']|'')*)'\s*(?:,\s*'((?:[^']|'')*)'\s*)?\)\s*\)(\s*EXTEND\s*\(([^)]*)\))?/gi,
    (_m, src: string, fmt: string, sig: string | undefined, _e, extend: string | undefined) => {
      const source = JSON.parse(src.replace(/''/g, "'"));
      const format = JSON.parse(fmt.replace(/''/g, "'"));
      let file: string;
      if (source.type === "inline") {
        file = join(scratch, `inline-${k++}.json`);
        writeFileSync(file, source.data);
      } else if (source.type === "local") file = join(source.baseDir, source.filter ?? "*");
      else throw new Error(`Unsupported: ${source.type} input`);
      const cols = sig
        ? (JSON.parse(sig.replace(/''/g, "'")) as Array<{ name: string; type: string }>).map(
            (c) => `'${c.name}': '${NATIVE_TO_DUCK[c.type] ?? "VARCHAR"}'`,
          )
        : (extend ?? "").split(",").map((c) => {
            const [name, type] = c.trim().split(/\s+/);
            return `'${(name as string).replace(/"/g, "")}': '${type}'`;
          });
      return format.type === "json"
        ? `read_json('${file}', format='newline_delimited', columns={${cols.join(", ")}})`
        : `read_csv('${file}', columns={${cols.join(", ")}})`;
    },
  );
  select = select
    .replace(/FLOOR\s*\(([^()]*(?:\([^()]*\))?[^()]*)\s+TO\s+(\w+)\s*\)/gi, "date_trunc('$2', $1)")
    .replace(/TIME_PARSE\s*\(([^,()]+),\s*'([^']*)'\s*\)/gi, (_m, x, p) => {
      let f = p;
      for (const [re, to] of JODA_TO_STRFTIME) f = f.replace(re, to);
      return `try_strptime(${x}, '${f}')`;
    })
    .replace(/TIME_PARSE\s*\(([^()]+)\)/gi, "TRY_CAST($1 AS TIMESTAMP)")
    .replace(
      /TIME_FLOOR\s*\(([^,]+),\s*'(\w+)'\s*\)/gi,
      (_m, x, p) => `time_bucket(INTERVAL '${UNIT[p] ?? p}', ${x})`,
    )
    .replace(/TIME_IN_INTERVAL\s*\(([^,]+),\s*'([^/']+)\/([^']+)'\s*\)/gi, (_m, x, a, b) => {
      const start = Date.parse(a);
      const end = b.startsWith("P") ? start + (b === "PT1S" ? 1000 : 0) : Date.parse(b);
      return `(${x} >= epoch_ms(${start}) AND ${x} < epoch_ms(${end}))`;
    })
    .replace(/MILLIS_TO_TIMESTAMP\s*\(/gi, "epoch_ms(")
    .replace(/TEXTCAT\s*\(/gi, "concat(");
  return {
    verb: (head[1] as string).toUpperCase(),
    table: (head[2] as string).replace(/"/g, "").replace(/^druid\./, ""),
    overwrite: head[4] ?? null,
    select,
  };
}

async function duckChild(): Promise<ChildReport> {
  const path = process.env.SEGOPS_DUCKDB;
  const base: ChildReport = {
    engine: "duckdb",
    installed: false,
    startMs: Number.NaN,
    idleRssMb: Number.NaN,
    afterRssMb: Number.NaN,
    corpus: {},
    broker: {},
    notes: [],
  };
  if (!path) return { ...base, notes: ["not installed (set SEGOPS_DUCKDB)"] };
  const t0 = performance.now();
  // biome-ignore lint/suspicious/noExplicitAny: an out-of-tree module without types here
  let duck: any;
  try {
    duck = await import(path.endsWith(".js") ? path : join(path, "lib/index.js"));
  } catch (error) {
    return { ...base, notes: [`not installed: ${(error as Error).message.slice(0, 100)}`] };
  }
  const first = await duck.DuckDBInstance.create(":memory:");
  await (await first.connect()).run("SELECT 1");
  const startMs = performance.now() - t0;
  const idleRssMb = process.memoryUsage().rss / MB;
  const scratch = mkdtempSync(join(tmpdir(), "segops-duck-"));
  const byId = new Map(readCorpus().map((e) => [e.id, e]));
  const corpus: Record<string, Verdict> = {};
  for (const e of readCorpus().filter((x) => !x.setup)) {
    const db = await (await duck.DuckDBInstance.create(":memory:")).connect();
    const exec = async (x: CorpusEntry) => {
      const t = toDuck(x.sql, scratch);
      const exists =
        (
          await db.runAndReadAll(
            `SELECT count(*) AS n FROM information_schema.tables WHERE table_name = '${t.table}'`,
          )
        ).getRowObjectsJS()[0].n > 0;
      const q = `(${t.select})`;
      if (!exists || (t.verb === "REPLACE" && t.overwrite === "ALL"))
        await db.run(`CREATE OR REPLACE TABLE "${t.table}" AS ${q}`);
      else if (t.verb === "REPLACE")
        await db.run(
          `CREATE OR REPLACE TABLE "${t.table}" AS SELECT * FROM "${t.table}" WHERE NOT (${t.overwrite}) UNION ALL BY NAME ${q}`,
        );
      else
        await db.run(
          `CREATE OR REPLACE TABLE "${t.table}" AS SELECT * FROM "${t.table}" UNION ALL BY NAME ${q}`,
        );
    };
    const done = new Set<string>();
    const prepare = async (x: CorpusEntry): Promise<void> => {
      for (const d of x.after) {
        if (done.has(d)) continue;
        const dep = byId.get(d) as CorpusEntry;
        await prepare(dep);
        try {
          await exec(dep);
        } catch {
          // The entry's own run shows what is missing.
        }
        done.add(d);
      }
    };
    let ran = false;
    let refusedMessage: string | null = null;
    let unsupported = false;
    const tables = new Map<string, Array<Record<string, unknown>>>();
    try {
      await prepare(e);
      await exec(e);
      ran = true;
      for (const ds of [e.rows?.dataSource, ...e.expect.map((x) => x.dataSource)].filter(
        Boolean,
      ) as string[]) {
        const rows = (await db.runAndReadAll(`SELECT * FROM "${ds}"`)).getRowObjectsJS() as Array<
          Record<string, unknown>
        >;
        tables.set(
          ds,
          rows.map((r) => ({ ...r, __time: r.__time instanceof Date ? r.__time.toISOString() : r.__time })),
        );
      }
    } catch (error) {
      const msg = (error as Error).message;
      // A Druid function or syntax DuckDB does not know is beyond the translation; any other error is DuckDB's own.
      if (/^Unsupported|Catalog Error: (Scalar|Table) Function|Parser Error|Not implemented/i.test(msg))
        unsupported = true;
      refusedMessage = `duckdb ${msg.split("\n")[0]}`;
    }
    corpus[e.id] = judge(e, {
      unsupported,
      refusedMessage,
      fault: null,
      ran,
      rows: (ds) => tables.get(ds) ?? [],
    });
  }
  const broker: Record<string, number> = { parses: 0, "parse error": 0 };
  const db = await first.connect();
  for (const q of brokerQueries()) {
    try {
      const parsed = (
        await db.runAndReadAll(`SELECT json_serialize_sql('${q.replace(/'/g, "''")}') AS j`)
      ).getRowObjectsJS()[0].j as string;
      const key = JSON.parse(parsed).error ? "parse error" : "parses";
      broker[key] = (broker[key] ?? 0) + 1;
    } catch {
      broker["parse error"] = (broker["parse error"] ?? 0) + 1;
    }
  }
  return {
    ...base,
    installed: true,
    startMs,
    idleRssMb,
    afterRssMb: process.memoryUsage().rss / MB,
    corpus,
    broker,
    notes: ["Broker queries: DuckDB's parser only (json_serialize_sql), no tables behind them"],
  };
}

// ------------------------------------------------------------------------------------------- parent

function child(engine: string): Promise<ChildReport> {
  return new Promise((resolve, reject) => {
    const p = spawn(
      process.execPath,
      ["--import", "tsx", fileURLToPath(import.meta.url), "--child", engine],
      {
        cwd: root,
        stdio: ["ignore", "pipe", "inherit"],
        env: process.env,
      },
    );
    let out = "";
    p.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    p.on("close", (code) => {
      const line = out.trim().split("\n").at(-1) ?? "";
      try {
        resolve(JSON.parse(line) as ChildReport);
      } catch {
        reject(new Error(`${engine} child exited ${code}: ${out.slice(-500)}`));
      }
    });
  });
}

async function main(): Promise<void> {
  const at = process.argv.indexOf("--child");
  if (at >= 0) {
    const engine = process.argv[at + 1];
    const report = engine === "emulator" ? await emulatorChild() : await duckChild();
    process.stdout.write(`${JSON.stringify(report)}\n`);
    process.exit(0);
  }
  const reports = [await child("emulator"), await child("duckdb")];
  const verdicts: Verdict[] = ["runs", "refused-correctly", "wrong", "unsupported"];
  const count = (r: ChildReport, v: Verdict) => Object.values(r.corpus).filter((x) => x === v).length;
  const cell = (r: ChildReport, text: string) => (r.installed ? text : "not installed");
  console.log(
    markdownTable(
      [
        "engine",
        ...verdicts.map((v) => `corpus: ${v}`),
        "Broker queries",
        "start-up",
        "RSS idle",
        "RSS after",
      ],
      reports.map((r) => [
        r.engine,
        ...verdicts.map((v) => cell(r, String(count(r, v)))),
        cell(
          r,
          Object.entries(r.broker)
            .map(([k, v]) => `${v} ${k}`)
            .join(", "),
        ),
        cell(r, `${num(r.startMs, 0)} ms`),
        cell(r, `${num(r.idleRssMb, 1)} MB`),
        cell(r, `${num(r.afterRssMb, 1)} MB`),
      ]),
    ),
  );
  const ids = Object.keys(reports[0]?.corpus ?? {});
  console.log(`\nPer query (${ids.length}):\n`);
  console.log(
    markdownTable(
      ["query", ...reports.map((r) => r.engine)],
      ids.map((id) => [id, ...reports.map((r) => r.corpus[id] ?? "-")]),
    ),
  );
  for (const r of reports) for (const n of r.notes) console.log(`\n${r.engine}: ${n}`);
}

await main();
