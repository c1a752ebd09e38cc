import {
  type Json,
  type JsonObject,
  JsonSyntaxError,
  JsonValue,
  javaDouble,
  readJson,
  writeJson,
} from "./json-value.js";
import { SqlError, SqlRuntimeError, type SqlType, Timestamp, type Value } from "./sql.js";
import type { Expr } from "./sql-ast.js";

/** sql-functions.ts' ScalarFn, written out here so that the two modules do not import each other. */
interface ArgType {
  type: SqlType;
  charLen?: number;
}
interface ScalarFn {
  min: number;
  max: number;
  type(args: ArgType[]): ArgType;
  run(args: Value[]): Value;
}

/**
 * Druid's nested columns (`COMPLEX<json>`) and SQL JSON functions (docs/querying/nested-columns.md,
 * docs/querying/sql-json-functions.md; `NestedDataExpressions`, `NestedPathFinder`, `StructuredDataProcessor` in
 * Druid's source), as a real Druid 33 answered them:
 *
 * - a JSON value is Jackson's `Object` tree: integers stay exact (`Long`/`BigInteger`), other numbers are doubles,
 *   objects keep their keys' order (`LinkedHashMap`); in SQL results it is its JSON text (`"{\"x\":1}"`, typed
 *   `COMPLEX<json>`/`OTHER`), numbers written as Java writes them (`955.0`, `1.0E-7`);
 * - arrays of JSON_KEYS and JSON_PATHS come back as their JSON text too (Druid's `sqlStringifyArrays`), typed
 *   `ARRAY<STRING>`/`ARRAY`.
 */

// ------------------------------------------------------------------------------------------- paths

type PathPart = { field: string } | { index: number };

/**
 * A JSONPath as `NestedPathFinder.parseJsonPath` reads it: `$`, `.name`, `['name']`, `[n]` (a negative index
 * counts from the end, as a real Druid 33 answered). Druid 33's refusal of a path not starting with `$` is
 * "JSONPath [x] is invalid, it must start with '$'".
 */
export function parseJsonPath(path: string): PathPart[] {
  const bad = (why: string): never => {
    throw new SqlError(`JSONPath [${path}] is invalid, it ${why}`);
  };
  if (!path.startsWith("$")) bad("must start with '$'");
  const parts: PathPart[] = [];
  let i = 1;
  while (i < path.length) {
    const c = path[i];
    if (c === ".") {
      let j = i + 1;
      while (j < path.length && path[j] !== "." && path[j] !== "[") j++;
      if (j === i + 1) bad("has an empty path part");
      parts.push({ field: path.slice(i + 1, j) });
      i = j;
    } else if (c === "[") {
      if (path[i + 1] === "'") {
        const close = path.indexOf("']", i + 2);
        if (close < 0) bad("has an unterminated '");
        parts.push({ field: path.slice(i + 2, close) });
        i = close + 2;
      } else {
        const close = path.indexOf("]", i);
        const n = close < 0 ? "" : path.slice(i + 1, close);
        if (!/^-?\d+$/.test(n)) bad(`expects a number for an array index, got [${n}]`);
        parts.push({ index: Number(n) });
        i = close + 1;
      }
    } else bad("must separate path parts with '.'");
  }
  return parts;
}

/** `NestedPathFinder.find`: the value at the path, undefined where there is none. */
function find(v: Json, parts: PathPart[]): Json | undefined {
  let cur: Json | undefined = v;
  for (const p of parts) {
    if (cur === null || cur === undefined) return undefined;
    if ("field" in p) cur = cur instanceof Map ? cur.get(p.field) : undefined;
    else if (Array.isArray(cur)) cur = cur[p.index < 0 ? cur.length + p.index : p.index];
    else return undefined;
  }
  return cur;
}

const isPrimitive = (v: Json): boolean => v === null || !(Array.isArray(v) || v instanceof Map);

/** A literal as JSON_VALUE returns it by default (VARCHAR): booleans are longs in nested columns (1/0). */
function literalText(v: Json): string {
  if (typeof v === "boolean") return v ? "1" : "0";
  if (typeof v === "number") return javaDouble(v);
  return String(v);
}

