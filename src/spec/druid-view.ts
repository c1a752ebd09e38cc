import type { z } from "zod";
import { describeValue, formatPath, type SpecIssue } from "./issues.js";
import { DEFAULT_DRUID_VERSION } from "./rule-context.js";
import { DIMENSION_TYPES } from "./schema.js";

const KNOWN_DIMENSION_TYPES: ReadonlySet<string> = new Set(DIMENSION_TYPES);

/**
 * A task as Druid's deserialisation reads it, so that validation refuses only what Druid refuses. Druid reads
 * a task with Jackson into `@JsonCreator` constructors (`DefaultObjectMapper`: unknown properties ignored,
 * Jackson's default scalar coercion on):
 *
 * - **null is absent.** Every optional field of Druid's creators is `@Nullable` and replaced by its default
 *   (`"queryGranularity": null` → NONE, `"context": null` → no context, `"metricsSpec": null` → none, …), so an
 *   object member whose value is null is dropped. Nulls inside arrays are kept (Druid sees a null element).
 * - **Scalars are coerced** (Jackson `MapperFeature.ALLOW_COERCION_OF_SCALARS`, on by default): `"false"` for a
 *   boolean, `"0"` for a number, `1` for a boolean, `5` for a string, `1.5` for an integer (truncated,
 *   `ACCEPT_FLOAT_AS_INT`), and `""` for a number or boolean (read as null). Druid's own test harness submits
 *   such specs; each coercion is accepted and reported as a warning with its path.
 * - **Default implementations** of polymorphic fields without `type`: a dimension object is a string
 *   dimension (`DimensionSchema`'s `defaultImpl`), a granularitySpec is uniform (`GranularitySpec`), a
 *   partitionsSpec is hashed (`PartitionsSpec`'s `defaultImpl`, reported as a warning: rarely what was meant).
 *
 * The view is only read; the spec submitted to Druid is the one the user wrote.
 */

type Obj = Record<string, unknown>;
type Path = (string | number)[];

export interface DruidView {
  /** The task as Druid reads it. */
  readonly task: Obj;
  /** Coercions and defaults worth telling (with the path of the value as written). */
  readonly warnings: SpecIssue[];
}

function obj(v: unknown): Obj | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : undefined;
}

