import { describe, expect, it } from "vitest";
import { parseInterval } from "../../src/core/interval.js";
import { TemplateError } from "../../src/spec/issues.js";
import { hasPlaceholders, parseTemplateText, parseVars, renderTemplate } from "../../src/spec/template.js";

const day = parseInterval("2026-03-05/P1D");

function task(ioExtra: Record<string, unknown> = {}, granularitySpec: Record<string, unknown> = {}) {
  return {
    type: "index_parallel",
    spec: {
      dataSchema: {
        dataSource: "wiki",
        timestampSpec: { column: "ts" },
        granularitySpec: { segmentGranularity: "day", ...granularitySpec },
      },
      ioConfig: {
        type: "index_parallel",
        inputSource: { type: "local", baseDir: "/d" },
        inputFormat: { type: "json" },
        ...ioExtra,
      },
    },
  };
}

function thrown(fn: () => unknown): TemplateError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(TemplateError);
    return e as TemplateError;
  }
  throw new Error("expected a TemplateError");
}

describe("rendering placeholders", () => {
  it("substitutes interval, start, end and UTC date parts", () => {
    const t = task({
      inputSource: {
        type: "s3",
        uris: ["s3://b/{{start:yyyy/MM/dd}}/{{ end:yyyyMMdd'T'HH }}.json"],
        note: "{{interval}} | {{start}} | {{end}}",
      },
    });
    const { spec } = renderTemplate(t, { interval: day });
    const src = (spec.spec as { ioConfig: { inputSource: { uris: string[]; note: string } } }).ioConfig
      .inputSource;
    expect(src.uris).toEqual(["s3://b/2026/03/05/20260306T00.json"]);
    expect(src.note).toBe(
      "2026-03-05T00:00:00.000Z/2026-03-06T00:00:00.000Z | 2026-03-05T00:00:00.000Z | 2026-03-06T00:00:00.000Z",
    );
  });

  it("names the path of the string whose placeholder fails, deep in arrays, and keeps a __proto__ key an own key", () => {
    const t = task({ inputSource: { type: "s3", uris: ["s3://b/ok", "s3://b/{{nope}}"] } });
    expect(thrown(() => renderTemplate(t, { interval: day })).details.path).toBe(
      "spec.ioConfig.inputSource.uris[1]",
    );
    const parsed = { ...task(), context: JSON.parse('{"__proto__":{"at":"{{start}}"}}') };
    const { spec } = renderTemplate(parsed, { interval: day });
    const context = spec.context as Record<string, unknown>;
    expect(Object.getPrototypeOf(context)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(context, "__proto__")?.value).toEqual({
      at: "2026-03-05T00:00:00.000Z",
    });
    // The template itself is untouched: rendering copies.
    expect(Object.getOwnPropertyDescriptor(parsed.context, "__proto__")?.value).toEqual({ at: "{{start}}" });
  });

  it("substitutes {{var.NAME}} and keeps a whole-string placeholder a string", () => {
    const t = task({ inputSource: { type: "local", baseDir: "/data/{{var.env}}", count: "{{var.n}}" } });
    const { spec, warnings } = renderTemplate(t, { interval: day, vars: { env: "prod", n: "5" } });
    const src = (spec.spec as { ioConfig: { inputSource: Record<string, unknown> } }).ioConfig.inputSource;
    expect(src.baseDir).toBe("/data/prod");
    expect(src.count).toBe("5");
    expect(warnings).toEqual([]);
  });

  it("leaves non-string values alone and does not modify the template", () => {
    const t = task({ appendToExisting: false }, { rollup: true });
    const before = JSON.stringify(t);
    const { spec } = renderTemplate(t, { interval: day });
    expect(JSON.stringify(t)).toBe(before);
    const io = (spec.spec as { ioConfig: Record<string, unknown> }).ioConfig;
    expect(io.appendToExisting).toBe(false);
  });

  it("writes a literal {{ with a quoted placeholder", () => {
    const { spec } = renderTemplate(task({ inputSource: { type: "x", p: "{{'{{'}}a}}" } }), {
      interval: day,
    });
    expect((spec.spec as { ioConfig: { inputSource: { p: string } } }).ioConfig.inputSource.p).toBe("{{a}}");
  });

  it("fails on an unknown placeholder, naming the JSON path", () => {
    const e = thrown(() =>
      renderTemplate(task({ inputSource: { type: "s3", uris: ["a", "s3://{{date}}"] } }), { interval: day }),
    );
    expect(e.code).toBe("Template");
    expect(e.message).toContain("spec.ioConfig.inputSource.uris[1]: unknown placeholder {{date}}");
  });

  it("fails on a missing variable, naming the path and the flag to pass", () => {
    const e = thrown(() =>
      renderTemplate(task({ inputSource: { type: "local", baseDir: "{{var.env}}" } }), { interval: day }),
    );
    expect(e.message).toBe(
      "spec.ioConfig.inputSource.baseDir: missing variable {{var.env}}: pass --var env=VALUE",
    );
  });

  it("fails on an unclosed placeholder and on placeholders in keys", () => {
    expect(thrown(() => renderTemplate(task({ x: "a {{start" }), { interval: day })).message).toMatch(
      /spec\.ioConfig\.x: unclosed placeholder/,
    );
    expect(thrown(() => renderTemplate(task({ "{{start}}": 1 }), { interval: day })).message).toMatch(
      /spec\.ioConfig\["\{\{start\}\}"\]: placeholders are substituted in values only/,
    );
  });

  it("refuses date formats with letters outside the documented set", () => {
    expect(thrown(() => renderTemplate(task({ x: "{{start:EEEE}}" }), { interval: day })).message).toMatch(
      /date format "EEEE" uses "E"/,
    );
    const { spec } = renderTemplate(task({ x: "{{start:'day' o}}" }), { interval: day });
    expect((spec.spec as { ioConfig: { x: string } }).ioConfig.x).toBe("day 64");
  });

  it("warns about unused --var values", () => {
    const { warnings } = renderTemplate(task(), { interval: day, vars: { env: "prod" } });
    expect(warnings).toEqual([{ path: "var.env", message: "--var env is not used by the template" }]);
  });
});

