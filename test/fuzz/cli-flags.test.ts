import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { type SimHandle, startSim } from "../../src/sim/server.js";
import { type CliOutcome, segopsInProcess } from "../helpers/cli-in-process.js";
import { ingestArgs } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";

/**
 * Bad input on the command line loses nothing (flags and config files): 10,000
 * generated cases per surface through the CLI's own `main(argv)`, in this process (its output captured) —
 * `validate`, `run` and `backfill` with flags negative, NaN, huge, empty or malformed (URLs, ledger URLs,
 * intervals, variables), and `segops serve` with generated config files and `SEGOPS_*` variables. Each bad
 * case must end with exit code 2 and a message naming a flag, setting or variable it was given wrong; no
 * exception escapes `main`; the emulator receives no submission; the ledger file's bytes do not change.
 */

/** Cases per surface; `FUZZ_RUNS=500 npx vitest run test/fuzz/cli-flags.test.ts` for a quick look. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 10_000);
/**
 * The same cases every run, so its work (and a failure) is the same on any machine; `FUZZ_SEED=…` explores
 * others, and a failure prints the seed and path that replay it.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 1);

let sim: SimHandle;
let work = "";
let template = "";
let dataDir = "";
let ledgerPath = "";

const segops = (args: string[]): Promise<CliOutcome> => segopsInProcess(args);

/** The ledger's bytes (the file, and its WAL when there is one). */
function ledgerBytes(): string {
  const h = createHash("sha256");
  for (const f of [ledgerPath, `${ledgerPath}-wal`]) if (existsSync(f)) h.update(readFileSync(f));
  return h.digest("hex");
}

const submissions = () => sim.stats().submissions.length;

beforeAll(async () => {
  sim = await startSim({ timeScale: 1000, handoffDelayMs: 100, seed: 17 });
  work = mkdtempSync(join(tmpdir(), "segops-fuzz-cli-"));
  dataDir = writeDailyDataset({ from: "2026-01-01", days: 3, rowsPerDay: 2, dir: join(work, "data") });
  template = join(work, "daily.json");
  writeFileSync(template, JSON.stringify(dailyTemplate({ datasource: "fuzz_cli" })));
  ledgerPath = join(work, "ledger.db");
  // The ledger holds a finished job, so that "unchanged" is about a real file.
  const first = await segops([
    ...ingestArgs({
      template,
      dataDir,
      druid: sim.url,
      ledgerPath,
      range: { interval: "2026-01-01/2026-01-02" },
    }),
    "--tick",
    "20",
    "--json",
  ]);
  expect(first.code, first.err).toBe(0);
});
afterAll(async () => {
  await sim?.close();
});

// ---- generators of values that are wrong for their flag, whatever else is given ----

