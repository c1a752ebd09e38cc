import type { Context } from "hono";
import type { z } from "zod";

/**
 * One table of the API's routes: the app registers its handlers from it and the OpenAPI document is
 * generated from it, so a route cannot exist without being described (or the other way round).
 */

export interface ResponseSpec {
  readonly description: string;
  /** JSON body schema (problem responses use the shared Problem schema). */
  readonly schema?: z.ZodType;
  /** @default "application/json" */
  readonly contentType?: string;
  /**
   * A `text/event-stream` response: each event type and the schema of its `data` (JSON text). The
   * document describes one event as an SSE parser reads it (`event`, `id`, `data`).
   */
  readonly events?: Readonly<Record<string, { schema: z.ZodType; id: boolean }>>;
}

export interface RouteSpec {
  readonly method: "get" | "post";
  /** OpenAPI form, e.g. `/api/v1/jobs/{id}`. */
  readonly path: string;
  readonly operationId: string;
  readonly summary: string;
  readonly tags: readonly string[];
  /** Needs the bearer token (when the service has one). */
  readonly auth: boolean;
  readonly params?: z.ZodObject;
  readonly query?: z.ZodObject;
  readonly body?: z.ZodType;
  /** The body may be left out (e.g. cancel's options). */
  readonly bodyOptional?: boolean;
  /** Headers the route reads, for the document. */
  readonly headers?: readonly { name: string; description: string; schema: z.ZodType }[];
  /** Success responses by status; problem responses are added from `problems`. */
  readonly responses: Readonly<Record<number, ResponseSpec>>;
  /** Problem statuses this route can answer with (400, 404, 409, …). */
  readonly problems: readonly number[];
}

/** `/api/v1/jobs/{id}` → `/api/v1/jobs/:id` (hono's form). */
export function honoPath(path: string): string {
  return path.replace(/\{([A-Za-z0-9_]+)\}/g, ":$1");
}

type Parsed<T, Otherwise> = T extends z.ZodType ? z.output<T> : Otherwise;

/** What a handler of `spec` gets: the request's parts, parsed by the spec's own schemas. */
export interface RouteInput<Spec extends RouteSpec = RouteSpec> {
  c: Context;
  params: Parsed<Spec["params"], Record<string, never>>;
  query: Parsed<Spec["query"], Record<string, never>>;
  body: Parsed<Spec["body"], undefined>;
}

/** A route of the table: its spec and its handler (typed where it is defined, by `route`). */
export interface Route {
  readonly spec: RouteSpec;
  handle(input: RouteInput): Promise<Response> | Response;
}

/**
 * A route whose handler is typed from its spec's zod schemas: `params`, `query` and `body` arrive parsed
 * by those same schemas (app.ts parses every request before it calls a handler), so the one cast from the
 * typed handler to the table's is here, and no handler casts its input.
 */
export function route<const Spec extends RouteSpec>(
  spec: Spec,
  handle: (input: RouteInput<Spec>) => Promise<Response> | Response,
): Route {
  return { spec, handle: handle as unknown as Route["handle"] };
}
