import { z } from "zod";
import { PROBLEMS, Problem } from "./problems.js";
import type { ResponseSpec, RouteSpec } from "./routes.js";

/**
 * The OpenAPI 3.1 document, generated from the route table and its zod schemas (OpenAPI 3.1 schemas
 * are JSON Schema 2020-12, which `z.toJSONSchema` writes), so what is described is what is validated.
 */

type Json = Record<string, unknown>;

const LOCAL_DEF = /^#\/\$defs\/(.+)$/;
const ANONYMOUS_DEF = /^__schema\d+$/;

/** Every `$ref` in a JSON Schema rewritten by `to` (undefined: kept). */
function rewriteRefs(value: unknown, to: (ref: string) => string | undefined): unknown {
  if (Array.isArray(value)) return value.map((v) => rewriteRefs(v, to));
  if (value === null || typeof value !== "object") return value;
  const out: Json = {};
  for (const [key, v] of Object.entries(value)) {
    out[key] = key === "$ref" && typeof v === "string" ? (to(v) ?? v) : rewriteRefs(v, to);
  }
  return out;
}

function refsIn(value: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const v of value) refsIn(v, found);
  else if (value !== null && typeof value === "object")
    for (const [key, v] of Object.entries(value)) {
      if (key === "$ref" && typeof v === "string") found.add(v);
      else refsIn(v, found);
    }
  return found;
}

/**
 * The document's shared schemas. `z.toJSONSchema` writes a recursive schema (`z.json()`) as a `$defs`
 * entry referred to as `#/$defs/…` (or the whole schema as `#`), which inside an OpenAPI document points at
 * the document's root, where there is no such thing: every definition moves to `components/schemas` and
 * its references follow it. The same definition (e.g. any JSON value) is one component, however many
 * schemas use it.
 */
class Components {
  readonly schemas: Record<string, Json> = {};
  /** Self-contained definition (its own references as `#`) → component name. */
  private readonly names = new Map<string, string>();
  private readonly jsonValue = JSON.stringify(this.convert(z.json(), "output", false));

  schemaOf(schema: z.ZodType, io: "input" | "output"): Json {
    return this.convert(schema, io, true);
  }

  private convert(schema: z.ZodType, io: "input" | "output", hoist: boolean): Json {
    const out = z.toJSONSchema(schema, { target: "draft-2020-12", io, unrepresentable: "any" }) as Json;
    delete out.$schema;
    if (!hoist) return out;
    const defs = { ...((out.$defs as Record<string, Json> | undefined) ?? {}) };
    delete out.$defs;
    let root: Json = out;
    if (refsIn(out).has("#")) {
      // The schema refers to itself as a whole: it becomes a definition too.
      defs["#"] = out;
      root = { $ref: "#" };
    }
    const local = (ref: string) => (ref === "#" ? "#" : LOCAL_DEF.exec(ref)?.[1]);
    const renamed = new Map<string, string>();
    const fresh: string[] = [];
    for (const [name, def] of Object.entries(defs)) {
      const others = [...refsIn(def)].map(local).filter((n) => n !== undefined && n !== name);
      // Alone (no reference to another local definition), a definition is the same wherever it comes from.
      const key =
        others.length === 0
          ? JSON.stringify(rewriteRefs(def, (ref) => (local(ref) === name ? "#" : undefined)))
          : undefined;
      const known = key === undefined ? undefined : this.names.get(key);
      if (known !== undefined) {
        renamed.set(name, known);
        continue;
      }
      // A definition named by `.meta({ id })` keeps its name; zod's own (`__schema0`) get one here.
      const wanted =
        key === this.jsonValue ? "JsonValue" : ANONYMOUS_DEF.test(name) || name === "#" ? "Schema" : name;
      let unique = wanted;
      for (let i = 2; unique in this.schemas || unique === "Schema"; i++) unique = `${wanted}${i}`;
      this.schemas[unique] = {};
      renamed.set(name, unique);
      fresh.push(name);
      if (key !== undefined) this.names.set(key, unique);
    }
    const to = (ref: string) => {
      const name = local(ref);
      const target = name === undefined ? undefined : renamed.get(name);
      return target === undefined ? undefined : `#/components/schemas/${target}`;
    };
    for (const name of fresh) this.schemas[renamed.get(name) as string] = rewriteRefs(defs[name], to) as Json;
    return rewriteRefs(root, to) as Json;
  }
}