const noDigit = fc.string({ maxLength: 12 }).filter((s) => !/[0-9]/.test(s));
/** Wrong for a whole-number flag from 1 up (and at most 2^31 − 1 for durations in ms). */
const badPositiveInt = fc.oneof(
  fc.constantFrom(
    "0",
    "00",
    "-1",
    "-0",
    "NaN",
    "Infinity",
    "",
    " ",
    "1.5",
    "1e3",
    "0x10",
    "+3",
    " 3",
    "3 ",
    "1_000",
  ),
  fc.integer({ min: -1_000_000, max: 0 }).map(String),
  fc.constantFrom("2147483648", "9007199254740993", "99999999999999999999", `1${"0".repeat(400)}`),
  noDigit,
);
/** Wrong for a duration in seconds (above 0, at most 2,147,483). */
const badSeconds = fc.oneof(
  fc.constantFrom(
    "0",
    "0.0",
    "-1",
    "-0.5",
    "NaN",
    "Infinity",
    "",
    ".5",
    "5.",
    "1e3",
    "0x10",
    "+3",
    "3s",
    "PT30S",
  ),
  fc.double({ min: -1e12, max: 0, noNaN: true }).map(String),
  fc.constantFrom("2147484", "99999999999", "1e400", `9${"9".repeat(320)}`),
  noDigit,
);
/** Wrong for `--min-rows` (a whole number from 0 up). */
const badCount = fc.oneof(
  fc.constantFrom("-1", "NaN", "", "1.5", "1e3", "0x1", "99999999999999999999"),
  fc.integer({ min: -1_000_000, max: -1 }).map(String),
  noDigit,
);
/** Wrong for `--max-unparseable` (a count up to Druid's int, or a percentage from 0 to 100). */
const badUnparseable = fc.oneof(
  fc.constantFrom(
    "-1",
    "NaN",
    "",
    "1e3",
    "101%",
    "100.5%",
    "-1%",
    "%",
    "5 %",
    "2147483648",
    "99999999999999999999",
  ),
  fc.integer({ min: -1_000_000, max: -1 }).map(String),
  fc.integer({ min: 101, max: 1_000_000 }).map((n) => `${n}%`),
  noDigit,
);
/** Not an http(s) URL without credentials. */
const badUrl = fc.oneof(
  fc.constantFrom(
    "",
    "localhost:8888",
    "ftp://druid:8888",
    "file:///etc/passwd",
    "http://",
    "http://[::1",
    "http://a:99999",
    "http://a b",
    "http://user:pw@druid:8888",
    "https://user@druid",
    "javascript:alert(1)",
    "//druid:8888",
  ),
  fc.string({ maxLength: 20 }).filter((s) => !/^\s*https?:/i.test(s)),
  fc.webUrl().map((u) => u.replace(/^https?:/, "gopher:")),
);
/** Not a ledger URL segops can open: no such scheme, no path, no host, a bad port or schema name. */
const badLedger = fc.oneof(
  fc.constantFrom(
    "",
    "sqlite:",
    "sqlite://",
    "mysql://root@localhost/db",
    "postgres://",
    "postgresql://h:0/db",
    "postgres://h:99999/db",
    "postgres://h:-1/db",
    "postgres://a@b@h/db",
    "postgres://h/db?schema=Bad-Name",
    "postgres://h/db?schema=1abc",
    ":memory:",
    "ledger.db",
  ),
  fc.string({ maxLength: 20 }).filter((s) => !/^(sqlite:|postgres)/i.test(s)),
);
/** Not NAME=value with NAME an identifier. */
const badVar = fc.oneof(
  fc.constantFrom("", "=", "=x", "novalue", "1a=b", "a-b=c", " a=b", "a b=c", "é=1"),
  fc.string({ maxLength: 10 }).filter((s) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(s)),
);
const badPrefix = fc.oneof(
  fc.constantFrom("", "a b", "a/b", "a:b", "ä", "x\ny"),
  fc.string({ minLength: 1, maxLength: 10 }).filter((s) => /[^A-Za-z0-9_.-]/.test(s)),
);
/** Not an interval: no digit at all, reversed, empty, out of range, not on the template's day boundaries. */
const badInterval = fc.oneof(
  noDigit,
  fc.constantFrom(
    "",
    "/",
    "2026-01-02/2026-01-01",
    "2026-01-01/2026-01-01",
    "2026-01-01/PT0S",
    "2026-01-01/P-1D",
    "2026-13-01/P1D",
    "2026-02-30/P1D",
    "2026-01-01T25:00/P1D",
    "2026-01-01",
    "P1D/P1D",
    "2026-01-01/2026-01-02/2026-01-03",
    "9999-12-31/P1D",
    "-000001-12-31/P1D",
    "+010000-01-01/P1D",
    "2026-01-01T01:00:00Z/2026-01-02T01:00:00Z",
  ),
);
const badInstant = fc.oneof(
  noDigit,
  fc.constantFrom(
    "",
    "2026-13-01",
    "2026-02-30",
    "2026-01-01T25:00",
    "P1D",
    "2026-01-01/2026-01-02",
    "0000-00-00",
  ),
);
const badGranularity = fc.oneof(
  fc.constantFrom("", "P0D", "PT-1H", "P1X", "fortnight", "days", "P1D garbage", "PT0S", "-P1D"),
  fc.string({ maxLength: 10 }).filter((s) => !/^[A-Za-z_]+$/.test(s) && !/[0-9]/.test(s)),
);

