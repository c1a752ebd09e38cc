import type { JsonValue } from "../core/canonical-json.js";

type JsonObject = { [key: string]: JsonValue };

/**
 * The external inputs an SQL ingestion reads: every `EXTERN(...)` call's input source and input format
 * (Druid's "SQL-based ingestion reference", `EXTERN`): positional (`EXTERN('<inputSource>', '<inputFormat>'
 * [, '<signature>'])`) or named (`EXTERN(inputSource => '…', inputFormat => '…', …)`). Each argument is an SQL
 * string literal holding JSON ('' escapes a quote). Calls whose arguments are not such literals (query
 * parameters, or text segops cannot read) are left out: nothing here is a validation.
 */
export interface ExternInput {
  inputSource: JsonObject;
  inputFormat: JsonObject;
}

/** Reads an SQL string literal at `i` (pointing at its opening quote): its text and the index after it. */
function literal(sql: string, i: number): { text: string; end: number } | null {
  if (sql[i] !== "'") return null;
  let text = "";
  let j = i + 1;
  for (;;) {
    const q = sql.indexOf("'", j);
    if (q < 0) return null;
    text += sql.slice(j, q);
    if (sql[q + 1] === "'") {
      text += "'";
      j = q + 2;
      continue;
    }
    return { text, end: q + 1 };
  }
}

function skipSpace(sql: string, i: number): number {
  let j = i;
  while (j < sql.length && /\s/.test(sql[j] as string)) j++;
  return j;
}

function jsonObject(text: string): JsonObject | null {
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === "object" && !Array.isArray(value) ? (value as JsonObject) : null;
  } catch {
    return null;
  }
}

/** The arguments of the call whose `(` is at `open`: positional literals, or named ones by lower-cased name. */
function callArguments(
  sql: string,
  open: number,
): { positional: string[]; named: Map<string, string> } | null {
  const positional: string[] = [];
  const named = new Map<string, string>();
  let i = skipSpace(sql, open + 1);
  for (;;) {
    let name: string | null = null;
    const m = /^([A-Za-z_][A-Za-z0-9_]*)\s*=>\s*/.exec(sql.slice(i, i + 200));
    if (m) {
      name = (m[1] as string).toLowerCase();
      i += m[0].length;
    }
    const lit = literal(sql, i);
    if (!lit) return null;
    if (name) named.set(name, lit.text);
    else positional.push(lit.text);
    i = skipSpace(sql, lit.end);
    if (sql[i] === ",") {
      i = skipSpace(sql, i + 1);
      continue;
    }
    return sql[i] === ")" ? { positional, named } : null;
  }
}

/** Every readable `EXTERN` input of `sql`, in order. */
export function externInputs(sql: string): ExternInput[] {
  const out: ExternInput[] = [];
  const re = /\bEXTERN\s*\(/gi;
  for (let m = re.exec(sql); m !== null; m = re.exec(sql)) {
    const args = callArguments(sql, m.index + m[0].length - 1);
    if (!args) continue;
    const source = args.named.get("inputsource") ?? args.positional[0];
    const format = args.named.get("inputformat") ?? args.positional[1];
    const inputSource = source !== undefined ? jsonObject(source) : null;
    const inputFormat = format !== undefined ? jsonObject(format) : null;
    if (inputSource && inputFormat) out.push({ inputSource, inputFormat });
  }
  return out;
}

/** Each `EXTERN` call's literal arguments, in order (`index` counts calls), or null for a call whose arguments are not all string literals. */
export function externArguments(
  sql: string,
): ({ index: number; positional: string[]; named: Map<string, string> } | null)[] {
  const out: ({ index: number; positional: string[]; named: Map<string, string> } | null)[] = [];
  const re = /\bEXTERN\s*\(/gi;
  for (let m = re.exec(sql); m !== null; m = re.exec(sql)) {
    const args = callArguments(sql, m.index + m[0].length - 1);
    out.push(args ? { index: out.length, ...args } : null);
  }
  return out;
}
