import type { JsonPath } from "../core/canonical-json.js";
import { SegopsError } from "../core/errors.js";

/** One finding about a spec: where (`spec.ioConfig.dropExisting`) and what was found versus expected. */
export interface SpecIssue {
  readonly path: string;
  readonly message: string;
}

/** The outcome of pre-flight validation; `valid` is true exactly when `errors` is empty. */
export interface ValidationResult {
  readonly valid: boolean;
  readonly errors: readonly SpecIssue[];
  readonly warnings: readonly SpecIssue[];
}

/** A template that cannot be loaded or rendered (syntax, unknown placeholder, missing variable). Exit code 2. */
export class TemplateError extends SegopsError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super("Template", message, details);
  }
}

/** A spec that failed pre-flight validation; `details.errors` holds every {@link SpecIssue}. Exit code 2. */
export class InvalidSpecError extends SegopsError {
  readonly errors: readonly SpecIssue[];
  constructor(errors: readonly SpecIssue[], details: Record<string, unknown> = {}) {
    const first = errors[0];
    const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : "";
    super(
      "InvalidSpec",
      `invalid spec: ${first ? `${first.path}: ${first.message}` : "unknown problem"}${more}`,
      {
        ...details,
        errors,
      },
    );
    this.errors = errors;
  }
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `["spec", "dimensions", 0, "name"]` → `spec.dimensions[0].name`; odd keys as `["odd key"]`. */
export function formatPath(path: JsonPath): string {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else if (IDENT.test(seg)) out += out === "" ? seg : `.${seg}`;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out === "" ? "(root)" : out;
}

/** A short, bounded rendering of a found value for messages. */
export function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (Array.isArray(value))
    return value.length === 0 ? "an empty array" : `an array ${clip(JSON.stringify(value))}`;
  if (value === null) return "null";
  if (typeof value === "object") return `an object ${clip(JSON.stringify(value))}`;
  return `${typeof value} ${clip(JSON.stringify(value))}`;
}

function clip(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