describe("interval injection and id pinning", () => {
  it("injects the partition as spec.dataSchema.granularitySpec.intervals", () => {
    const { spec } = renderTemplate(task(), { interval: day });
    const g = (spec.spec as { dataSchema: { granularitySpec: { intervals: string[] } } }).dataSchema
      .granularitySpec;
    expect(g.intervals).toEqual(["2026-03-05T00:00:00.000Z/2026-03-06T00:00:00.000Z"]);
  });

  it("creates the granularitySpec when the template has none", () => {
    const t = task();
    delete (t.spec.dataSchema as { granularitySpec?: unknown }).granularitySpec;
    const { spec } = renderTemplate(t, { interval: day });
    expect(JSON.stringify(spec)).toContain(
      '"granularitySpec":{"intervals":["2026-03-05T00:00:00.000Z/2026-03-06T00:00:00.000Z"]}',
    );
  });

  it("accepts intervals that equal the partition, also written as {{interval}}", () => {
    expect(() => renderTemplate(task({}, { intervals: ["{{interval}}"] }), { interval: day })).not.toThrow();
    expect(() =>
      renderTemplate(task({}, { intervals: ["2026-03-05/2026-03-06"] }), { interval: day }),
    ).not.toThrow();
  });

  it("refuses a template that sets a different interval", () => {
    const e = thrown(() =>
      renderTemplate(task({}, { intervals: ["2026-03-01/2026-04-01"] }), { interval: day }),
    );
    expect(e.message).toMatch(
      /^spec\.dataSchema\.granularitySpec\.intervals: the template sets \["2026-03-01\/2026-04-01"\]/,
    );
    expect(e.message).toContain("but the partition is 2026-03-05T00:00:00.000Z/2026-03-06T00:00:00.000Z");
  });

  it("refuses a template without spec.dataSchema", () => {
    expect(
      thrown(() => renderTemplate({ type: "index_parallel", spec: {} }, { interval: day })).message,
    ).toMatch(/^spec\.dataSchema: cannot inject the partition interval/);
  });

  it("injects a compact task's ioConfig.inputSpec and refuses a different one", () => {
    const { spec } = renderTemplate({ type: "compact", dataSource: "wiki" }, { interval: day });
    expect(spec.ioConfig).toEqual({
      type: "compact",
      inputSpec: { type: "interval", interval: "2026-03-05T00:00:00.000Z/2026-03-06T00:00:00.000Z" },
    });
    const other = {
      type: "compact",
      dataSource: "wiki",
      ioConfig: { inputSpec: { type: "interval", interval: "2026-01-01/P1D" } },
    };
    expect(thrown(() => renderTemplate(other, { interval: day })).message).toMatch(
      /^ioConfig\.inputSpec\.interval:/,
    );
  });

  it("moves a compact task's deprecated top-level interval into ioConfig (CompactionTask takes only one)", () => {
    const { spec } = renderTemplate(
      { type: "compact", dataSource: "wiki", interval: "{{interval}}" },
      { interval: day },
    );
    expect(spec.interval).toBeUndefined();
    expect(spec.ioConfig).toEqual({
      type: "compact",
      inputSpec: { type: "interval", interval: "2026-03-05T00:00:00.000Z/2026-03-06T00:00:00.000Z" },
    });
  });

  it("pins the id and warns when it replaces the template's own", () => {
    const { spec, warnings } = renderTemplate({ ...task(), id: "fixed" }, { interval: day, id: "segops_x" });
    expect(spec.id).toBe("segops_x");
    expect(warnings).toEqual([
      { path: "id", message: 'the template\'s id "fixed" is replaced by the derived id' },
    ]);
  });
});