type Mutation = [flag: string, value: string];

/** One to three flags given wrong values; the rest of the command line is a run that would succeed. */
function mutations(extra: Array<fc.Arbitrary<Mutation | Mutation[]>>): fc.Arbitrary<Mutation[]> {
  const one: fc.Arbitrary<Mutation | Mutation[]> = fc.oneof(
    ...extra,
    ...["--max-concurrency", "--poison-after", "--tick", "--lease", "--retry-base"].map((f) =>
      badPositiveInt.map((v): Mutation => [f, v]),
    ),
    ...["--handoff-timeout", "--druid-outage-timeout", "--deadline", "--retry-budget"].map((f) =>
      badSeconds.map((v): Mutation => [f, v]),
    ),
    badCount.map((v): Mutation => ["--min-rows", v]),
    badUnparseable.map((v): Mutation => ["--max-unparseable", v]),
    ...["--druid", "--overlord", "--coordinator", "--broker"].map((f) => badUrl.map((v): Mutation => [f, v])),
    badLedger.map((v): Mutation => ["--ledger", v]),
    badVar.map((v): Mutation => ["--var", v]),
    badPrefix.map((v): Mutation => ["--prefix", v]),
    fc.constant<Mutation>(["--spec-version", ""]),
  );
  return fc
    .array(one, { minLength: 1, maxLength: 3 })
    .map((ms) => ms.flatMap((m) => (Array.isArray(m[0]) ? (m as Mutation[]) : [m as Mutation])));
}

function expectRefused(r: CliOutcome, given: Mutation[], before: { subs: number; ledger: string }): void {
  const text = `${r.err}\n${r.out}`;
  const what = JSON.stringify(given);
  expect(r.code, `${what}\n${text.slice(0, 1500)}`).toBe(2);
  expect(
    given.some(([flag]) => text.includes(flag)),
    `${what}: the message names none of the flags given wrong:\n${text.slice(0, 1500)}`,
  ).toBe(true);
  expect(submissions(), what).toBe(before.subs);
  expect(ledgerBytes(), what).toBe(before.ledger);
}

/** The good command line with the mutations applied: a wrong flag replaces the good one, or is added. */
function commandLine(base: string[], given: Mutation[]): string[] {
  const args = [...base];
  for (const [flag, value] of given) {
    // A value that starts with "-" is given as --flag=value: after a space it would be read as an option
    // (`--ledger -V` prints the version), as in every getopt-style CLI.
    const words = value.startsWith("-") ? [`${flag}=${value}`] : [flag, value];
    const at = args.indexOf(flag);
    if (at >= 0 && flag !== "--var") args.splice(at, 2, ...words);
    else args.push(...words);
  }
  return args;
}

