import { DateTime } from "luxon";
import YAML, { CST, Parser } from "yaml";
import { type JsonValue, MAX_NESTING_DEPTH, tooDeepAt } from "../core/canonical-json.js";
import {
  formatInstant,
  formatInterval,
  type Interval,
  parseInterval,
  sameInterval,
} from "../core/interval.js";
import { parseJsonText } from "../core/json-text.js";
import { describeValue, formatPath, type SpecIssue, TemplateError } from "./issues.js";

/**
 * Spec templates: plain JSON or YAML whose string values may contain placeholders. Rendering is data
 * substitution only — no expressions, no code, no type coercion — so a rendered spec is predictable
 * from the template by reading it.
 *
 * Placeholders (`{{ name }}`, spaces inside the braces allowed):
 * - `{{interval}}` → `2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z` (the partition interval)
 * - `{{start}}`, `{{end}}` → `2026-01-01T00:00:00.000Z` (in SQL templates: `2026-01-01 00:00:00`)
 * - `{{start:yyyy/MM/dd}}`, `{{end:yyyyMMdd'T'HH}}` → date parts in UTC (tokens: y M d H m s S o W k,
 *   literal text in single quotes)
 * - `{{var.NAME}}` → the user variable NAME (`--var NAME=value`); NAME is `[A-Za-z_][A-Za-z0-9_]*`
 * - `{{'{{'}}` → a quoted literal (how to write a literal `{{`)
 */

/** What a template renders against. */
export interface RenderContext {
  /** The partition interval. */
  readonly interval: Interval;
  /** User variables (`--var k=v`). */
  readonly vars?: Readonly<Record<string, string>>;
}

/** Options of {@link renderTemplate}. */
export interface RenderOptions extends RenderContext {
  /** Pins the task's top-level `id` (replacing any id in the template, with a warning). */
  readonly id?: string;
}

/** A rendered task spec and what the renderer noticed on the way (unused variables, replaced id). */
export interface Rendered {
  readonly spec: { [key: string]: JsonValue };
  readonly warnings: readonly SpecIssue[];
}

/** A loaded template file: a JSON/YAML task template, or an SQL (MSQ) template. */
export type LoadedTemplate =
  | { readonly kind: "task"; readonly value: { [key: string]: JsonValue } }
  | { readonly kind: "sql"; readonly text: string };

const VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Date-format letters with a fixed, locale-free meaning in luxon (and Joda, except `o`, `W`, `k`). */
const FORMAT_LETTERS = new Set(["y", "M", "d", "H", "m", "s", "S", "o", "W", "k"]);

/** Parses `--var` arguments (`NAME=value`, value may be empty and may contain `=`). */
export function parseVars(pairs: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    const name = eq < 0 ? pair : pair.slice(0, eq);
    if (eq < 0 || !VAR_NAME.test(name)) {
      throw new TemplateError(
        `invalid --var "${pair}": expected NAME=value with NAME made of letters, digits and _ (not starting with a digit)`,
        { var: pair },
      );
    }
    if (Object.hasOwn(out, name)) throw new TemplateError(`--var ${name} is given twice`, { var: name });
    out[name] = pair.slice(eq + 1);
  }
  return out;
}

/**
 * Parses template text. `.json` → JSON, `.yaml`/`.yml` → YAML, `.sql` → SQL; otherwise by content.
 * YAML uses the 1.2 core schema (no timestamps, `yes`/`on` stay strings), refuses custom tags and
 * duplicate keys, and must hold a single document.
 */
