import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseInterval } from "../../src/core/interval.js";
import {
  datasourcePart,
  deriveTaskId,
  druidIdProblem,
  MAX_TASK_ID_LENGTH,
  parseTaskId,
  specHash,
  TaskIdError,
} from "../../src/core/task-id.js";

const day = parseInterval("2026-01-01/2026-01-02");

function spec(overrides: Record<string, unknown> = {}) {
  return {
    type: "index_parallel",
    spec: {
      dataSchema: {
        dataSource: "wiki_edits",
        timestampSpec: { column: "ts", format: "iso" },
        granularitySpec: {
          segmentGranularity: "day",
          intervals: ["2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z"],
        },
      },
      ioConfig: {
        type: "index_parallel",
        inputSource: { type: "local", baseDir: "/d" },
        inputFormat: { type: "json" },
      },
    },
    context: { priority: 50 },
    ...overrides,
  };
}

/** Every leaf path of a JSON value, with the leaf. */
function leaves(v: unknown, path: (string | number)[] = []): [(string | number)[], unknown][] {
  if (Array.isArray(v)) return v.flatMap((x, i) => leaves(x, [...path, i]));
  if (v && typeof v === "object") return Object.entries(v).flatMap(([k, x]) => leaves(x, [...path, k]));
  return [[path, v]];
}

