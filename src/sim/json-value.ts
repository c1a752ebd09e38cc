/**
 * The JSON values of Druid's nested columns (`COMPLEX<json>`) as the emulator holds them: Jackson's `Object` tree,
 * read and written as Jackson does (Druid's `DefaultObjectMapper`). sql-json.ts has the SQL functions over them.
 */

/** A JSON value as Jackson reads one into `Object`: integers as bigint, other numbers as double. */
export type Json = null | boolean | string | number | bigint | Json[] | JsonObject;
export type JsonObject = Map<string, Json>;

/**
 * A `COMPLEX<json>` value (or a JSON_KEYS/JSON_PATHS array) in the SQL engine. `stored` marks a value read from a
 * segment's nested column, whose literal fields Druid reads through the column's field index (JSON_VALUE of an
 * array of primitives is the array as text there, an error over a computed value).
 */
export class JsonValue {
  constructor(
    readonly value: Json,
    readonly stored = false,
  ) {}
  /** The result cell: the value's JSON text, as Druid 33 prints `COMPLEX<json>` and arrays. */
  toJSON(): string {
    return writeJson(this.value);
  }
  toString(): string {
    return writeJson(this.value);
  }
}

// ------------------------------------------------------------------------------------------- reading

/** A JSON text Jackson refuses (the position is where it stopped). */
export class JsonSyntaxError extends Error {}

/**
 * Reads the first JSON value of `text` as Jackson's `ObjectMapper.readValue(text, Object.class)` does: leading
 * whitespace skipped, anything after the value ignored (`FAIL_ON_TRAILING_TOKENS` is off by default), integers
 * exact, other numbers doubles. Returns the value and where it ended.
 */
export function readJson(text: string): { value: Json; end: number } {
  let i = 0;
  const fail = (what: string): never => {
    throw new JsonSyntaxError(`${what} at position ${i}`);
  };
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i] as string)) i++;
  };
  const str = (): string => {
    i++; // the opening quote
    let out = "";
    for (;;) {
      if (i >= text.length) fail("unterminated string");
      const c = text[i] as string;
      if (c === '"') {
        i++;
        return out;
      }
      if (c === "\\") {
        const e = text[i + 1];
        const simple: Record<string, string> = {
          '"': '"',
          "\\": "\\",
          "/": "/",
          b: "\b",
          f: "\f",
          n: "\n",
          r: "\r",
          t: "\t",
        };
        if (e !== undefined && simple[e] !== undefined) {
          out += simple[e];
          i += 2;
        } else if (e === "u" && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
          out += String.fromCharCode(Number.parseInt(text.slice(i + 2, i + 6), 16));
          i += 6;
        } else fail("invalid escape");
      } else if (c < " ") fail("control character in string");
      else {
        out += c;
        i++;
      }
    }
  };
  const value = (): Json => {
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      const obj: JsonObject = new Map();
      ws();
      if (text[i] === "}") {
        i++;
        return obj;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail("field name expected");
        const key = str();
        ws();
        if (text[i] !== ":") fail("':' expected");
        i++;
        obj.set(key, value());
        ws();
        if (text[i] === ",") i++;
        else if (text[i] === "}") {
          i++;
          return obj;
        } else fail("',' or '}' expected");
      }
    }
    if (c === "[") {
      i++;
      const arr: Json[] = [];
      ws();
      if (text[i] === "]") {
        i++;
        return arr;
      }
      for (;;) {
        arr.push(value());
        ws();
        if (text[i] === ",") i++;
        else if (text[i] === "]") {
          i++;
          return arr;
        } else fail("',' or ']' expected");
      }
    }
    if (c === '"') return str();
    const m = /^-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (m && m[0] !== "-") {
      i += m[0].length;
      return m[1] === undefined && m[2] === undefined ? BigInt(m[0]) : Number(m[0]);
    }
    for (const [word, v] of [
      ["true", true],
      ["false", false],
      ["null", null],
    ] as const) {
      if (text.startsWith(word, i) && !/[A-Za-z0-9_]/.test(text[i + word.length] ?? "")) {
        i += word.length;
        return v;
      }
    }
    return fail(i >= text.length ? "no content" : "unrecognized token");
  };
  const v = value();
  return { value: v, end: i };
}

/** A plain JavaScript value (an input record's field) as Jackson's tree: whole numbers exact. */
export function fromPlain(v: unknown): Json {
  if (v === null || v === undefined) return null;
  if (typeof v === "number")
    return Number.isInteger(v) && Math.abs(v) <= Number.MAX_SAFE_INTEGER ? BigInt(v) : v;
  if (typeof v === "string" || typeof v === "boolean" || typeof v === "bigint") return v;
  if (Array.isArray(v)) return v.map(fromPlain);
  if (v instanceof Map) return new Map([...v].map(([k, x]) => [String(k), fromPlain(x)]));
  if (v instanceof JsonValue) return v.value;
  return new Map(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, fromPlain(x)]));
}

/**
 * A nested column's cell as the segment holds it — the JSON text the emulator stores (persisted state is JSON), a
 * value computed by an ingestion query, or an input record's object — as the SQL engine reads it.
 */
export function storedJson(v: unknown): JsonValue | null {
  if (v === null || v === undefined) return null;
  const value = cellValue(v);
  return value === null ? null : new JsonValue(value, true);
}

