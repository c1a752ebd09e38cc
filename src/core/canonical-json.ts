import { SegopsError } from "./errors.js";

/**
 * Canonical JSON: one byte string per JSON value, so that hashing a spec depends only on what it says,
 * not on how it was written. Follows RFC 8785 (JCS) in spirit: object keys sorted by UTF-16 code units,
 * numbers in ECMAScript shortest round-trip form (`1.0` → `1`, `-0` → `0`, `1E3` → `1000`,
 * `1e21` → `1e+21`), no insignificant whitespace, `undefined` object members dropped (and `undefined`
 * array items written as `null`, as `JSON.stringify` does).
 *
 * Precision note: values are JS values, so integers beyond 2^53 were already rounded by `JSON.parse`.
 */

/** A JSON value as produced by `JSON.parse` or a YAML loader. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A path into a JSON document, one segment per key or array index: `["context", "priority"]`. */
export type JsonPath = readonly (string | number)[];

export class CanonicalJsonError extends SegopsError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super("CanonicalJson", message, details);
  }
}

/** Options for {@link canonicalJson} and {@link normalizeJson}. */
export interface CanonicalOptions {
  /** Paths whose value is left out (e.g. volatile fields); a path that does not exist is ignored. */
  readonly exclude?: readonly JsonPath[];
}

/**
 * The deepest nesting segops accepts in a template or spec (the root object is level 1): far beyond
 * any real Druid spec, and well inside what every recursive walk (render, validate, hash, YAML) can take.
 */
export const MAX_NESTING_DEPTH = 200;

/** A last guard in {@link normalizeJson} for values that did not come through a template load. */
const MAX_CANONICAL_DEPTH = 1000;

/**
 * The path of the first array or object nested deeper than `limit` levels, or null. Iterative, so a
 * hostile depth cannot overflow the stack while it is being measured.
 */
export function tooDeepAt(value: unknown, limit: number = MAX_NESTING_DEPTH): JsonPath | null {
  const stack: Array<{ value: unknown; path: (string | number)[] }> = [{ value, path: [] }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const { value: v, path } = next;
    if (v === null || typeof v !== "object") continue;
    if (path.length >= limit) return path;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], path: [...path, i] });
    } else {
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i] as string;
        stack.push({ value: (v as Record<string, unknown>)[k], path: [...path, k] });
      }
    }
  }
  return null;
}

function describePath(path: JsonPath): string {
  return path.length === 0
    ? "(root)"
    : path.map((p) => (typeof p === "number" ? `[${p}]` : `.${p}`)).join("");
}

function clipPath(text: string): string {
  return text.length > 120 ? `${text.slice(0, 80)}…${text.slice(-30)}` : text;
}

function isPlainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** The exclusion paths that continue below `key`. */
function descend(exclude: readonly JsonPath[], key: string | number): JsonPath[] {
  const out: JsonPath[] = [];
  for (const p of exclude) if (p.length > 1 && String(p[0]) === String(key)) out.push(p.slice(1));
  return out;
}

function isExcludedHere(exclude: readonly JsonPath[], key: string | number): boolean {
  return exclude.some((p) => p.length === 1 && String(p[0]) === String(key));
}

function normalize(value: unknown, exclude: readonly JsonPath[], path: (string | number)[]): JsonValue {
  if (value === null) return null;
  switch (typeof value) {
    case "boolean":
    case "string":
      return value;
    case "number":
      if (!Number.isFinite(value)) {
        throw new CanonicalJsonError(
          `${String(value)} at ${describePath(path)} is not representable in JSON`,
          {
            path: describePath(path),
          },
        );
      }
      // -0 and 0 are the same JSON number; normalise so deep-equality after a round trip holds.
      return value === 0 ? 0 : value;
    case "object": {
      if (path.length >= MAX_CANONICAL_DEPTH) {
        throw new CanonicalJsonError(
          `nesting deeper than ${MAX_CANONICAL_DEPTH} levels at ${clipPath(describePath(path))}`,
          { path: describePath(path), limit: MAX_CANONICAL_DEPTH },
        );
      }
      if (Array.isArray(value)) {
        return value.map((item, i) =>
          item === undefined ? null : normalize(item, descend(exclude, i), [...path, i]),
        );
      }
      if (!isPlainObject(value)) {
        throw new CanonicalJsonError(
          `${Object.prototype.toString.call(value)} at ${describePath(path)} is not plain JSON data`,
          { path: describePath(path) },
        );
      }
      const out: { [key: string]: JsonValue } = {};
      const record = value as Record<string, unknown>;
      for (const key of Object.keys(record).sort(compareKeys)) {
        const v = record[key];
        if (v === undefined || isExcludedHere(exclude, key)) continue;
        // defineProperty, not assignment: a "__proto__" member from JSON.parse is data, not a prototype.
        Object.defineProperty(out, key, {
          value: normalize(v, descend(exclude, key), [...path, key]),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }
    default:
      throw new CanonicalJsonError(`a ${typeof value} at ${describePath(path)} is not JSON data`, {
        path: describePath(path),
      });
  }
}

/** UTF-16 code-unit order, as RFC 8785 requires (the default sort, spelled out so it is not locale-dependent). */
function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The normalised form of `value`: keys in canonical order, `-0` → `0`, `undefined` members dropped,
 * excluded paths removed. `JSON.parse(canonicalJson(x))` deep-equals `normalizeJson(x)`.
 */
export function normalizeJson(value: unknown, options: CanonicalOptions = {}): JsonValue {
  return normalize(value, options.exclude ?? [], []);
}

/** The canonical text of `value` (see the module comment). Throws {@link CanonicalJsonError} on non-JSON data. */
export function canonicalJson(value: unknown, options: CanonicalOptions = {}): string {
  return write(normalizeJson(value, options));
}

function write(v: JsonValue): string {
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(write).join(",")}]`;
  // Sort again: JS enumerates integer-like keys ("9", "10") first and numerically, not in code-unit order.
  const keys = Object.keys(v).sort(compareKeys);
  return `{${keys.map((k) => `${JSON.stringify(k)}:${write(v[k] as JsonValue)}`).join(",")}}`;
}