describe("bad input on the command line: generated cases per surface", () => {
  it("segops run: every wrong flag is exit 2 naming it, nothing submitted, the ledger's bytes unchanged", async () => {
    const base = [
      ...ingestArgs({
        template,
        dataDir,
        druid: sim.url,
        ledgerPath,
        range: { interval: "2026-01-02/2026-01-03" },
      }),
      "--json",
    ];
    await fc.assert(
      fc.asyncProperty(mutations([badInterval.map((v): Mutation => ["--interval", v])]), async (given) => {
        const before = { subs: submissions(), ledger: ledgerBytes() };
        expectRefused(await segops(commandLine(base, given)), given, before);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  }, 600_000);

  it("segops backfill: every wrong flag (and range) is exit 2 naming it, nothing submitted, the ledger's bytes unchanged", async () => {
    const base = [
      ...ingestArgs({
        template,
        dataDir,
        druid: sim.url,
        ledgerPath,
        range: { from: "2026-01-02", to: "2026-01-04" },
      }),
      "--json",
    ];
    const range = fc.oneof(
      badInstant.map((v): Mutation => ["--from", v]),
      badInstant.map((v): Mutation => ["--to", v]),
      badGranularity.map((v): Mutation => ["--granularity", v]),
      // Reversed, empty, and far more than 100,000 partitions.
      fc.constantFrom<Mutation>(["--to", "2026-01-01"], ["--to", "2026-01-02"], ["--to", "9999-12-31"]),
      // Past the years a task id can name.
      fc.constantFrom<Mutation[]>(
        [
          ["--from", "9999-12-31"],
          ["--to", "10000-01-01"],
        ],
        [
          ["--from", "-000001-01-01"],
          ["--to", "0000-01-02"],
        ],
      ),
    );
    await fc.assert(
      fc.asyncProperty(mutations([range]), async (given) => {
        const before = { subs: submissions(), ledger: ledgerBytes() };
        expectRefused(await segops(commandLine(base, given)), given, before);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  }, 600_000);
});

// ---- segops serve: its config file and SEGOPS_* variables ----

/** `segops serve …` in this process; a case that starts the service (none should) is stopped and reported. */
async function serve(
  args: string[],
  env: Record<string, string>,
): Promise<CliOutcome & { listened: boolean }> {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  const before = new Set([...process.listeners("SIGTERM")]);
  let listened = false;
  let stopped = false;
  const guard = setInterval(() => {
    // Started after all: stop it through the SIGTERM handler it registered (and only that one).
    const mine = process.listeners("SIGTERM").filter((l) => !before.has(l));
    if (mine.length > 0 && !stopped) {
      listened = true;
      stopped = true;
      for (const l of mine) (l as () => void)();
    }
  }, 10);
  try {
    const r = await segops(["serve", ...args]);
    return { ...r, listened };
  } finally {
    clearInterval(guard);
    process.env = saved;
  }
}

const badPortText = fc.oneof(
  fc.constantFrom("-1", "65536", "99999", "", "x", "1.5", "0x50", " 80", "8080,8081"),
  fc.integer({ min: 65_536, max: 10_000_000 }).map(String),
  noDigit,
);

const nonScalar = fc.oneof(
  fc.constant([] as unknown[]),
  fc.constant({} as Record<string, unknown>),
  fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { minKeys: 1, maxKeys: 2 }),
);
const notString = fc.oneof(nonScalar, fc.integer(), fc.boolean(), fc.constant(null));
const asNumberToo = (a: fc.Arbitrary<string>) =>
  fc.oneof(
    a,
    a.filter((s) => /^-?[0-9]+(\.[0-9]+)?$/.test(s) && Number.isFinite(Number(s))).map(Number),
    nonScalar,
    fc.boolean(),
    fc.constant(null),
  );

/** Settings of `segops serve` and values that are wrong for them (whatever the rest of the file says). */
function badSettings(files: { missing: string; shortToken: string; notPem: string }) {
  const intSettings = [
    "concurrency",
    "poison-after",
    "max-body",
    "max-partitions-per-request",
    "tick",
    "lease",
    "retry-base",
  ];
  const secondSettings = [
    "handoff-timeout",
    "druid-outage-timeout",
    "drain-timeout",
    "stall-timeout",
    "retry-budget",
  ];
  const port = fc.oneof(
    fc.constantFrom("-1", "65536", "99999", "", "x", "1.5", "0x50", " 80", "8080,8081"),
    fc.integer({ min: 65_536, max: 10_000_000 }),
    fc.integer({ min: -100_000, max: -1 }),
    nonScalar,
    fc.boolean(),
    fc.constant(null),
  );
  return fc.oneof(
    port.map((v) => ["port", v] as const),
    ...intSettings.map((k) => asNumberToo(badPositiveInt).map((v) => [k, v] as const)),
    ...secondSettings.map((k) => asNumberToo(badSeconds).map((v) => [k, v] as const)),
    fc
      .oneof(fc.constantFrom("loud", "", "INFO", "verbose", "warning"), notString)
      .map((v) => ["log-level", v] as const),
    fc
      .oneof(fc.constantFrom("0.0.0.0", "10.1.2.3", "::", "192.168.0.1", "example.com"), notString)
      .map((v) => ["host", v] as const),
    ...["druid", "overlord", "coordinator", "broker"].map((k) =>
      fc.oneof(badUrl, notString).map((v) => [k, v] as const),
    ),
    fc.oneof(badLedger, notString).map((v) => ["ledger", v] as const),
    fc
      .oneof(fc.constantFrom(files.missing, files.shortToken, ""), notString)
      .map((v) => ["api-token-file", v] as const),
    fc.oneof(fc.constant(files.missing), notString).map((v) => ["token-file", v] as const),
    fc.oneof(fc.constantFrom(files.missing, files.notPem), notString).map((v) => ["ca-file", v] as const),
    fc
      .oneof(fc.constantFrom("yes", "no", "false", "true", "0", "1", "off", ""), fc.integer(), nonScalar)
      .map((v) => ["insecure", v] as const),
    // A user needs a password (none is set) — and is a name, not a list.
    fc.oneof(fc.constantFrom("reader"), nonScalar).map((v) => ["user", v] as const),
    fc
      .anything({ maxDepth: 1 })
      .filter((v) => v !== undefined)
      .map((v) => ["config", v] as const),
    fc
      .string({ minLength: 1, maxLength: 12 })
      .filter((k) => !KNOWN.has(k) && !KNOWN.has(k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)))
      .map((k) => [k, 1] as const),
  );
}

const KNOWN = new Set([
  "host",
  "port",
  "api-token-file",
  "concurrency",
  "log-level",
  "config",
  "poison-after",
  "handoff-timeout",
  "druid-outage-timeout",
  "drain-timeout",
  "stall-timeout",
  "max-body",
  "max-partitions-per-request",
  "tick",
  "lease",
  "druid",
  "overlord",
  "coordinator",
  "broker",
  "user",
  "password-file",
  "token-file",
  "ca-file",
  "insecure",
  "retry-budget",
  "retry-base",
  "ledger",
]);

const camel = (k: string) => k.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** The words that name a setting in a message: its key as written, its flag, its variable. */
function names(key: string): string[] {
  const kebab = key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  return [`"${key}"`, `${key}:`, `--${kebab}`, `SEGOPS_${kebab.toUpperCase().replace(/-/g, "_")}`];
}

describe("bad input to segops serve: generated cases", () => {
  it("config files (JSON and YAML): every wrong setting is exit 2 naming it, nothing served, submitted or written", async () => {
    const dir = mkdtempSync(join(tmpdir(), "segops-fuzz-serve-"));
    const files = {
      missing: join(dir, "no-such-file"),
      shortToken: join(dir, "short-token"),
      notPem: join(dir, "not.pem"),
    };
    writeFileSync(files.shortToken, "too-short\n");
    writeFileSync(files.notPem, "not a certificate\n");
    const base: Record<string, unknown> = {
      druid: sim.url,
      ledger: `sqlite:${ledgerPath}`,
      port: 0,
      "log-level": "silent",
    };
    const config = fc.record({
      wrong: fc.array(badSettings(files), { minLength: 1, maxLength: 3 }),
      camelCase: fc.boolean(),
      yaml: fc.boolean(),
    });
    // Whole files that are no mapping of settings: syntax errors, lists, scalars, nothing, repeated keys.
    const document = fc.oneof(
      fc.constantFrom(
        "",
        "null\n",
        "- port: 1\n",
        "42\n",
        "port: 1\nport: 2\n",
        '{"port": 1, "port": 2}',
        "port: [1\n",
        "{",
        "port: *alias\n",
        "\t- x",
        "%YAML 1.2\n---\n- 1\n",
      ),
      fc.string({ maxLength: 30 }).filter((t) => {
        try {
          const v = YAML.parse(t, { schema: "core", uniqueKeys: true });
          return v === null || typeof v !== "object" || Array.isArray(v);
        } catch {
          return true;
        }
      }),
      fc.nat({ max: 200 }).map((d) => `${"[".repeat(d + 1)}${"]".repeat(d + 1)}`),
    );
    let n = 0;
    await fc.assert(
      fc.asyncProperty(document, async (text) => {
        const file = join(dir, `d${++n}.yaml`);
        writeFileSync(file, text);
        const before = { subs: submissions(), ledger: ledgerBytes() };
        const r = await serve(["--config", file, "--ledger", `sqlite:${ledgerPath}`, "--druid", sim.url], {});
        const what = `${JSON.stringify(text)}\n${r.err.slice(0, 1500)}`;
        expect(r.listened, what).toBe(false);
        expect(r.code, what).toBe(2);
        expect(r.err, what).toContain(`--config ${file}`);
        expect(submissions()).toBe(before.subs);
        expect(ledgerBytes(), what).toBe(before.ledger);
      }),
      { numRuns: RUNS / 5, seed: SEED },
    );
    await fc.assert(
      fc.asyncProperty(config, async ({ wrong, camelCase, yaml }) => {
        const settings: Record<string, unknown> = { ...base };
        for (const [k, v] of wrong) {
          delete settings[k];
          // An own property even for `__proto__` (an assignment would set the prototype, and the file
          // would be written without the wrong key: a valid config the property then saw accepted).
          Object.defineProperty(settings, camelCase ? camel(k) : k, {
            value: v,
            enumerable: true,
            writable: true,
            configurable: true,
          });
        }
        const file = join(dir, `c${++n}.${yaml ? "yaml" : "json"}`);
        writeFileSync(file, yaml ? YAML.stringify(settings) : JSON.stringify(settings));
        const before = { subs: submissions(), ledger: ledgerBytes() };
        const r = await serve(["--config", file], {});
        const text = `${r.err}\n${r.out}`;
        const what = `${JSON.stringify(settings)}\n${text.slice(0, 1500)}`;
        expect(r.listened, what).toBe(false);
        expect(r.code, what).toBe(2);
        const keys = wrong.map(([k]) => (camelCase ? camel(k) : k));
        expect(
          keys.some((k) => names(k).some((w) => text.includes(w))),
          `names none of ${keys.join(", ")}: ${what}`,
        ).toBe(true);
        expect(submissions()).toBe(before.subs);
        expect(ledgerBytes(), what).toBe(before.ledger);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  }, 600_000);
});

describe("bad input to segops serve and validate: generated cases", () => {
  it("SEGOPS_* variables: every wrong one is exit 2 naming it (or its flag), nothing served, submitted or written", async () => {
    const dir = mkdtempSync(join(tmpdir(), "segops-fuzz-env-"));
    const variable = fc.oneof(
      badPortText.map((v) => ["SEGOPS_PORT", v] as const),
      badPositiveInt.map((v) => ["SEGOPS_CONCURRENCY", v] as const),
      fc.constantFrom("loud", "", "INFO", "verbose").map((v) => ["SEGOPS_LOG_LEVEL", v] as const),
      fc.constantFrom("0.0.0.0", "10.1.2.3", "::", "example.com").map((v) => ["SEGOPS_HOST", v] as const),
      badUrl.map((v) => ["SEGOPS_DRUID_URL", v] as const),
      badLedger.map((v) => ["SEGOPS_LEDGER", v] as const),
      fc
        .string({ maxLength: 15 })
        .filter((t) => t.trim().length < 16)
        .map((v) => ["SEGOPS_API_TOKEN", v] as const),
      fc.constantFrom(join(dir, "missing"), "").map((v) => ["SEGOPS_API_TOKEN_FILE", v] as const),
      fc.constantFrom(join(dir, "missing.yaml"), "").map((v) => ["SEGOPS_CONFIG", v] as const),
    );
    const base = {
      SEGOPS_DRUID_URL: sim.url,
      SEGOPS_LEDGER: `sqlite:${ledgerPath}`,
      SEGOPS_PORT: "0",
      SEGOPS_LOG_LEVEL: "silent",
    };
    await fc.assert(
      fc.asyncProperty(fc.array(variable, { minLength: 1, maxLength: 3 }), async (wrong) => {
        const env: Record<string, string> = { ...base, ...Object.fromEntries(wrong) };
        // An empty SEGOPS_API_TOKEN is no token (as unset) and, alone, no mistake.
        const given = wrong.filter(
          ([k, v]) => !(k === "SEGOPS_API_TOKEN" && v.trim() === "") || wrong.length > 1,
        );
        fc.pre(given.some(([k, v]) => !(k === "SEGOPS_API_TOKEN" && v.trim() === "")));
        const before = { subs: submissions(), ledger: ledgerBytes() };
        const r = await serve([], env);
        const text = `${r.err}\n${r.out}`;
        const what = `${JSON.stringify(wrong)}\n${text.slice(0, 1500)}`;
        expect(r.listened, what).toBe(false);
        expect(r.code, what).toBe(2);
        const flagOf: Record<string, string> = {
          SEGOPS_PORT: "--port",
          SEGOPS_CONCURRENCY: "--concurrency",
          SEGOPS_LOG_LEVEL: "--log-level",
          SEGOPS_HOST: "--host",
          SEGOPS_DRUID_URL: "--druid",
          SEGOPS_LEDGER: "--ledger",
          SEGOPS_API_TOKEN: "SEGOPS_API_TOKEN",
          SEGOPS_API_TOKEN_FILE: "--api-token-file",
          SEGOPS_CONFIG: "--config",
        };
        expect(
          wrong.some(([k]) => text.includes(k) || text.includes(flagOf[k] as string)),
          `names none of the variables: ${what}`,
        ).toBe(true);
        expect(submissions()).toBe(before.subs);
        expect(ledgerBytes(), what).toBe(before.ledger);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  }, 600_000);

  it("segops validate: exit 0, or exit 2 naming --interval, --var or a JSON path; never anything else", async () => {
    const interval = fc.oneof(
      badInterval,
      fc.constantFrom("2026-01-01/2026-01-02", "2026-01-01/P1D", "2026-01-01T00:00:00Z/P1D"),
      fc
        .tuple(
          fc.integer({ min: 0, max: 9999 }),
          fc.integer({ min: 1, max: 12 }),
          fc.integer({ min: 1, max: 28 }),
        )
        .map(
          ([y, m, d]) =>
            `${String(y).padStart(4, "0")}-${String(m).padStart(2, "0")}-${String(d).padStart(2, "0")}/P1D`,
        ),
      fc.string({ maxLength: 30 }),
    );
    const vars = fc.array(fc.oneof(badVar, fc.constant(`dataDir=${dataDir}`), fc.constant("dataDir=")), {
      maxLength: 3,
    });
    let valid = 0;
    await fc.assert(
      fc.asyncProperty(fc.option(interval, { nil: undefined }), vars, fc.boolean(), async (i, v, json) => {
        const args = ["validate", template];
        if (i !== undefined)
          args.push(i.startsWith("-") ? `--interval=${i}` : "--interval", ...(i.startsWith("-") ? [] : [i]));
        for (const x of v)
          args.push(x.startsWith("-") ? `--var=${x}` : "--var", ...(x.startsWith("-") ? [] : [x]));
        if (json) args.push("--json");
        const before = { subs: submissions(), ledger: ledgerBytes() };
        const r = await segops(args);
        const text = `${r.err}\n${r.out}`;
        const what = `${JSON.stringify(args.slice(2))}\n${text.slice(0, 1500)}`;
        expect([0, 2], what).toContain(r.code);
        if (r.code === 0) valid++;
        else expect(text, what).toMatch(/--interval|--var|^[A-Za-z_$][\w$.[\]"]*: |"path":/m);
        expect(submissions()).toBe(before.subs);
        expect(ledgerBytes()).toBe(before.ledger);
      }),
      { numRuns: RUNS, seed: SEED },
    );
    expect(valid).toBeGreaterThan(0);
  }, 600_000);
});