/** The JSON value of a nested column's cell (see `jsonCell`). */
function cellValue(v: unknown): Json {
  const tagged =
    typeof v === "object" && v !== null ? (v as Record<string, unknown>)[CHANNEL_TAG] : undefined;
  if (typeof tagged === "string") return readJson(tagged).value;
  return v instanceof JsonValue ? v.value : fromPlain(v);
}

/**
 * The column type Druid 33 gives a `json` dimension by the values a segment holds (its nested column indexer types
 * the column as `auto` does; observed on a real Druid 33): only text `VARCHAR`, only whole numbers `BIGINT`, numbers
 * `DOUBLE`, text and numbers `VARCHAR` (the numbers read as text), only arrays of literals `ARRAY`, nothing `VARCHAR`;
 * objects, or arrays beside literals, `COMPLEX<json>` (`OTHER`). Booleans are left `COMPLEX<json>` (not observed).
 */
export function nestedColumnType(
  cells: Iterable<unknown>,
): "OTHER" | "VARCHAR" | "BIGINT" | "DOUBLE" | "ARRAY" {
  let text = false;
  let whole = false;
  let fraction = false;
  let arrays = false;
  for (const cell of cells) {
    if (cell === null || cell === undefined) continue;
    const v = cellValue(cell);
    if (v === null) continue;
    if (typeof v === "string") text = true;
    else if (typeof v === "bigint") whole = true;
    else if (typeof v === "number") fraction = true;
    else if (
      Array.isArray(v) &&
      v.every((x) => x === null || ["string", "bigint", "number"].includes(typeof x))
    )
      arrays = true;
    else return "OTHER";
  }
  if (arrays) return text || whole || fraction ? "OTHER" : "ARRAY";
  return text ? "VARCHAR" : fraction ? "DOUBLE" : whole ? "BIGINT" : "VARCHAR";
}

/** A literal of a nested column typed `VARCHAR` by its values (`nestedColumnType`): numbers read as Java's text. */
export function nestedText(cell: unknown): unknown {
  if (typeof cell !== "number") return cell;
  return Number.isInteger(cell) ? String(cell) : javaDouble(cell);
}

/** An input row's `COMPLEX<json>` field (MSQ's EXTERN signature) as a value the query computes with. */
export function inputJson(v: unknown): JsonValue | null {
  const value = v instanceof JsonValue ? v.value : fromPlain(v);
  return value === null ? null : new JsonValue(value);
}

/**
 * How an MSQ query's output row carries a nested value to the ingestion that stores it (msq-plan.ts writes its
 * rows as JSON lines): tagged JSON text, so that the value arrives exactly (`955.0` a double, big integers whole)
 * and is not mistaken for a JSON string, which a native ingestion's `json` dimension may hold.
 */
const CHANNEL_TAG = "$segops.nestedJson";

/** A `JSON.stringify` replacer for those rows: a JsonValue becomes its tagged text. */
export function channelJson(this: unknown, key: string, value: unknown): unknown {
  const original = (this as Record<string, unknown>)[key];
  return original instanceof JsonValue ? { [CHANNEL_TAG]: original.toJSON() } : value;
}

/**
 * What a segment's nested column keeps for one row: a literal JavaScript holds exactly (text, a whole number within
 * 2^53, a fraction) as itself, so that a column Druid types as a scalar reads as one; anything else (objects, arrays,
 * booleans, `1.0`, big integers) as its tagged JSON text. Persisted state is JSON: both survive it.
 */
export function jsonCell(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  const value = cellValue(v);
  if (value === null) return null;
  if (typeof value === "string") return value;
  if (
    typeof value === "bigint" &&
    value <= BigInt(Number.MAX_SAFE_INTEGER) &&
    value >= -BigInt(Number.MAX_SAFE_INTEGER)
  )
    return Number(value);
  if (typeof value === "number" && !Number.isInteger(value)) return value;
  return { [CHANNEL_TAG]: writeJson(value) };
}

// ------------------------------------------------------------------------------------------- writing

/** A double as Java's `Double.toString` writes it (Jackson's output): `1.0`, `955.0`, `1.0E-7`, `1.5E300`. */
export function javaDouble(x: number): string {
  if (Number.isNaN(x)) return "NaN";
  if (!Number.isFinite(x)) return x > 0 ? "Infinity" : "-Infinity";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const abs = Math.abs(x);
  if (abs >= 1e-3 && abs < 1e7) {
    const s = String(x);
    return s.includes(".") ? s : `${s}.0`;
  }
  const [mantissa, exp] = x.toExponential().split("e") as [string, string];
  const m = mantissa.includes(".") ? mantissa : `${mantissa}.0`;
  return `${m}E${Number(exp)}`;
}

/** JSON text as Jackson writes it: no spaces, doubles as Java prints them, `/` unescaped. */
export function writeJson(v: Json): string {
  if (v === null) return "null";
  if (typeof v === "bigint") return v.toString();
  if (typeof v === "number") return javaDouble(v);
  if (typeof v === "boolean") return String(v);
  if (typeof v === "string") return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(writeJson).join(",")}]`;
  return `{${[...v].map(([k, x]) => `${JSON.stringify(k)}:${writeJson(x)}`).join(",")}}`;
}
