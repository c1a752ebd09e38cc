import { z } from "zod";
import { PROBLEMS, Problem } from "./problems.js";
import type { RouteSpec } from "./routes.js";

/**
 * The OpenAPI 3.1 document, generated from the route table and its zod schemas (OpenAPI 3.1 schemas
 * are JSON Schema 2020-12, which `z.toJSONSchema` writes), so what is described is what is validated.
 */

type Json = Record<string, unknown>;

function schemaOf(schema: z.ZodType, io: "input" | "output"): Json {
  const out = z.toJSONSchema(schema, { target: "draft-2020-12", io, unrepresentable: "any" }) as Json;
  delete out.$schema;
  return out;
}

function parameters(route: RouteSpec): Json[] {
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
        schema: schemaOf(field as z.ZodType, "input"),
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
      schema: schemaOf(h.schema, "input"),
    });
  return out;
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
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const responses: Json = {};
    for (const [status, r] of Object.entries(route.responses)) {
      responses[status] = {
        description: r.description,
        ...(r.schema
          ? { content: { [r.contentType ?? "application/json"]: { schema: schemaOf(r.schema, "output") } } }
          : {}),
      };
    }
    for (const status of route.problems) {
      responses[String(status)] = {
        description: problemStatusName(status),
        content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
      };
    }
    // Every route can fail unexpectedly; the body is still a problem, never a stack trace.
    responses["500"] = {
      description: "Internal error",
      content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
    };
    const operation: Json = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [...route.tags],
      parameters: parameters(route),
      responses,
      security: route.auth && options.auth ? [{ bearer: [] }] : [],
    };
    if (route.body) {
      operation.requestBody = {
        required: route.bodyOptional !== true,
        content: { "application/json": { schema: schemaOf(route.body, "input") } },
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
      schemas: { Problem: schemaOf(Problem, "output") },
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
