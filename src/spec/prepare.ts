import type { JsonValue } from "../core/canonical-json.js";
import type { Interval } from "../core/interval.js";
import { deriveTaskId } from "../core/task-id.js";
import type { SpecIssue } from "./issues.js";
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