/** A deep copy without object members whose value is null. */
export function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  const o = obj(value);
  if (!o) return value;
  const out: Obj = {};
  for (const [k, v] of Object.entries(o)) {
    if (v === null) continue;
    // defineProperty: a key such as "__proto__" stays an own member, as JSON.parse made it.
    Object.defineProperty(out, k, {
      value: withoutNulls(v),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** Druid's default implementations of type-less polymorphic objects (see the module comment). */
function applyDefaults(task: Obj, warnings: SpecIssue[], druidVersion: number): void {
  const setType = (o: Obj | undefined, type: string) => {
    if (o && o.type === undefined) o.type = type;
  };
  const dims = (spec: unknown, base: string) => {
    const list = obj(spec)?.dimensions;
    (Array.isArray(list) ? list : []).forEach((d, i) => {
      const o = obj(d);
      setType(o, "string");
      // Before Druid 35 (apache/druid #18565) an unknown dimension type falls back to DimensionSchema's default
      // implementation, a string dimension: "LONG" or "int" silently makes a string column.
      if (o && typeof o.type === "string" && !KNOWN_DIMENSION_TYPES.has(o.type) && druidVersion < 35) {
        warnings.push({
          path: `${base}.dimensions[${i}].type`,
          message: `Druid ${druidVersion} does not know dimension type ${JSON.stringify(o.type)} (type names are case-sensitive) and reads the column as a string dimension; Druid 35 and later refuse it. Write one of ${DIMENSION_TYPES.map((t) => JSON.stringify(t)).join(", ")}`,
        });
        o.type = "string";
      }
    });
  };
  const partitions = (tuning: unknown, base: string) => {
    const ps = obj(obj(tuning)?.partitionsSpec);
    if (ps && ps.type === undefined) {
      ps.type = "hashed";
      warnings.push({
        path: `${base}.partitionsSpec.type`,
        message:
          'missing: Druid reads a partitionsSpec without type as "hashed" (PartitionsSpec\'s default implementation), which needs forceGuaranteedRollup: true; write the type',
      });
    }
  };
  if (task.type === "compact") {
    dims(task.dimensionsSpec, "dimensionsSpec");
    dims(task.dimensions, "dimensions");
    partitions(task.tuningConfig, "tuningConfig");
    return;
  }
  const spec = obj(task.spec);
  const schema = obj(spec?.dataSchema);
  dims(schema?.dimensionsSpec, "spec.dataSchema.dimensionsSpec");
  setType(obj(schema?.granularitySpec), "uniform");
  partitions(spec?.tuningConfig, "spec.tuningConfig");
}

interface Fix {
  readonly path: Path;
  readonly value: unknown;
  readonly message: string;
}

const TRUE = new Set(["true", "True", "TRUE"]);
const FALSE = new Set(["false", "False", "FALSE"]);

function show(v: unknown): string {
  return v === undefined ? "null (absent)" : JSON.stringify(v);
}

/** Jackson's coercion of one scalar to the expected type, or undefined when Jackson refuses it too. */
function coerceScalar(expected: string, input: unknown, path: Path): Fix | undefined {
  const done = (value: unknown, how = "reads it as"): Fix => ({
    path,
    value,
    message: `found ${describeValue(input)}: Druid's JSON mapper (Jackson) ${how} ${show(value)}; write ${value === undefined ? "nothing (or remove the field)" : show(value)}`,
  });
  const blank = typeof input === "string" && input.trim() === "";
  if (expected === "boolean") {
    if (typeof input === "string" && TRUE.has(input.trim())) return done(true);
    if (typeof input === "string" && FALSE.has(input.trim())) return done(false);
    if (typeof input === "number" && Number.isInteger(input)) return done(input !== 0);
    if (blank) return done(undefined);
    return undefined;
  }
  if (expected === "number") {
    if (typeof input === "string" && /^[+-]?\d+$/.test(input.trim())) return done(Number(input.trim()));
    if (blank) return done(undefined);
    return undefined;
  }
  if (expected === "int") {
    if (typeof input === "number" && Number.isFinite(input))
      return done(Math.trunc(input), "truncates it to");
    return undefined;
  }
  if (expected === "string") {
    if (typeof input === "number" || typeof input === "boolean") return done(String(input));
    return undefined;
  }
  return undefined;
}

type Issue = z.core.$ZodIssue;

/** The union branch that matches the value's kind (e.g. the object form of a dimension). */
export function fittingBranch(branches: readonly (readonly Issue[])[]): readonly Issue[] | undefined {
  return branches.find((b) => !b.some((i) => i.code === "invalid_type" && i.path.length === 0));
}

function collectFixes(issues: readonly Issue[], prefix: Path, out: Fix[]): void {
  for (const issue of issues) {
    const path = [...prefix, ...issue.path.map((p) => (typeof p === "number" ? p : String(p)))];
    if (issue.code === "invalid_type") {
      const fix = coerceScalar(issue.expected, (issue as { input?: unknown }).input, path);
      if (fix) out.push(fix);
    } else if (issue.code === "invalid_union" && issue.errors.length > 0) {
      const fits = fittingBranch(issue.errors);
      if (fits) collectFixes(fits, path, out);
    }
  }
}

function setAt(root: Obj, path: Path, value: unknown): void {
  let node: unknown = root;
  for (const seg of path.slice(0, -1)) node = (node as Record<string | number, unknown>)[seg];
  const last = path[path.length - 1] as string | number;
  const parent = node as Record<string | number, unknown>;
  if (value === undefined && !Array.isArray(parent)) delete parent[last];
  else parent[last] = value;
}

/**
 * Reads a task the way Druid does (see the module comment) against its structural schema: the schema's type
 * mismatches that Jackson would coerce are coerced in the view, each with a warning.
 */
export function readAsDruid(task: Obj, schema: z.ZodType, druidVersion = DEFAULT_DRUID_VERSION): DruidView {
  const view = withoutNulls(task) as Obj;
  const warnings: SpecIssue[] = [];
  applyDefaults(view, warnings, druidVersion);
  const fixed = new Set<string>();
  // Each pass coerces every mismatch the schema reports; a coerced value can reveal another (a string "1.5"
  // for an integer is refused by Jackson, so it is not coerced twice: one fix per path).
  for (let pass = 0; pass < 8; pass++) {
    const parsed = schema.safeParse(view, { reportInput: true });
    if (parsed.success) break;
    const fixes: Fix[] = [];
    collectFixes(parsed.error.issues, [], fixes);
    const fresh = fixes.filter((f) => !fixed.has(JSON.stringify(f.path)));
    if (fresh.length === 0) break;
    for (const f of fresh) {
      fixed.add(JSON.stringify(f.path));
      setAt(view, f.path, f.value);
      warnings.push({ path: formatPath(f.path), message: f.message });
    }
  }
  return { task: view, warnings };
}
