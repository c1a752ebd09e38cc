import type { Interval } from "../core/interval.js";
import { TaskIdError } from "../core/task-id.js";
import type { SpecIssue, ValidationResult } from "./issues.js";
import { TemplateError } from "./issues.js";
import { validateSql } from "./msq.js";
import { prepareSpec } from "./prepare.js";
import type { RuleScope } from "./rules.js";
import { hasPlaceholders, INTERVAL_RULE, type LoadedTemplate, renderTemplate } from "./template.js";
import { templateLints } from "./template-lints.js";
import { validateSpec } from "./validate.js";

/** Options of {@link validateTemplate}. */
export interface ValidateTemplateOptions {
  /** The partition to render the template for; required when the template has placeholders. */
  readonly interval?: Interval;
  /** User variables (`{{var.NAME}}`). */
  readonly vars?: Readonly<Record<string, string>>;
  /** Which rules run (see {@link validateSpec}). */
  readonly rules?: RuleScope;
  /** The target cluster's Druid release (see {@link validateSpec}; default 33). */
  readonly druidVersion?: number;
}

const DATASOURCE_PATHS = new Set(["spec.dataSchema.dataSource", "dataSource"]);

/**
 * What `segops validate` reports for a template or finished spec: rendered like a real run would (same
 * interval injection and id pinning), then validated; every problem found comes back in the result. Problems
 * of the spec found while preparing it — the template's own interval differs from the partition, or no task
 * id can be derived because the datasource is missing or renders empty — are reported as errors with their
 * path, together with everything else validation finds in the rendered spec, instead of stopping at the first.
 * Throws only for problems that are not the spec's: a template with placeholders but no interval, an unknown
 * placeholder or a missing variable ({@link TemplateError}).
 */
export function validateTemplate(
  template: LoadedTemplate,
  options: ValidateTemplateOptions = {},
): ValidationResult {
  const result = validateRendered(template, options);
  if ((options.rules ?? "all") !== "all") return result;
  // segops' own promises (template-lints.ts): SETs over what it pins, the clock read in a template.
  const lints = templateLints(template);
  if (lints.errors.length === 0 && lints.warnings.length === 0) return result;
  const errors = [...lints.errors, ...result.errors];
  return { valid: errors.length === 0, errors, warnings: [...lints.warnings, ...result.warnings] };
}

function validateRendered(template: LoadedTemplate, options: ValidateTemplateOptions): ValidationResult {
  const { interval, rules, druidVersion } = options;
  const vars = options.vars ?? {};
  const scope = {
    ...(rules !== undefined ? { rules } : {}),
    ...(druidVersion !== undefined ? { druidVersion } : {}),
  };
  if (interval === undefined) {
    const placeholders =
      template.kind === "sql" ? template.text.includes("{{") : hasPlaceholders(template.value);
    if (placeholders)
      throw new TemplateError("the template has placeholders: pass --interval to render it first");
    return template.kind === "sql" ? validateSql(template.text, scope) : validateSpec(template.value, scope);
  }
  try {
    const prepared = prepareSpec(template, { interval, vars });
    const result =
      prepared.kind === "sql"
        ? validateSql(prepared.body.query, { partition: interval, ...scope })
        : validateSpec(prepared.spec, { partition: interval, ...scope });
    return { ...result, warnings: [...prepared.warnings, ...result.warnings] };
  } catch (e) {
    const path = e instanceof TemplateError ? e.details.path : undefined;
    if (e instanceof TemplateError && e.details.rule === INTERVAL_RULE && typeof path === "string") {
      // The template names another interval: nothing can be rendered for this partition.
      const message = e.message.startsWith(`${path}: `) ? e.message.slice(path.length + 2) : e.message;
      return { valid: false, errors: [{ path, message }], warnings: [] };
    }
    const datasourceProblem =
      e instanceof TaskIdError || (e instanceof TemplateError && DATASOURCE_PATHS.has(String(path)));
    if (template.kind === "sql" || !datasourceProblem) throw e;
    // No id can be derived: validate the rendered spec without one, and say why there is no id.
    const rendered = renderTemplate(template.value, { interval, vars });
    const result = validateSpec(rendered.spec, { partition: interval, ...scope });
    const where = typeof path === "string" ? path : "id";
    // The template's explanation (which variable emptied the datasource) replaces validation's own.
    const errors: SpecIssue[] = result.errors.filter((x) => x.path !== where);
    if (typeof path === "string" || !errors.some((x) => DATASOURCE_PATHS.has(x.path))) {
      const text = (e as Error).message;
      errors.unshift({
        path: where,
        message: text.startsWith(`${where}: `) ? text.slice(where.length + 2) : text,
      });
    }
    return { valid: false, errors, warnings: [...rendered.warnings, ...result.warnings] };
  }
}