export function parseTemplateText(text: string, name = "template"): LoadedTemplate {
  const ext = /\.([A-Za-z]+)$/.exec(name)?.[1]?.toLowerCase();
  const trimmed = text.trimStart();
  const kind =
    ext === "json"
      ? "json"
      : ext === "yaml" || ext === "yml"
        ? "yaml"
        : ext === "sql"
          ? "sql"
          : /^(REPLACE|INSERT)\b/i.test(trimmed)
            ? "sql"
            : trimmed.startsWith("{")
              ? "json"
              : "yaml";
  if (kind === "sql") return { kind: "sql", text };
  let value: unknown;
  if (kind === "json") {
    try {
      value = parseJsonText(text, name);
    } catch (e) {
      // `name:line:column: what`, as compilers say it, so an editor can jump there.
      throw new TemplateError((e as Error).message, { file: name });
    }
  } else {
    // The YAML composer recurses per level: measure the depth on the (iterative) CST first.
    const deepYaml = yamlTooDeepAt(text);
    if (deepYaml) throw tooDeep(name, deepYaml);
    const doc = YAML.parseDocument(text, { schema: "core", uniqueKeys: true, prettyErrors: true });
    const problem = doc.errors[0] ?? doc.warnings[0];
    if (problem) {
      const line = problem.linePos?.[0];
      const where = line ? ` (line ${line.line}, column ${line.col})` : "";
      const first = problem.message.split("\n")[0] ?? problem.message;
      throw new TemplateError(`cannot parse ${name} as YAML${where}: ${first}`, { file: name });
    }
    try {
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (e) {
      // e.g. yaml's ReferenceError for alias expansion beyond maxAliasCount: still a bad template.
      throw new TemplateError(`cannot load ${name} as YAML: ${(e as Error).message}`, {
        file: name,
      });
    }
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new TemplateError(
      `${name} must hold a JSON/YAML object (a Druid task), found ${describeValue(value)}`,
      { file: name },
    );
  }
  // Bounded here, on load, so no later recursive walk (render, validate, hash) can overflow the stack.
  const deep = tooDeepAt(value, MAX_NESTING_DEPTH);
  if (deep) throw tooDeep(name, deep);
  return { kind: "task", value: value as { [key: string]: JsonValue } };
}

function tooDeep(name: string, path: readonly (string | number)[]): TemplateError {
  const where = formatPath(path);
  const shown = where.length > 120 ? `${where.slice(0, 80)}…${where.slice(-30)}` : where;
  return new TemplateError(
    `${name}: nesting deeper than ${MAX_NESTING_DEPTH} levels at ${shown} (${path.length + 1} levels deep there)`,
    { file: name, path: where, limit: MAX_NESTING_DEPTH },
  );
}

type CstToken = CST.Token;
type CstItem = { key?: CstToken | null; value?: CstToken };

/** The path of the first YAML collection nested deeper than the limit, walking the CST without recursion. */
function yamlTooDeepAt(text: string): (string | number)[] | null {
  const stack: Array<{ token: CstToken | null | undefined; path: (string | number)[] }> = [];
  for (const token of new Parser().parse(text)) stack.push({ token, path: [] });
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const { token, path } = next;
    if (!token) continue;
    if (token.type === "document") {
      stack.push({ token: token.value, path });
      continue;
    }
    if (token.type !== "block-map" && token.type !== "block-seq" && token.type !== "flow-collection")
      continue;
    if (path.length >= MAX_NESTING_DEPTH) return path;
    const isSeq =
      token.type === "block-seq" || (token.type === "flow-collection" && token.start.source === "[");
    const items = token.items as CstItem[];
    // Pushed last to first, so the first too-deep path in document order is found.
    for (let i = items.length - 1; i >= 0; i--) {
      const item = items[i] as CstItem;
      const seg = isSeq ? i : keyText(item.key);
      stack.push({ token: item.value, path: [...path, seg] });
      // A complex key (a collection used as a key) nests too.
      if (item.key && !isSeq) stack.push({ token: item.key, path: [...path, seg] });
    }
  }
  return null;
}

function keyText(key: CstToken | null | undefined): string {
  if (!key) return "";
  const scalar = CST.isScalar(key) ? CST.resolveAsScalar(key) : null;
  return scalar ? scalar.value : "?";
}

/** How `{{start}}`/`{{end}}` are written: ISO in JSON specs, SQL timestamp literals in SQL. */
export type Flavour = "json" | "sql";