describe("loading template text", () => {
  it("reads JSON and YAML by extension or content", () => {
    expect(parseTemplateText('{"type":"index"}', "t.json")).toEqual({
      kind: "task",
      value: { type: "index" },
    });
    expect(parseTemplateText("type: index\nn: 1\n", "t.yaml")).toEqual({
      kind: "task",
      value: { type: "index", n: 1 },
    });
    expect(parseTemplateText('  {"a":1}', "t")).toEqual({ kind: "task", value: { a: 1 } });
    expect(parseTemplateText("a: 1", "t.tmpl")).toEqual({ kind: "task", value: { a: 1 } });
    expect(parseTemplateText("REPLACE INTO x", "t.txt").kind).toBe("sql");
  });

  it("keeps YAML 1.1 lookalikes as strings (no timestamps, no yes/no booleans)", () => {
    const loaded = parseTemplateText("d: 2026-01-01\nflag: yes\nz: 007\n", "t.yml");
    expect(loaded).toEqual({ kind: "task", value: { d: "2026-01-01", flag: "yes", z: 7 } });
  });

  it("reports unreadable YAML and JSON with the file name", () => {
    expect(() => parseTemplateText("a: [1, 2\n", "bad.yaml")).toThrow(
      /cannot parse bad.yaml as YAML \(line \d+, column \d+\)/,
    );
    expect(() => parseTemplateText("a: 1\na: 2\n", "dup.yaml")).toThrow(/cannot parse dup.yaml as YAML/);
    expect(() => parseTemplateText("a: !!js/function 'x'\n", "tag.yaml")).toThrow(
      /cannot parse tag.yaml as YAML/,
    );
    expect(() => parseTemplateText('{\n  "a": 1\n  "b": 2\n}', "bad.json")).toThrow(
      "bad.json:3:3: expected ',' or '}' after a property",
    );
    expect(() => parseTemplateText("[1]", "arr.json")).toThrow(/must hold a JSON\/YAML object/);
  });

  it("detects placeholders in values and keys", () => {
    expect(hasPlaceholders({ a: ["x", "{{start}}"] })).toBe(true);
    expect(hasPlaceholders({ "{{k}}": 1 })).toBe(true);
    expect(hasPlaceholders({ a: ["x", 1, null] })).toBe(false);
  });
});

describe("--var parsing", () => {
  it("splits on the first = and allows empty values", () => {
    expect(parseVars(["a=1", "b=x=y", "c="])).toEqual({ a: "1", b: "x=y", c: "" });
  });
  it("refuses malformed and repeated names", () => {
    expect(() => parseVars(["novalue"])).toThrow(/invalid --var "novalue"/);
    expect(() => parseVars(["1a=x"])).toThrow(TemplateError);
    expect(() => parseVars(["a=1", "a=2"])).toThrow(/--var a is given twice/);
  });
});