function parameters(route: RouteSpec, components: Components): Json[] {
  const out: Json[] = [];
  const add = (where: "path" | "query", object: z.ZodObject | undefined) => {
    if (!object) return;
    for (const [name, field] of Object.entries(object.shape)) {
      const optional = (field as z.ZodType).safeParse(undefined).success;
      const description = (field as z.ZodType).description;
      out.push({
        name,
        in: where,
        required: where === "path" || !optional,
        schema: components.schemaOf(field as z.ZodType, "input"),
        ...(description ? { description } : {}),
      });
    }
  };
  add("path", route.params);
  add("query", route.query);
  for (const h of route.headers ?? [])
    out.push({
      name: h.name,
      in: "header",
      required: false,
      description: h.description,
      schema: components.schemaOf(h.schema, "input"),
    });
  return out;
}

/**
 * One server-sent event (OpenAPI 3.1 describes a `text/event-stream` by its events, 3.2's `itemSchema`):
 * its type, its id (the last one sent carries on when an event has none) and its data, JSON text whose
 * schema is `contentSchema`.
 */
function streamEvent(events: NonNullable<ResponseSpec["events"]>, components: Components): Json {
  return {
    oneOf: Object.entries(events).map(([name, { schema, id }]) => ({
      type: "object",
      properties: {
        event: { const: name },
        id: { type: "string", pattern: "^[0-9]+$" },
        data: {
          type: "string",
          contentMediaType: "application/json",
          contentSchema: components.schemaOf(schema, "output"),
        },
      },
      required: ["event", "data", ...(id ? ["id"] : [])],
    })),
  };
}

function problemStatusName(status: number): string {
  const kinds = Object.entries(PROBLEMS)
    .filter(([, [s]]) => s === status)
    .map(([, [, title]]) => title);
  return kinds.join("; ") || "Problem";
}

/** `auth`: the service checks a bearer token (then the routes that need one say so). */
export function openApiDocument(
  routes: readonly RouteSpec[],
  options: { version: string; auth: boolean },
): Json {
  const { version } = options;
  const components = new Components();
  components.schemas.Problem = components.schemaOf(Problem, "output");
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const responses: Json = {};
    for (const [status, r] of Object.entries(route.responses)) {
      const schema = r.events
        ? streamEvent(r.events, components)
        : r.schema
          ? components.schemaOf(r.schema, "output")
          : undefined;
      responses[status] = {
        description: r.description,
        ...(schema ? { content: { [r.contentType ?? "application/json"]: { schema } } } : {}),
      };
    }
    for (const status of route.problems) {
      responses[String(status)] = {
        description: problemStatusName(status),
        content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
      };
    }
    // Any request may be too large for the HTTP parser (a URL or headers over 16 KiB).
    responses["431"] = {
      description: problemStatusName(431),
      content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
    };
    // Every route can fail unexpectedly; the body is still a problem, never a stack trace.
    responses["500"] = {
      description: "Internal error",
      content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
    };
    const operation: Json = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [...route.tags],
      parameters: parameters(route, components),
      responses,
      security: route.auth && options.auth ? [{ bearer: [] }] : [],
    };
    if (route.body) {
      operation.requestBody = {
        required: route.bodyOptional !== true,
        content: { "application/json": { schema: components.schemaOf(route.body, "input") } },
      };
    }
    paths[route.path] = { ...(paths[route.path] ?? {}), [route.method]: operation };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "segops",
      version,
      description:
        "Segment Ops for Apache Druid: idempotent ingestion and backfills, long-poll waits, dead letters and the version audit.",
    },
    servers: [{ url: "/" }],
    paths,
    components: {
      schemas: components.schemas,
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description: "The token in the file `segops serve --api-token-file` names",
        },
      },
    },
  };
}