function sqlTimestamp(ms: number): string {
  const iso = formatInstant(ms); // 2026-01-01T00:00:00.000Z
  const base = `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
  return iso.slice(20, 23) === "000" ? base : `${base}.${iso.slice(20, 23)}`;
}

function formatDate(ms: number, format: string, where: string): string {
  const unquoted = format.replace(/'[^']*'/g, "");
  for (const ch of unquoted) {
    if (/[A-Za-z]/.test(ch) && !FORMAT_LETTERS.has(ch)) {
      throw new TemplateError(
        `${where}: date format "${format}" uses "${ch}"; allowed letters are ${[...FORMAT_LETTERS].join(" ")} (quote literal text in '...')`,
        { path: where, format },
      );
    }
  }
  return DateTime.fromMillis(ms, { zone: "utc" }).toFormat(format);
}

/** Substitutes every placeholder in one string; `used` collects the variable names referenced. */
export function substitute(
  text: string,
  where: string,
  ctx: RenderContext,
  used: Set<string>,
  flavour: Flavour = "json",
): string {
  let out = "";
  let i = 0;
  for (;;) {
    const open = text.indexOf("{{", i);
    if (open < 0) return out + text.slice(i);
    const close = text.indexOf("}}", open + 2);
    if (close < 0) {
      throw new TemplateError(
        `${where}: unclosed placeholder "${text.slice(open, open + 40)}" (missing "}}")`,
        {
          path: where,
        },
      );
    }
    out += text.slice(i, open) + resolve(text.slice(open + 2, close).trim(), where, ctx, used, flavour);
    i = close + 2;
  }
}

function resolve(
  body: string,
  where: string,
  ctx: RenderContext,
  used: Set<string>,
  flavour: Flavour,
): string {
  const { interval } = ctx;
  if (body === "interval") return formatInterval(interval);
  if (body === "start" || body === "end") {
    const ms = body === "start" ? interval.start : interval.end;
    return flavour === "sql" ? sqlTimestamp(ms) : formatInstant(ms);
  }
  const dated = /^(start|end):(.+)$/s.exec(body);
  if (dated) {
    const ms = dated[1] === "start" ? interval.start : interval.end;
    return formatDate(ms, dated[2] as string, where);
  }
  const quoted = /^'([^']*)'$|^"([^"]*)"$/.exec(body);
  if (quoted) return quoted[1] ?? quoted[2] ?? "";
  const v = /^var\.(.*)$/s.exec(body);
  if (v) {
    const name = v[1] as string;
    if (!VAR_NAME.test(name)) {
      throw new TemplateError(`${where}: invalid variable name in {{${body}}}`, {
        path: where,
        placeholder: body,
      });
    }
    used.add(name);
    const vars = ctx.vars ?? {};
    if (!Object.hasOwn(vars, name)) {
      throw new TemplateError(`${where}: missing variable {{var.${name}}}: pass --var ${name}=VALUE`, {
        path: where,
        variable: name,
      });
    }
    return vars[name] as string;
  }
  throw new TemplateError(
    `${where}: unknown placeholder {{${body}}}; known: {{interval}}, {{start}}, {{end}}, {{start:FORMAT}}, {{end:FORMAT}}, {{var.NAME}}`,
    { path: where, placeholder: body },
  );
}

/** True when any string (or key) in the value contains `{{`. */
export function hasPlaceholders(value: unknown): boolean {
  if (typeof value === "string") return value.includes("{{");
  if (Array.isArray(value)) return value.some(hasPlaceholders);
  if (value && typeof value === "object") {
    return Object.entries(value).some(([k, v]) => k.includes("{{") || hasPlaceholders(v));
  }
  return false;
}

/**
 * The template with its placeholders substituted. `path` is one stack pushed and popped on the way down,
 * formatted only for a string that has a placeholder: rendering runs once per partition (100,000 for a
 * long backfill), and copying the path at every node and formatting it at every string was most of it.
 */
function walk(value: JsonValue, path: (string | number)[], ctx: RenderContext, used: Set<string>): JsonValue {
  if (typeof value === "string")
    return value.includes("{{") ? substitute(value, formatPath(path), ctx, used) : value;
  if (Array.isArray(value)) {
    const out: JsonValue[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      out[i] = walk(value[i] as JsonValue, path, ctx, used);
      path.pop();
    }
    return out;
  }
  if (value && typeof value === "object") {
    const out: { [key: string]: JsonValue } = {};
    for (const k of Object.keys(value)) {
      path.push(k);
      if (k.includes("{{")) {
        const where = formatPath(path);
        throw new TemplateError(`${where}: placeholders are substituted in values only, not in keys`, {
          path: where,
        });
      }
      const v = walk(value[k] as JsonValue, path, ctx, used);
      path.pop();
      // A key "__proto__" (JSON.parse makes it an own property) must stay one, not set the prototype.
      if (k === "__proto__")
        Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
      else out[k] = v;
    }
    return out;
  }
  return value;
}

function obj(v: JsonValue | undefined): { [key: string]: JsonValue } | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? v : undefined;
}

function sameIntervalText(text: JsonValue | undefined, interval: Interval): boolean {
  if (typeof text !== "string") return false;
  try {
    return sameInterval(parseInterval(text), interval);
  } catch {
    return false;
  }
}

/** `details.rule` of the errors about where a task's interval is declared (see {@link renderTemplate}). */
export const INTERVAL_RULE = "partition-interval";

/**
 * Injects the partition interval where the task type reads it: `spec.dataSchema.granularitySpec.intervals`
 * for `index_parallel`/`index`, `ioConfig.inputSpec` for `compact`. A template that already names a
 * different interval is an error — a task must never touch time outside its partition.
 */
function injectInterval(spec: { [key: string]: JsonValue }, interval: Interval): void {
  const text = formatInterval(interval);
  if (spec.type === "compact") {
    if (spec.interval !== undefined && !sameIntervalText(spec.interval, interval)) {
      throw new TemplateError(
        `interval: the template sets ${JSON.stringify(spec.interval)}, but the partition is ${text}; remove it or use "{{interval}}"`,
        { path: "interval", rule: INTERVAL_RULE },
      );
    }
    const io = obj(spec.ioConfig) ?? { type: "compact" };
    const inputSpec = obj(io.inputSpec);
    if (inputSpec && inputSpec.interval !== undefined && !sameIntervalText(inputSpec.interval, interval)) {
      throw new TemplateError(
        `ioConfig.inputSpec.interval: the template sets ${JSON.stringify(inputSpec.interval)}, but the partition is ${text}; remove it or use "{{interval}}"`,
        { path: "ioConfig.inputSpec.interval", rule: INTERVAL_RULE },
      );
    }
    if (inputSpec && inputSpec.type !== undefined && inputSpec.type !== "interval") {
      throw new TemplateError(
        `ioConfig.inputSpec.type: segops compacts by interval, found ${JSON.stringify(inputSpec.type)}`,
        { path: "ioConfig.inputSpec.type", rule: INTERVAL_RULE },
      );
    }
    io.inputSpec = { ...(inputSpec ?? {}), type: "interval", interval: text };
    spec.ioConfig = io;
    // CompactionTask takes exactly one of ioConfig, interval and segments (Checks.checkOneNotNullOrEmpty):
    // the deprecated top-level interval (equal to the partition, checked above) is superseded by ioConfig.
    delete spec.interval;
    return;
  }
  const schema = obj(obj(spec.spec)?.dataSchema);
  if (!schema) {
    throw new TemplateError(
      "spec.dataSchema: cannot inject the partition interval: the template has no spec.dataSchema object (expected an index_parallel, index or compact task)",
      { path: "spec.dataSchema", rule: INTERVAL_RULE },
    );
  }
  if (schema.granularitySpec !== undefined && !obj(schema.granularitySpec)) {
    throw new TemplateError(
      `spec.dataSchema.granularitySpec: expected an object, found ${JSON.stringify(schema.granularitySpec)}`,
      { path: "spec.dataSchema.granularitySpec", rule: INTERVAL_RULE },
    );
  }
  const g = obj(schema.granularitySpec) ?? {};
  const existing = g.intervals;
  if (existing !== undefined && existing !== null) {
    const ok = Array.isArray(existing) && existing.length === 1 && sameIntervalText(existing[0], interval);
    if (!ok) {
      throw new TemplateError(
        `spec.dataSchema.granularitySpec.intervals: the template sets ${JSON.stringify(existing)}, but the partition is ${text}; remove intervals (segops injects them) or use ["{{interval}}"]`,
        { path: "spec.dataSchema.granularitySpec.intervals", rule: INTERVAL_RULE },
      );
    }
  }
  g.intervals = [text];
  schema.granularitySpec = g;
}

/**
 * Renders a task template for one partition: substitutes placeholders, injects the partition interval
 * and pins `id` when given. Throws {@link TemplateError} naming the JSON path of the first problem.
 */
export function renderTemplate(
  template: { readonly [key: string]: JsonValue },
  options: RenderOptions,
): Rendered {
  const used = new Set<string>();
  const spec = walk(template as { [key: string]: JsonValue }, [], options, used) as {
    [key: string]: JsonValue;
  };
  injectInterval(spec, options.interval);
  const warnings: SpecIssue[] = [];
  if (options.id !== undefined) {
    if (typeof spec.id === "string" && spec.id !== options.id) {
      warnings.push({ path: "id", message: `the template's id "${spec.id}" is replaced by the derived id` });
    }
    spec.id = options.id;
  }
  for (const name of Object.keys(options.vars ?? {})) {
    if (!used.has(name))
      warnings.push({ path: `var.${name}`, message: `--var ${name} is not used by the template` });
  }
  return { spec, warnings };
}
