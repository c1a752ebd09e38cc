import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type ConvertNote, convertHadoopSpec, globOf } from "../../src/convert/index.js";
import { parseInterval } from "../../src/core/interval.js";
import { startSim } from "../../src/sim/index.js";
import { renderTemplate, validateTemplate } from "../../src/spec/index.js";
import { segopsInProcess } from "../helpers/cli-in-process.js";
import { sqlCount } from "../helpers/sql-count.js";

const FIXTURES = join(import.meta.dirname, "../fixtures/hadoop");
const dir = mkdtempSync(join(tmpdir(), "segops-convert-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// biome-ignore lint/suspicious/noExplicitAny: test convenience for reading arbitrary JSON specs
type Obj = Record<string, any>;
const fixture = (name: string): Obj => JSON.parse(readFileSync(join(FIXTURES, name), "utf8"));
const FILES = readdirSync(FIXTURES).filter((f) => f.endsWith(".json"));

/** One partition of a fixture: the first segment of its own first interval. */
function partitionOf(spec: Obj): string {
  const first = String(spec.spec.dataSchema.granularitySpec.intervals[0]);
  const start = first.split("/")[0] as string;
  const g = String(spec.spec.dataSchema.granularitySpec.segmentGranularity ?? "day").toLowerCase();
  return `${start.slice(0, 10)}/${g === "hour" ? "PT1H" : "P1D"}`;
}

describe("segops convert: the Hadoop specs of Druid's docs and tests", () => {
  it("has the fixtures the README lists", () => {
    const readme = readFileSync(join(FIXTURES, "README.md"), "utf8");
    expect(FILES.length).toBeGreaterThanOrEqual(7);
    for (const f of FILES) expect(readme).toContain(`\`${f}\``);
  });

  for (const name of FILES) {
    it(`${name}: converts; the template validates and renders for one partition`, async () => {
      const out = join(dir, `converted-${name}`);
      const r = await segopsInProcess(["convert", join(FIXTURES, name), "-o", out, "--json"]);
      expect(r.code, r.err).toBe(0);
      const { notes } = JSON.parse(r.out) as { output: string; notes: ConvertNote[] };
      const template = JSON.parse(readFileSync(out, "utf8")) as Obj;
      expect(template.type).toBe("index_parallel");
      expect(template.spec.dataSchema).not.toHaveProperty("parser");
      expect(template.spec.tuningConfig.type).toBe("index_parallel");
      const original = fixture(name);
      // Every field that only steered Hadoop has a note saying it was dropped.
      for (const key of Object.keys(original.spec.tuningConfig ?? {})) {
        if (["type", "partitionsSpec"].includes(key)) continue;
        if (!(key in template.spec.tuningConfig))
          expect(notes.map((n) => n.path)).toContain(`spec.tuningConfig.${key}`);
      }
      if (original.hadoopDependencyCoordinates)
        expect(notes).toContainEqual(
          expect.objectContaining({ path: "hadoopDependencyCoordinates", kind: "dropped" }),
        );
      const interval = partitionOf(original);
      const v = await segopsInProcess(["validate", out, "--interval", interval, "--json"]);
      expect(v.code, v.out).toBe(0);
      expect(JSON.parse(v.out).valid).toBe(true);
      const rendered = await segopsInProcess(["render", out, "--interval", interval]);
      expect(rendered.code, rendered.err).toBe(0);
      expect(JSON.parse(rendered.out).spec.dataSchema.granularitySpec.intervals).toEqual([
        expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      ]);
    });
  }
});

describe("segops convert: how each part maps", () => {
  it("the tutorial: a scheme-less path resolved against fs.defaultFS, hashed partitions with perfect rollup", () => {
    const { template, notes } = convertHadoopSpec(fixture("tutorial-wikipedia-index-hadoop3.json"));
    const spec = template.spec as Obj;
    expect(spec.ioConfig).toEqual({
      type: "index_parallel",
      inputSource: {
        type: "hdfs",
        paths: ["hdfs://druid-hadoop-demo:9000/quickstart/wikiticker-2015-09-12-sampled.json.gz"],
      },
      inputFormat: { type: "json" },
      dropExisting: true,
    });
    expect(spec.dataSchema.timestampSpec).toEqual({ format: "auto", column: "time" });
    expect(spec.dataSchema.dimensionsSpec.dimensions).toContainEqual({ name: "added", type: "long" });
    expect(spec.dataSchema.granularitySpec).toEqual({
      type: "uniform",
      segmentGranularity: "day",
      queryGranularity: "none",
      rollup: false,
    });
    expect(spec.tuningConfig).toEqual({
      type: "index_parallel",
      partitionsSpec: { type: "hashed", targetRowsPerSegment: 5000000 },
      forceGuaranteedRollup: true,
    });
    for (const dropped of ["spec.tuningConfig.jobProperties", "spec.tuningConfig.forceExtendableShardSpecs"])
      expect(notes).toContainEqual(expect.objectContaining({ path: dropped, kind: "dropped" }));
  });

  it("tsv with columns; s3a/s3n paths become s3:// uris; credentials are named, never copied or printed", async () => {
    const tsv = convertHadoopSpec(fixture("it-batch-hadoop-indexer.json")).template.spec as Obj;
    expect(tsv.ioConfig.inputFormat).toEqual({
      type: "tsv",
      columns: ["timestamp", "location", "product", "other_metric", "user_id_sketch"],
    });
    expect(tsv.dataSchema.timestampSpec).toEqual({ column: "timestamp", format: "yyyyMMddHH" });
    const r = await segopsInProcess(["convert", join(FIXTURES, "it-wikipedia-hadoop-s3-input.json")]);
    expect(r.code).toBe(0);
    const s3 = JSON.parse(r.out) as Obj;
    expect(s3.spec.ioConfig.inputSource).toEqual({
      type: "s3",
      uris: [
        "s3://druid-it-bucket/wikipedia/wikipedia_index_data1.json",
        "s3://druid-it-bucket/wikipedia/wikipedia_index_data2.json",
      ],
    });
    expect(r.err).toMatch(
      /note: spec\.tuningConfig\.jobProperties: check: credentials \(fs\.s3\.awsAccessKeyId, .*\) were set for the Hadoop job and are not copied/,
    );
    expect(r.out + r.err).not.toContain("%%AWS_SECRET_KEY%%");
  });

  it("a granularity inputSpec: the dated directories down to the partition's granularity, rendered per partition", () => {
    const { template } = convertHadoopSpec(fixture("docs-granularity.json"));
    const rendered = renderTemplate(template as never, { interval: parseInterval("2012-06-01/P1D") })
      .spec as Obj;
    expect(rendered.spec.ioConfig.inputSource).toEqual({
      type: "s3",
      prefixes: ["s3://billy-bucket/the/data/is/here/y=2012/m=06/d=01/"],
      objectGlob: "**.json.gz",
    });
  });

  it("dataSource and multi inputSpecs: the druid input source over the partition, a combining source", () => {
    const reindex = convertHadoopSpec(fixture("docs-datasource-reindex.json")).template.spec as Obj;
    expect(reindex.ioConfig.inputSource).toEqual({
      type: "druid",
      dataSource: "wikipedia",
      interval: "{{interval}}",
    });
    expect(reindex.ioConfig).not.toHaveProperty("inputFormat");
    expect(reindex.dataSchema.timestampSpec).toEqual({ column: "__time", format: "millis" });
    const multi = convertHadoopSpec(fixture("docs-multi.json")).template.spec as Obj;
    expect(multi.ioConfig.inputSource).toEqual({
      type: "combining",
      delegates: [
        { type: "druid", dataSource: "wikipedia", interval: "{{interval}}" },
        { type: "local", files: ["/path/to/more/wikipedia/data/"] },
      ],
    });
    expect(multi.ioConfig.inputFormat).toEqual({ type: "json" });
  });

  it("single-dimension partitions: single_dim with its dimension; without one (Hadoop chose it) hashed, said", () => {
    const docs = fixture("docs-s3-emr-single-dim.json");
    const unnamed = convertHadoopSpec(docs);
    expect((unnamed.template.spec as Obj).tuningConfig.partitionsSpec).toEqual({
      type: "hashed",
      targetRowsPerSegment: 5000000,
    });
    expect(unnamed.notes).toContainEqual(
      expect.objectContaining({ path: "spec.tuningConfig.partitionsSpec.partitionDimension", kind: "check" }),
    );
    docs.spec.tuningConfig.partitionsSpec = {
      type: "hadoop_single_dim_partitions",
      partitionDimension: "page",
      targetPartitionSize: 1000,
      maxPartitionSize: 1500,
    };
    const named = convertHadoopSpec(docs);
    expect((named.template.spec as Obj).tuningConfig).toMatchObject({
      partitionsSpec: { type: "single_dim", partitionDimension: "page", targetRowsPerSegment: 1000 },
      forceGuaranteedRollup: true,
    });
    expect(named.notes).toContainEqual(
      expect.objectContaining({ path: "spec.tuningConfig.partitionsSpec.maxPartitionSize", kind: "dropped" }),
    );
  });

  it("file patterns: the simple regular expressions as globs, the others refused as globs", () => {
    expect(globOf(".*\\.json\\.gz")).toBe("*.json.gz");
    expect(globOf("part-.*")).toBe("part-*");
    expect(globOf("^data_[0-9]+$")).toBeNull();
  });
});

describe("segops convert: bad input", () => {
  const write = (name: string, value: unknown) => {
    const p = join(dir, name);
    writeFileSync(p, JSON.stringify(value));
    return p;
  };

  it("a spec that is not index_hadoop, or whose parser has no native format: exit 2 naming the path, nothing written", async () => {
    const out = join(dir, "never.json");
    const native = await segopsInProcess([
      "convert",
      write("native.json", { type: "index_parallel", spec: {} }),
      "-o",
      out,
    ]);
    expect(native.code).toBe(2);
    expect(native.err).toContain('type: segops convert reads index_hadoop specs, found "index_parallel"');
    const js = fixture("docs-task-syntax.json");
    js.spec.dataSchema.parser.parseSpec.format = "javascript";
    const r = await segopsInProcess(["convert", write("js.json", js), "-o", out]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      'spec.dataSchema.parser.parseSpec.format: no native input format for the parseSpec format "javascript"',
    );
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(dir).filter((f) => f.includes(".tmp"))).toEqual([]);
  });

  it("an existing --output is kept unless --force", async () => {
    const out = join(dir, "exists.json");
    writeFileSync(out, "keep me");
    const spec = join(FIXTURES, "docs-task-syntax.json");
    const r = await segopsInProcess(["convert", spec, "-o", out]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`--output ${out} exists: pass --force`);
    expect(readFileSync(out, "utf8")).toBe("keep me");
    expect((await segopsInProcess(["convert", spec, "-o", out, "--force"])).code).toBe(0);
    expect(JSON.parse(readFileSync(out, "utf8")).type).toBe("index_parallel");
  });

  it("validate and render of an index_hadoop spec explain the removal and offer segops convert", async () => {
    const spec = join(FIXTURES, "tutorial-wikipedia-index-hadoop3.json");
    const v = await segopsInProcess(["validate", spec, "--interval", "2015-09-12/P1D"]);
    expect(v.code).toBe(2);
    expect(v.err).toMatch(
      /^type: index_hadoop is not a task type segops runs .* Druid 37 removed Hadoop ingestion \(apache\/druid #19109\): convert it with `segops convert/m,
    );
    const r = await segopsInProcess(["render", spec, "--interval", "2015-09-12/P1D"]);
    expect(r.err).toContain(`warning: type: index_hadoop is not a task type segops runs`);
    expect(r.err).toContain(`segops convert ${spec} -o <template>.json`);
  });
});

describe("segops convert: a converted template runs on the emulator", () => {
  it("the docs' spec with a granularity inputSpec on local files: two daily partitions done, every row served", async () => {
    const data = join(dir, "hourly");
    const rows: Record<string, number> = { "2026-03-01": 0, "2026-03-02": 0 };
    for (const day of Object.keys(rows)) {
      for (const hour of ["00", "07", "23"]) {
        const d = join(
          data,
          `y=${day.slice(0, 4)}`,
          `m=${day.slice(5, 7)}`,
          `d=${day.slice(8, 10)}`,
          `H=${hour}`,
        );
        mkdirSync(d, { recursive: true });
        const n = hour === "07" ? 3 : 2;
        const lines = Array.from({ length: n }, (_, i) =>
          JSON.stringify({
            timestamp: `${day}T${hour}:0${i}:00Z`,
            page: `p${i}`,
            added: i,
            deleted: 0,
            delta: i,
          }),
        );
        writeFileSync(join(d, "part-0.json"), `${lines.join("\n")}\n`);
        writeFileSync(join(d, "ignored.txt"), "not matched by the file pattern\n");
        rows[day] = (rows[day] ?? 0) + n;
      }
    }
    const hadoop = fixture("docs-granularity.json");
    hadoop.spec.dataSchema.dataSource = "converted_hadoop";
    hadoop.spec.ioConfig.inputSpec.inputPath = data;
    hadoop.spec.ioConfig.inputSpec.filePattern = ".*\\.json";
    const spec = join(dir, "granularity-local.json");
    writeFileSync(spec, JSON.stringify(hadoop));
    const template = join(dir, "granularity-local.template.json");
    expect((await segopsInProcess(["convert", spec, "-o", template])).code).toBe(0);
    const converted = JSON.parse(readFileSync(template, "utf8")) as Obj;
    expect(converted.spec.ioConfig.inputSource).toEqual({
      type: "local",
      baseDir: `${data}/{{start:'y'=yyyy/'m'=MM/'d'=dd}}`,
      filter: "*.json",
    });
    expect(
      validateTemplate({ kind: "task", value: converted }, { interval: parseInterval("2026-03-01/P1D") })
        .valid,
    ).toBe(true);

    const sim = await startSim({ timeScale: 200, handoffDelayMs: 1000 });
    try {
      const r = await segopsInProcess([
        "backfill",
        template,
        "--from",
        "2026-03-01",
        "--to",
        "2026-03-03",
        "--druid",
        sim.url,
        "--ledger",
        `sqlite:${join(dir, "ledger.db")}`,
        "--tick",
        "30",
      ]);
      expect(r.code, r.err).toBe(0);
      expect(await sqlCount(sim.url, "converted_hadoop", "2026-03-01", "2026-03-02")).toBe(
        rows["2026-03-01"],
      );
      expect(await sqlCount(sim.url, "converted_hadoop", "2026-03-02", "2026-03-03")).toBe(
        rows["2026-03-02"],
      );
      expect(await sqlCount(sim.url, "converted_hadoop")).toBe(14);
    } finally {
      await sim.close();
    }
  }, 120_000);
});