/**
 * `JSON_PATHS`'s paths (`StructuredDataProcessor.processFields`): breadth first, every path to a literal, an array of
 * literals being one (the root's too: `$`). Druid collects them in a `HashSet` of path-part lists, so they come out
 * in that set's order: the emulator computes Java's `List.hashCode` of `NestedPathField`/`NestedPathArrayElement`
 * parts (`Objects.hash` of the field name or index) — the order a real Druid 33 gave for flat and nested objects,
 * arrays of objects and root arrays (test/conformance/broker-sql-json-cases.ts).
 */
function jsonPaths(v: Json): string[] {
  type Part = string | number;
  type Field = { parts: Part[]; value: Json };
  const literalArray = (x: Json) => Array.isArray(x) && x.every(isPrimitive);
  if (isPrimitive(v) || literalArray(v)) return ["$"];
  const found: Part[][] = [];
  const queue: Field[] = [{ parts: [], value: v }];
  while (queue.length > 0) {
    const { parts, value } = queue.shift() as Field;
    const children: Array<[Part, Json]> =
      value instanceof Map ? [...value] : (value as Json[]).map((x, i) => [i, x]);
    for (const [part, x] of children) {
      const path = [...parts, part];
      if (isPrimitive(x) || literalArray(x)) found.push(path);
      else queue.push({ parts: path, value: x });
    }
  }
  const partHash = (p: Part) => (31 + (typeof p === "number" ? p : javaHash(p))) | 0;
  const listHash = (parts: Part[]) => parts.reduce<number>((h, p) => (Math.imul(31, h) + partHash(p)) | 0, 1);
  const text = (parts: Part[]) =>
    `$${parts.map((p) => (typeof p === "number" ? `[${p}]` : pathName(p))).join("")}`;
  return javaHashOrder(found.map(listHash)).map((i) => text(found[i] as Part[]));
}

