import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { canonicalJson, type JsonValue } from "../../src/core/canonical-json.js";
import { parseInterval } from "../../src/core/interval.js";
import { prepareSpec } from "../../src/spec/prepare.js";
import { parseTemplateText } from "../../src/spec/template.js";
import { validateSpec } from "../../src/spec/validate.js";
import { runCli } from "../helpers/cli-process.js";
import { dailyTemplate } from "../helpers/dataset.js";

const work = mkdtempSync(join(tmpdir(), "segops-regress-t-"));
const DEPTH = 20_000;

function nestedJson(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
}

function file(name: string, text: string): string {
  const p = join(work, name);
  writeFileSync(p, text);
  return p;
}

/** `{a: {a: … value …}}` as a JS value, built without recursion. */
function nestedValue(depth: number, leaf: JsonValue): JsonValue {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

describe("deeply nested templates", () => {
  it("a 20,000-level nested JSON template is refused on load with the limit and a JSON path", () => {
    let error: unknown;
    try {
      parseTemplateText(nestedJson(DEPTH), "deep.json");
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: "Template" });
    const message = (error as Error).message;
    expect(message).toMatch(/nesting deeper than 200 levels at a\.a\.a/);
    expect(message).not.toMatch(/call stack/);
    expect((error as { details: { path: string } }).details.path).toBe(Array(200).fill("a").join("."));
  });

  it("a 20,000-level nested YAML template (flow or block) is refused with the limit and a JSON path", () => {
    const flow = `${"{a: ".repeat(DEPTH)}1${"}".repeat(DEPTH)}`;
    expect(() => parseTemplateText(flow, "deep.yaml")).toThrow(/nesting deeper than 200 levels at a\.a\.a/);
    const block = Array.from({ length: 1000 }, (_, i) => `${" ".repeat(i)}k:`).join("\n");
    expect(() => parseTemplateText(`${block} 1\n`, "deep.yaml")).toThrow(
      /nesting deeper than 200 levels at k\.k\.k/,
    );
    const seq = `${"- ".repeat(1000)}1\n`;
    expect(() => parseTemplateText(seq, "deep.yml")).toThrow(
      /nesting deeper than 200 levels at \[0\]\[0\]\[0\]/,
    );
  });

  it("a template exactly at the nesting limit renders, validates and gets an id", () => {
    const t = dailyTemplate({ datasource: "deep" }) as Record<string, JsonValue>;
    // The root is level 1 and context level 2, so this reaches level 200 exactly.
    t.context = { deep: nestedValue(198, 1) };
    const text = JSON.stringify(t);
    const loaded = parseTemplateText(text, "limit.json");
    const prepared = prepareSpec(loaded, {
      interval: parseInterval("2026-01-01/P1D"),
      vars: { dataDir: "/tmp" },
    });
    expect(prepared.taskId).toMatch(/^segops_deep_/);
    expect(validateSpec(prepared.kind === "task" ? prepared.spec : {}).valid).toBe(true);
    (t.context as Record<string, JsonValue>).deep = nestedValue(199, 1);
    expect(() => parseTemplateText(JSON.stringify(t), "over.json")).toThrow(
      /nesting deeper than 200 levels at context\.deep\.a/,
    );
  });

  it("render/validate/id/submit/run/backfill all give exit 2 for a 20,000-level template", async () => {
    const deep = file("deep.json", nestedJson(DEPTH));
    const ledger = `sqlite:${join(work, "never.db")}`;
    const runs = [
      ["render", deep, "--interval", "2026-01-01/P1D"],
      ["validate", deep, "--interval", "2026-01-01/P1D"],
      ["id", deep, "--interval", "2026-01-01/P1D"],
      ["submit", deep, "--interval", "2026-01-01/P1D", "--druid", "http://127.0.0.1:9"],
      ["run", deep, "--interval", "2026-01-01/P1D", "--druid", "http://127.0.0.1:9", "--ledger", ledger],
      [
        "backfill",
        deep,
        "--from",
        "2026-01-01",
        "--to",
        "2026-01-03",
        "--druid",
        "http://127.0.0.1:9",
        "--ledger",
        ledger,
      ],
    ];
    const results = await Promise.all(runs.map((args) => runCli(args).done));
    for (const [i, r] of results.entries()) {
      expect({ command: runs[i]?.[0], code: r.code }).toEqual({ command: runs[i]?.[0], code: 2 });
      expect(r.stderr).toMatch(/nesting deeper than 200 levels at a\.a\.a/);
      expect(r.stderr).not.toMatch(/call stack/);
    }
  }, 60_000);

  it("canonical JSON (task ids) refuses 20,000 levels with a named error, not a stack overflow", () => {
    expect(() => canonicalJson(nestedValue(DEPTH, 1))).toThrow(
      expect.objectContaining({
        code: "CanonicalJson",
        message: expect.stringMatching(/^nesting deeper than 1000 levels at \.a\.a/),
      }),
    );
  });

  it("a YAML alias chain is refused as a template problem (exit 2), not a crash", () => {
    let yaml = "x0: &a0 {v: 1}\n";
    for (let i = 1; i < 300; i++) yaml += `x${i}: &a${i} {v: *a${i - 1}}\n`;
    expect(() => parseTemplateText(yaml, "alias.yaml")).toThrow(
      expect.objectContaining({ code: "Template", message: expect.stringMatching(/alias/) }),
    );
  });
});

describe("template messages", () => {
  it("null or array templates say found null / found array, not found object", () => {
    expect(() => parseTemplateText("null", "n.json")).toThrow(/found null$/);
    expect(() => parseTemplateText("[1, 2]", "a.json")).toThrow(/found an array \[1,2\]$/);
    expect(() => parseTemplateText("- 1\n", "a.yaml")).toThrow(/found an array \[1\]$/);
    expect(() => parseTemplateText("42", "x.json")).toThrow(/found number 42$/);
  });

  it("--var ds= (empty) rendering the datasource names the variable, exit 2", async () => {
    const t = dailyTemplate({ datasource: "{{var.ds}}" });
    const p = file("ds.json", JSON.stringify(t));
    for (const command of ["render", "id"]) {
      const r = await runCli([
        command,
        p,
        "--interval",
        "2026-01-01/P1D",
        "--var",
        "ds=",
        "--var",
        "dataDir=/tmp",
      ]).done;
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("spec.dataSchema.dataSource");
      expect(r.stderr).toContain("--var ds");
      expect(r.stderr).toMatch(/empty/);
      expect(r.stderr).not.toContain("names no datasource");
    }
  });
});
