import type { JsonValue } from "../core/canonical-json.js";
import type { Interval } from "../core/interval.js";
import { deriveTaskId } from "../core/task-id.js";
import { formatPath, type SpecIssue, TemplateError } from "./issues.js";
import { renderSql, SQL_VOLATILE_PATHS, type SqlTaskBody, sqlTarget } from "./msq.js";
import { type LoadedTemplate, renderTemplate } from "./template.js";

/** The spec version used when none is given. */
export const DEFAULT_SPEC_VERSION = "1";

/** Options of {@link prepareSpec}. */
export interface PrepareOptions {
  /** The partition interval. */
  readonly interval: Interval;
  /** User variables (`{{var.NAME}}`). */
  readonly vars?: Readonly<Record<string, string>>;
  /** Changing it forces new task ids for unchanged specs. @default "1" */
  readonly specVersion?: string;
  /** Attempt number of the Druid task. @default 1 */
  readonly attempt?: number;
  /** Task id prefix. @default "segops" */
  readonly prefix?: string;
  /** Query context for SQL templates. */
  readonly sqlContext?: { [key: string]: JsonValue };
}

/** A template rendered for one partition and attempt, with its deterministic id pinned. */
export type Prepared =
  | {
      readonly kind: "task";
      readonly spec: { [key: string]: JsonValue };
      /** The Druid task id (equal to `spec.id`). */
      readonly taskId: string;
      readonly warnings: readonly SpecIssue[];
    }
  | {
      readonly kind: "sql";
      readonly body: SqlTaskBody;
      /** The Druid controller task id: `query-` + `context.sqlQueryId`. */
      readonly taskId: string;
      readonly warnings: readonly SpecIssue[];
    };

/**
 * Steps 1–2 of one ingestion (architecture: "render + validate", "derive id"): renders the template for
 * the partition, derives the id from the rendered spec (volatile fields excluded) and pins it.
 * Validation is separate ({@link validateSpec}, {@link validateSql}).
 */
export function prepareSpec(template: LoadedTemplate, options: PrepareOptions): Prepared {
  const specVersion = options.specVersion ?? DEFAULT_SPEC_VERSION;
  const idOptions = {
    interval: options.interval,
    specVersion,
    ...(options.attempt !== undefined ? { attempt: options.attempt } : {}),
    ...(options.prefix !== undefined ? { prefix: options.prefix } : {}),
  };
  const ctx = { interval: options.interval, ...(options.vars ? { vars: options.vars } : {}) };
  if (template.kind === "sql") {
    const draft = renderSql(template.text, {
      ...ctx,
      ...(options.sqlContext ? { context: options.sqlContext } : {}),
    });
    const id = deriveTaskId({
      ...idOptions,
      spec: draft.body,
      datasource: sqlTarget(draft.body.query) ?? "sql",
      volatilePaths: SQL_VOLATILE_PATHS,
    });
    const body = { query: draft.body.query, context: { ...draft.body.context, sqlQueryId: id } };
    return { kind: "sql", body, taskId: `query-${id}`, warnings: draft.warnings };
  }
  const draft = renderTemplate(template.value, ctx);
  checkDatasource(template.value, draft.spec, options.vars ?? {});
  const taskId = deriveTaskId({ ...idOptions, spec: draft.spec });
  const warnings = [...draft.warnings];
  if (typeof draft.spec.id === "string" && draft.spec.id !== taskId) {
    warnings.unshift({
      path: "id",
      message: `the template's id "${draft.spec.id}" is replaced by the derived id`,
    });
  }
  return { kind: "task", spec: { ...draft.spec, id: taskId }, taskId, warnings };
}

const DATASOURCE_PATHS = [["spec", "dataSchema", "dataSource"], ["dataSource"]] as const;

function at(value: JsonValue | undefined, path: readonly string[]): JsonValue | undefined {
  let v = value;
  for (const key of path) {
    if (v === null || typeof v !== "object" || Array.isArray(v) || !Object.hasOwn(v, key)) return undefined;
    v = v[key];
  }
  return v;
}

/**
 * An empty `--var` is legal (optional suffixes, empty filters), so an empty datasource is caught here,
 * where the variable that emptied it can still be named.
 */
function checkDatasource(
  template: { readonly [key: string]: JsonValue },
  spec: { [key: string]: JsonValue },
  vars: Readonly<Record<string, string>>,
): void {
  for (const path of DATASOURCE_PATHS) {
    const raw = at(template as { [key: string]: JsonValue }, path);
    if (at(spec, path) !== "" || typeof raw !== "string" || !raw.includes("{{")) continue;
    const empty = [...raw.matchAll(/\{\{\s*var\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g)]
      .map((m) => m[1] as string)
      .filter((name) => vars[name] === "");
    const why =
      empty.length === 0
        ? `its placeholders in ${JSON.stringify(raw)} render to nothing`
        : `${empty.map((n) => `--var ${n}`).join(", ")} ${empty.length === 1 ? "is" : "are"} empty`;
    throw new TemplateError(
      `${formatPath(path)}: the datasource renders empty because ${why}; pass a datasource name`,
      { path: formatPath(path), variables: empty },
    );
  }
}