/** A field in a normalized JSONPath (`NestedPathFinder.toNormalizedJsonPath`). */
const pathName = (k: string) => (/[.'"[\]]/.test(k) ? `['${k}']` : `.${k}`);

/** Java's `String.hashCode`. */
function javaHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}

/**
 * The order a Java `HashMap`/`HashSet` iterates keys in, given their `hashCode`s (a string is its `String.hashCode`):
 * by bucket (the spread hash masked by the table's size: 16, doubled while more than 3/4 full), then by insertion
 * within a bucket. Returns indexes.
 */
export function javaHashOrder(keys: Array<string | number>): number[] {
  let capacity = 16;
  while (keys.length > capacity * 0.75) capacity *= 2;
  const bucket = (k: string | number) => {
    const h = typeof k === "number" ? k : javaHash(k);
    return (h ^ (h >>> 16)) & (capacity - 1);
  };
  return keys
    .map((k, i) => ({ i, b: bucket(k) }))
    .sort((a, b) => a.b - b.b || a.i - b.i)
    .map((x) => x.i);
}

// ------------------------------------------------------------------------------------------- functions

const fixed = (type: ArgType["type"]) => (): ArgType => ({ type });

/** The JSON value of an argument: a JsonValue's own, else null (these functions take `COMPLEX<json>` only). */
const jsonArg = (v: Value | undefined): Json | undefined => (v instanceof JsonValue ? v.value : undefined);

/** The path argument, which Druid requires to be a literal (parsed while planning). */
const pathArg = (v: Value | undefined): PathPart[] => parseJsonPath(String(v ?? ""));

/** PARSE_JSON / TRY_PARSE_JSON take text only (Calcite's operand check). */
function textOnly(name: string) {
  return (args: ArgType[]): ArgType => {
    const t = args[0]?.type;
    if (t !== "CHAR" && t !== "VARCHAR" && t !== "NULL")
      throw new SqlError(
        `Cannot apply '${name}' to arguments of type '${name}(<${t}>)'. Supported form(s): '${name}(<STRING>)'`,
      );
    return { type: "OTHER" };
  };
}

function parseText(text: string): Json {
  return readJson(text).value;
}

/** A SQL value as a JSON value (JSON_OBJECT's values, TO_JSON_STRING's input): times are epoch millis. */
function toJson(v: Value): Json {
  if (v === null) return null;
  if (v instanceof JsonValue) return v.value;
  if (v instanceof Timestamp) return BigInt(v.ms);
  if (typeof v === "number") return Number.isInteger(v) ? BigInt(v) : v;
  return v;
}

export const JSON_SCALARS: Record<string, ScalarFn> = {
  /** PARSE_JSON(text): invalid JSON is Druid 33's 500 "Function[parse_json] bad string input […]". */
  PARSE_JSON: {
    min: 1,
    max: 1,
    type: textOnly("PARSE_JSON"),
    run([v]) {
      if (v === null || v === undefined) return null;
      try {
        return new JsonValue(parseText(String(v)));
      } catch (error) {
        if (error instanceof JsonSyntaxError)
          throw new SqlRuntimeError(`Function[parse_json] bad string input [${String(v)}]`, "general");
        throw error;
      }
    },
  },
  TRY_PARSE_JSON: {
    min: 1,
    max: 1,
    type: textOnly("TRY_PARSE_JSON"),
    run([v]) {
      if (v === null || v === undefined) return null;
      try {
        return new JsonValue(parseText(String(v)));
      } catch {
        return null;
      }
    },
  },
  /** TO_JSON_STRING(expr): the value's JSON text (Jackson's `writeValueAsString`). */
  TO_JSON_STRING: {
    min: 1,
    max: 1,
    type: fixed("VARCHAR"),
    run: ([v]) => (v === null || v === undefined ? null : writeJson(toJson(v))),
  },
  /**
   * JSON_VALUE(expr, path): the literal at the path as VARCHAR (`RETURNING type` is read as a CAST of it, which
   * gives what Druid 33 answered: null for text that is no number, 2 for 2.5 as BIGINT). Objects are null; an
   * array of literals is its text over a stored column and Druid's "Invalid type, cannot cast" over a computed one.
   */
  JSON_VALUE: {
    min: 2,
    max: 2,
    type: fixed("VARCHAR"),
    run([v, path]) {
      const parts = pathArg(path);
      const json = jsonArg(v);
      if (json === undefined) return null;
      const found = find(json, parts);
      if (found === undefined || found === null || found instanceof Map) return null;
      if (Array.isArray(found)) {
        if (!found.every(isPrimitive)) return null;
        if ((v as JsonValue).stored) return writeJson(found.map((x) => (x === null ? null : literalText(x))));
        throw new SqlRuntimeError(`Invalid type, cannot cast [${arrayType(found)}] to [STRING]`, "general");
      }
      return literalText(found);
    },
  },
  /** JSON_QUERY(expr, path): the value at the path, `COMPLEX<json>` (null where there is none). */
  JSON_QUERY: {
    min: 2,
    max: 2,
    type: fixed("OTHER"),
    run([v, path]) {
      const parts = pathArg(path);
      const json = jsonArg(v);
      if (json === undefined) return null;
      const found = find(json, parts);
      return found === undefined || found === null ? null : new JsonValue(found);
    },
  },
  /** JSON_KEYS(expr, path): an object's keys in order, an array's indexes, else null (`NestedPathFinder.findKeys`). */
  JSON_KEYS: {
    min: 2,
    max: 2,
    type: fixed("ARRAY"),
    run([v, path]) {
      const parts = pathArg(path);
      const json = jsonArg(v);
      if (json === undefined) return null;
      const found = find(json, parts);
      if (found instanceof Map) return new JsonValue([...found.keys()]);
      if (Array.isArray(found)) return new JsonValue(found.map((_, i) => String(i)));
      return null;
    },
  },
  JSON_PATHS: {
    min: 1,
    max: 1,
    type: fixed("ARRAY"),
    run([v]) {
      if (v === null || v === undefined) return new JsonValue(["$"]);
      const json = jsonArg(v);
      return json === undefined ? null : new JsonValue(jsonPaths(json));
    },
  },
  /**
   * JSON_OBJECT(k1, v1, k2, v2, …) — the parser turns `KEY k VALUE v` and `k: v` into these pairs. Druid builds a
   * `HashMap` (`NestedDataExpressions.StructExprMacro`), so the keys come out in its order, not as written (a real
   * Druid 33: `JSON_OBJECT('zeta':1,'alpha':2,…)` → `{"zeta":1,"aa":5,"b":4,…}`); a repeated key keeps the last value.
   */
  JSON_OBJECT: {
    min: 2,
    max: Number.POSITIVE_INFINITY,
    type: fixed("OTHER"),
    run(args) {
      const keys: string[] = [];
      const values = new Map<string, Json>();
      for (let i = 0; i + 1 < args.length; i += 2) {
        const k = args[i];
        if (typeof k !== "string") throw new SqlRuntimeError("field name must be a STRING", "general");
        if (!values.has(k)) keys.push(k);
        values.set(k, toJson(args[i + 1] ?? null));
      }
      const obj: JsonObject = new Map();
      for (const i of javaHashOrder(keys)) {
        const k = keys[i] as string;
        obj.set(k, values.get(k) as Json);
      }
      return new JsonValue(obj);
    },
  },
  /**
   * JSON_MERGE(a, b, …): objects merged left to right, the rightmost value kept for a key in the first one's key
   * order (Druid 33: `{"a":1,"b":2}` with `'{"b":3,"c":4}'` → `{"a":1,"b":3,"c":4}`); text is parsed; null if any is.
   */
  JSON_MERGE: {
    min: 2,
    max: Number.POSITIVE_INFINITY,
    type: fixed("OTHER"),
    run(args) {
      let out = null as Json;
      for (const a of args) {
        if (a === null || a === undefined) return null;
        let j: Json;
        try {
          j = a instanceof JsonValue ? a.value : typeof a === "string" ? parseText(a) : toJson(a);
        } catch (error) {
          if (error instanceof JsonSyntaxError)
            throw new SqlRuntimeError(`Function[json_merge] invalid input [${String(a)}]`, "general");
          throw error;
        }
        out = out instanceof Map && j instanceof Map ? new Map([...out, ...j]) : j;
      }
      return new JsonValue(out);
    },
  },
};

/** The Druid type of an array of literals, as its cast error names it. */
function arrayType(items: Json[]): string {
  const known = items.filter((x) => x !== null);
  if (known.every((x) => typeof x === "bigint" || typeof x === "boolean")) return "ARRAY<LONG>";
  if (known.every((x) => typeof x !== "string")) return "ARRAY<DOUBLE>";
  return "ARRAY<STRING>";
}

// ------------------------------------------------------------------------------------------- syntax

/** What `readJsonObjectArgs` needs of the parser. */
export interface ArgReader {
  expr(): Expr;
  acceptKw(word: string): boolean;
  acceptOp(symbol: string): boolean;
  isOp(symbol: string): boolean;
}

/**
 * `JSON_OBJECT`'s arguments as alternating keys and values: Calcite reads `KEY k VALUE v` pairs, and Druid's
 * grammar `k: v` pairs too (docs/querying/sql-json-functions.md). Stops before the closing parenthesis.
 */
export function readJsonObjectArgs(r: ArgReader): Expr[] {
  const args: Expr[] = [];
  if (r.isOp(")")) return args;
  do {
    r.acceptKw("KEY");
    args.push(r.expr());
    if (!r.acceptKw("VALUE") && !r.acceptOp(":"))
      throw new SqlError("JSON_OBJECT expects pairs written `KEY k VALUE v` or `k: v`");
    args.push(r.expr());
  } while (r.acceptOp(","));
  // An untyped NULL among the values makes Calcite cast every value to VARCHAR (a real Druid 33:
  // `JSON_OBJECT('a': 1, 'b': NULL, 'c': __time)` → `{"a":"1","b":null,"c":"2026-03-01 00:00:00"}`).
  const isNull = (e: Expr | undefined) => e?.k === "lit" && e.t === "NULL";
  if (!args.some((e, i) => i % 2 === 1 && isNull(e))) return args;
  return args.map((e, i): Expr => (i % 2 === 1 && !isNull(e) ? { k: "cast", e, to: "VARCHAR" } : e));
}
