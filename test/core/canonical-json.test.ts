import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CanonicalJsonError, canonicalJson, normalizeJson } from "../../src/core/canonical-json.js";

/** Reorders every object's keys (deeply) by the given permutation seed. */
function shuffleKeys(value: unknown, seed: number): unknown {
  if (Array.isArray(value)) return value.map((v) => shuffleKeys(v, seed + 1));
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>);
    const rotated = entries.map((_, i) => entries[(i + seed) % entries.length] as [string, unknown]);
    if (seed % 2 === 1) rotated.reverse();
    const out: Record<string, unknown> = {};
    for (const [k, v] of rotated)
      Object.defineProperty(out, k, {
        value: shuffleKeys(v, seed + 1),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    return out;
  }
  return value;
}

describe("canonical JSON", () => {
  it("sorts keys, drops whitespace and undefined members", () => {
    expect(canonicalJson({ b: 1, a: { d: [1, "x"], c: null }, u: undefined })).toBe(
      '{"a":{"c":null,"d":[1,"x"]},"b":1}',
    );
  });

  it("normalises number spellings: 1.0, -0, exponent forms", () => {
    const parsed = JSON.parse('{"a":1.0,"b":-0,"c":1E3,"d":1e21,"e":0.000001,"f":1e-7,"g":-0.0}');
    expect(canonicalJson(parsed)).toBe('{"a":1,"b":0,"c":1000,"d":1e+21,"e":0.000001,"f":1e-7,"g":0}');
  });

  it("orders integer-like keys by code units, not numerically", () => {
    expect(canonicalJson({ "9": "a", "10": "b", a: 1 })).toBe('{"10":"b","9":"a","a":1}');
  });

  it("keeps a __proto__ member as data", () => {
    const parsed = JSON.parse('{"__proto__":{"x":1},"a":2}');
    expect(canonicalJson(parsed)).toBe('{"__proto__":{"x":1},"a":2}');
  });

  it("writes undefined array items as null, like JSON.stringify", () => {
    expect(canonicalJson([1, undefined, 2])).toBe("[1,null,2]");
  });

  it("leaves out excluded paths and ignores paths that do not exist", () => {
    const spec = { id: "x", context: { priority: 90, keep: true }, spec: { a: [{ b: 1, c: 2 }] } };
    expect(
      canonicalJson(spec, {
        exclude: [["id"], ["context", "priority"], ["spec", "a", 0, "c"], ["no", "such"]],
      }),
    ).toBe('{"context":{"keep":true},"spec":{"a":[{"b":1}]}}');
    // The input is not modified.
    expect(spec.context.priority).toBe(90);
  });

  it("rejects non-JSON values with the path", () => {
    expect(() => canonicalJson({ a: [1, Number.NaN] })).toThrow(CanonicalJsonError);
    expect(() => canonicalJson({ a: [1, Number.POSITIVE_INFINITY] })).toThrow(/\.a\[1\]/);
    expect(() => canonicalJson({ d: new Date(0) })).toThrow(/\.d is not plain JSON data/);
    expect(() => canonicalJson({ f: () => 1 })).toThrow(/function at \.f/);
    expect(() => canonicalJson({ n: 1n })).toThrow(/bigint/);
  });

  it("round-trips: JSON.parse(canonical(x)) deep-equals normalised x", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (x) => {
        expect(JSON.parse(canonicalJson(x))).toStrictEqual(normalizeJson(x));
      }),
      { numRuns: 300 },
    );
  });

  it("is idempotent and independent of key order and whitespace", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.nat(20), fc.integer({ min: 0, max: 4 }), (x, seed, indent) => {
        const c = canonicalJson(x);
        expect(canonicalJson(JSON.parse(c))).toBe(c);
        const rewritten = JSON.parse(JSON.stringify(shuffleKeys(x, seed), null, indent));
        expect(canonicalJson(rewritten)).toBe(c);
      }),
      { numRuns: 300 },
    );
  });

  it("gives equal text exactly for deep-equal normalised values", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        const equal = isDeepStrictEqual(normalizeJson(a), normalizeJson(b));
        expect(canonicalJson(a) === canonicalJson(b)).toBe(equal);
        expect(canonicalJson(a) === canonicalJson(structuredClone(a))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