/** The same value with every object's keys in reverse order. */
function reverseKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(reverseKeys);
  if (v && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v).reverse()) {
      Object.defineProperty(out, k, {
        value: reverseKeys(x),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return v;
}

function setAt(root: unknown, path: (string | number)[], value: unknown): unknown {
  const copy = structuredClone(root) as Record<string | number, unknown>;
  let cur = copy;
  for (const p of path.slice(0, -1)) cur = cur[p] as Record<string | number, unknown>;
  cur[path[path.length - 1] as string | number] = value;
  return copy;
}

describe("deterministic task ids", () => {
  it("has the documented format", () => {
    const id = deriveTaskId({ spec: spec(), interval: day, specVersion: "1", attempt: 2 });
    expect(id).toMatch(/^segops_wiki_edits_20260101-20260102_[0-9a-f]{12}_a2$/);
    expect(id.split("_")[4]).toBe(specHash(spec(), "1").slice(0, 12));
  });

  it("is the same for the same spec, version and attempt", () => {
    const a = deriveTaskId({ spec: spec(), interval: day, specVersion: "v7", attempt: 1 });
    const b = deriveTaskId({ spec: structuredClone(spec()), interval: day, specVersion: "v7", attempt: 1 });
    expect(a).toBe(b);
  });

  it("changes with the attempt, the spec version, the prefix and the interval", () => {
    const base = deriveTaskId({ spec: spec(), interval: day, specVersion: "1" });
    const others = [
      deriveTaskId({ spec: spec(), interval: day, specVersion: "1", attempt: 2 }),
      deriveTaskId({ spec: spec(), interval: day, specVersion: "2" }),
      deriveTaskId({ spec: spec(), interval: day, specVersion: "1", prefix: "bf" }),
      deriveTaskId({ spec: spec(), interval: parseInterval("2026-01-02/P1D"), specVersion: "1" }),
    ];
    expect(new Set([base, ...others]).size).toBe(5);
  });

  it("ignores volatile fields: an existing id, resource, context.priority and taskLockTimeout", () => {
    const base = deriveTaskId({ spec: spec(), interval: day, specVersion: "1" });
    const noisy = spec({
      id: "whatever",
      resource: { availabilityGroup: "g" },
      context: { priority: 90, taskLockTimeout: 5 },
    });
    expect(deriveTaskId({ spec: noisy, interval: day, specVersion: "1" })).toBe(base);
    // A non-volatile context key does change the id.
    const changed = spec({ context: { priority: 50, useConcurrentLocks: true } });
    expect(deriveTaskId({ spec: changed, interval: day, specVersion: "1" })).not.toBe(base);
  });

  it("accepts extra volatile paths", () => {
    const a = spec({ context: { priority: 50, x: 1 } });
    const b = spec({ context: { priority: 50, x: 2 } });
    const opts = { interval: day, specVersion: "1", volatilePaths: [["context", "x"]] };
    expect(deriveTaskId({ ...opts, spec: a })).toBe(deriveTaskId({ ...opts, spec: b }));
  });

  it("does not let the version and the spec text run into each other", () => {
    expect(specHash({ a: 1 }, "1")).not.toBe(specHash({ a: 1 }, "1 "));
    expect(specHash("x", "a")).not.toBe(specHash("x", "a\n"));
  });

  it("is stable under key reordering and whitespace (property)", () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), fc.jsonValue()),
        fc.integer({ min: 0, max: 4 }),
        (extra, indent) => {
          const s = spec({ extra });
          const reordered = JSON.parse(JSON.stringify(reverseKeys(s), null, indent));
          expect(JSON.stringify(reordered)).not.toBe(JSON.stringify(s));
          expect(deriveTaskId({ spec: reordered, interval: day, specVersion: "1" })).toBe(
            deriveTaskId({ spec: s, interval: day, specVersion: "1" }),
          );
        },
      ),
      { numRuns: 100 },
    );
  });

  it("changes under any change of a non-volatile value (property)", () => {
    const base = spec();
    const paths = leaves(base).filter(([p]) => !(p[0] === "context" && p[1] === "priority"));
    const baseId = deriveTaskId({ spec: base, interval: day, specVersion: "1" });
    fc.assert(
      fc.property(fc.constantFrom(...paths), fc.jsonValue(), ([path, old], value) => {
        fc.pre(JSON.stringify(value) !== JSON.stringify(old));
        const changed = setAt(base, path, value);
        // dataSource is shown in the id; pin it so the hash alone must tell the difference.
        const id = deriveTaskId({ spec: changed, interval: day, specVersion: "1", datasource: "wiki_edits" });
        expect(id).not.toBe(baseId);
      }),
      { numRuns: 300 },
    );
  });

  it("is always a valid, bounded Druid id that parses back (property)", () => {
    const interval = fc
      .tuple(fc.integer({ min: 0, max: 4_000_000_000_000 }), fc.integer({ min: 1, max: 400 * 86_400_000 }))
      .map(([start, len]) => ({ start, end: start + len }));
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 300, unit: "binary" }),
        interval,
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,31}$/),
        (datasource, iv, attempt, prefix) => {
          const id = deriveTaskId({
            spec: { x: 1 },
            datasource,
            interval: iv,
            specVersion: "1",
            attempt,
            prefix,
          });
          expect(druidIdProblem("Task ID", id)).toBeNull();
          expect(id.length).toBeLessThanOrEqual(MAX_TASK_ID_LENGTH);
          const parsed = parseTaskId(id);
          expect(parsed?.attempt).toBe(attempt);
          expect(parsed?.prefix).toBe(prefix);
          expect(parsed?.datasourcePart).toBe(datasourcePart(datasource));
          if (parsed?.datasource !== undefined) expect(parsed.datasource).toBe(datasource);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("shortens long or unusual datasource names with a hash tag", () => {
    expect(datasourcePart("wiki.edits-2")).toBe("wiki.edits-2");
    const odd = datasourcePart("sales/eu dashboards");
    expect(odd).toMatch(/^sales-eu-dashboards~[0-9a-f]{8}$/);
    expect(datasourcePart("sales/eu dashboards!")).not.toBe(odd);
    const long = datasourcePart("x".repeat(100));
    expect(long).toMatch(/^x{40}~[0-9a-f]{8}$/);
  });

  it("parses our ids and refuses others", () => {
    const id = deriveTaskId({
      spec: spec(),
      interval: parseInterval("2026-01-01T05:00Z/PT1H"),
      specVersion: "1",
      attempt: 12,
    });
    expect(parseTaskId(id)).toEqual({
      prefix: "segops",
      datasource: "wiki_edits",
      datasourcePart: "wiki_edits",
      slug: "20260101T05-20260101T06",
      hash: id.split("_").at(-2),
      attempt: 12,
    });
    expect(parseTaskId("index_parallel_wikipedia_auto_biahcbmf_2023-06-26T21:08:05.216Z")).toBeNull();
    expect(parseTaskId("segops_ds_20260101-20260102_0123456789ab_a0")).toBeNull();
    expect(parseTaskId("segops_ds_20260101-20260102_0123456789ab_a01")).toBeNull();
  });

  it("rejects bad inputs with a TaskIdError", () => {
    expect(() => deriveTaskId({ spec: spec(), interval: day, specVersion: "1", attempt: 0 })).toThrow(
      TaskIdError,
    );
    expect(() => deriveTaskId({ spec: spec(), interval: day, specVersion: "1", attempt: 1.5 })).toThrow(
      /attempt 1.5/,
    );
    expect(() => deriveTaskId({ spec: spec(), interval: day, specVersion: "1", prefix: "a_b" })).toThrow(
      /prefix "a_b"/,
    );
    expect(() => deriveTaskId({ spec: { type: "noop" }, interval: day, specVersion: "1" })).toThrow(
      /spec\.dataSchema\.dataSource is missing: set spec\.dataSchema\.dataSource in the template/,
    );
  });
});

describe("Druid id rules (IdUtils.validateId, docs/druid-api.md §2.2)", () => {
  it("accepts ordinary names, including spaces", () => {
    expect(druidIdProblem("dataSource", "wiki edits_2026.v1")).toBeNull();
  });
  it.each([
    ["", "must not be null"],
    [".hidden", "cannot start with '.'"],
    ["a/b", "cannot contain '/'"],
    ["a\tb", "illegal whitespace characters"],
    ["a\u0001b", "illegal UTF8 character [#1] at position [1]"],
    ["a\u0085b", "illegal UTF8 character [#133]"],
    ["emoji \u{1F600}", "illegal UTF8 character [#55357]"],
  ])("refuses %j (%s)", (value, message) => {
    expect(druidIdProblem("Task ID", value)).toContain(message);
  });
});
