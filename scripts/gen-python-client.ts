import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { openApiDocument } from "./gen-web-client.js";

/**
 * The Python client's generated half (integrations/client/src/segops_client/models.py and _operations.py),
 * from the OpenAPI document the service serves, so the Airflow and Dagster packages cannot drift from the
 * server:
 *   - models.py: a TypedDict per schema, written by datamodel-code-generator (pinned in
 *     integrations/client/requirements-dev.lock) from the document's schemas, the ones the client uses named
 *     (NAMED below) and shared wherever the document repeats them;
 *   - _operations.py: one method per operation the client offers (OPERATIONS), blocking and async, over the
 *     hand-written transport (segops_client/_transport.py).
 * `bash integrations/client/scripts/gen.sh` (or this script with the client's venv) writes both; `--check`
 * fails while they differ from what it would write. Each file's header holds the digest of the document and
 * of this generator it came from, which test/integrations-client/generated-client.test.ts compares without
 * Python.
 */

export const ROOT = fileURLToPath(new URL("..", import.meta.url));
const PACKAGE = join(ROOT, "integrations", "client");
export const MODELS = join(PACKAGE, "src", "segops_client", "models.py");
export const OPERATIONS = join(PACKAGE, "src", "segops_client", "_operations.py");
const VENV_BIN = join(PACKAGE, ".venv", "bin");

type Json = Record<string, unknown>;

/** The operations the Python client offers: what the integrations call, and their neighbours. */
export const OPERATIONS_OFFERED = [
  "health",
  "ready",
  "createRun",
  "createBackfill",
  "planRun",
  "planBackfill",
  "listJobs",
  "getJob",
  "listJobPartitions",
  "listJobGates",
  "listJobEvents",
  "waitForJob",
  "cancelJob",
  "retryJob",
  "auditDatasource",
] as const;

/**
 * Schemas named in the models: [name, operation, "body" or a status, JSON pointer inside]. Every place
 * of the document whose schema is the same (descriptions aside) refers to the named one.
 */
const NAMED: readonly (readonly [string, string, string, string?])[] = [
  ["RunRequest", "createRun", "body"],
  ["BackfillRequest", "createBackfill", "body"],
  ["Job", "getJob", "200"],
  ["Partition", "getJob", "200", "/properties/partitions/items"],
  ["StateCounts", "getJob", "200", "/properties/counts"],
  ["RowStats", "getJob", "200", "/properties/partitions/items/properties/rowStats/anyOf/0"],
  ["JobTotals", "getJob", "200", "/properties/totals"],
  ["JobPage", "listJobs", "200"],
  ["JobSummary", "listJobs", "200", "/properties/items/items"],
  ["PartitionPage", "listJobPartitions", "200"],
  ["GatesPage", "listJobGates", "200"],
  ["PartitionGates", "listJobGates", "200", "/properties/items/items"],
  ["Gates", "listJobGates", "200", "/properties/items/items/properties/gates/anyOf/0"],
  ["EventPage", "listJobEvents", "200"],
  ["Event", "listJobEvents", "200", "/properties/items/items"],
  ["WaitResult", "waitForJob", "200"],
  ["CancelRequest", "cancelJob", "body"],
  ["CancelResult", "cancelJob", "200"],
  ["RetryRequest", "retryJob", "body"],
  ["RetryResult", "retryJob", "200"],
  ["AuditResult", "auditDatasource", "200"],
  ["Health", "health", "200"],
  ["Readiness", "ready", "200"],
  ["Plan", "planRun", "200"],
  ["PlannedPartition", "planRun", "200", "/properties/partitions/items"],
  ["SpecWarning", "planRun", "200", "/properties/warnings/items"],
];

interface Param {
  name: string;
  in: "path" | "query" | "header";
  required: boolean;
  schema: Json;
  description?: string;
}

interface Operation {
  id: string;
  method: string;
  path: string;
  summary: string;
  params: Param[];
  body?: { schema: Json; required: boolean };
  /** Success statuses (JSON answers that are not problems) and their schemas. */
  ok: [number, Json | null][];
}

function operations(doc: Json): Operation[] {
  const found = new Map<string, Operation>();
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const [method, raw] of Object.entries(item)) {
      const op = raw as Json;
      const id = op.operationId as string;
      if (!(OPERATIONS_OFFERED as readonly string[]).includes(id)) continue;
      const body = (op.requestBody as Json | undefined)?.content as Json | undefined;
      const ok: [number, Json | null][] = [];
      for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
        const content = response.content as Record<string, Json> | undefined;
        const json = content?.["application/json"];
        if (Number(status) < 300 && !content) ok.push([Number(status), null]);
        else if (json) ok.push([Number(status), json.schema as Json]);
      }
      found.set(id, {
        id,
        method: method.toUpperCase(),
        path,
        summary: op.summary as string,
        params: (op.parameters as Param[] | undefined) ?? [],
        ...(body
          ? {
              body: {
                schema: (body["application/json"] as Json).schema as Json,
                required: (op.requestBody as Json).required === true,
              },
            }
          : {}),
        ok,
      });
    }
  }
  const missing = OPERATIONS_OFFERED.filter((id) => !found.has(id));
  if (missing.length > 0) throw new Error(`the document has no operation ${missing.join(", ")}`);
  return OPERATIONS_OFFERED.map((id) => found.get(id) as Operation);
}

/** Canonical text of a schema, descriptions left out (the same shape described in two places is one). */
function shapeKey(schema: unknown): string {
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(strip);
    if (v === null || typeof v !== "object") return v;
    const out: Json = {};
    for (const k of Object.keys(v as Json).sort()) if (k !== "description") out[k] = strip((v as Json)[k]);
    return out;
  };
  return JSON.stringify(strip(schema));
}

function at(schema: Json, pointer: string | undefined): Json {
  let node: unknown = schema;
  for (const part of (pointer ?? "").split("/").filter(Boolean)) node = (node as Json)[part];
  if (node === undefined || node === null || typeof node !== "object")
    throw new Error(`no schema at ${pointer}`);
  return node as Json;
}

/** Replaces every subschema shaped like a named one by a reference to it; `#/components/schemas/X` → `#/$defs/X`. */
function hoist(schema: unknown, names: Map<string, string>, root = true): unknown {
  if (Array.isArray(schema)) return schema.map((s) => hoist(s, names, false));
  if (schema === null || typeof schema !== "object") return schema;
  if (!root) {
    const name = names.get(shapeKey(schema));
    if (name) return { $ref: `#/$defs/${name}` };
  }
  const out: Json = {};
  for (const [k, v] of Object.entries(schema as Json)) {
    if (k === "$ref" && typeof v === "string") out[k] = v.replace("#/components/schemas/", "#/$defs/");
    else out[k] = hoist(v, names, false);
  }
  return out;
}

interface ClientModel {
  /** The JSON Schema datamodel-code-generator reads (every model in `$defs`). */
  schema: Json;
  ops: Operation[];
  /** Named schema (by shape) → its name. */
  names: Map<string, string>;
}

function clientModel(doc: Json): ClientModel {
  const ops = operations(doc);
  const byId = new Map(ops.map((o) => [o.id, o]));
  const raw = new Map<string, Json>();
  for (const [name, opId, where, pointer] of NAMED) {
    const op = byId.get(opId) as Operation;
    const base = where === "body" ? op.body?.schema : op.ok.find(([s]) => String(s) === where)?.[1];
    if (!base) throw new Error(`${opId} has no ${where} schema for ${name}`);
    raw.set(name, at(base, pointer));
  }
  const names = new Map([...raw].map(([name, s]) => [shapeKey(s), name]));
  const defs: Json = {};
  for (const [name, s] of [...raw].sort(([a], [b]) => a.localeCompare(b)))
    defs[name] = { ...(hoist(s, names) as Json), title: name };
  const components = (doc.components as Json).schemas as Record<string, Json>;
  for (const [name, s] of Object.entries(components))
    defs[name] = { ...(hoist(s, names) as Json), title: name };
  // Every operation's schemas are reachable from the root, so shapes that are not named get models too.
  const properties: Json = {};
  for (const op of ops) {
    if (op.body) properties[`${op.id}_body`] = hoist(op.body.schema, names, false);
    for (const [status, s] of op.ok) if (s) properties[`${op.id}_${status}`] = hoist(s, names, false);
  }
  return { schema: { title: "Document", type: "object", properties, $defs: defs }, ops, names };
}

/** The type a schema has in Python (a named model, a scalar, a list of one). */
function pyType(schema: Json | null | undefined, names: Map<string, string>): string {
  if (!schema) return "None";
  const name = names.get(shapeKey(schema));
  if (name) return `models.${name}`;
  if (Array.isArray(schema.enum)) return `Literal[${schema.enum.map((v) => JSON.stringify(v)).join(", ")}]`;
  switch (schema.type) {
    case "string":
      return "str";
    case "integer":
      return "int";
    case "number":
      return "float";
    case "boolean":
      return "bool";
    case "array":
      return `list[${pyType(schema.items as Json, names)}]`;
  }
  return "Any";
}

function snake(text: string): string {
  return text
    .replace(/[^A-Za-z0-9]+/g, "_")
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase();
}

const HEADER = (
  digest: string,
) => `# Generated by scripts/gen-python-client.ts from segops' OpenAPI document: do not edit by hand.
# source-digest: ${digest}
`;

/** One operation as a method, blocking or async. */
function method(op: Operation, names: Map<string, string>, isAsync: boolean): string {
  const args: string[] = ["self"];
  const keywords: string[] = [];
  const pathArgs = op.params.filter((p) => p.in === "path");
  for (const p of pathArgs) args.push(`${snake(p.name)}: ${pyType(p.schema, names)}`);
  if (op.body) {
    const type = pyType(op.body.schema, names);
    if (op.body.required) args.push(`body: ${type}`);
    else keywords.push(`body: ${type} | None = None`);
  }
  const query = op.params.filter((p) => p.in === "query");
  const headers = op.params.filter((p) => p.in === "header");
  for (const p of [...query, ...headers]) {
    const type = pyType(p.schema, names);
    keywords.push(p.required ? `${snake(p.name)}: ${type}` : `${snake(p.name)}: ${type} | None = None`);
  }
  keywords.push("request_timeout: float | None = None");
  const signature = [...args, "*", ...keywords].join(", ");
  const bodies = [...new Set(op.ok.map(([, s]) => pyType(s, names)))];
  const model = bodies.length === 1 ? (bodies[0] as string) : `${bodies.join(" | ")}`;
  const several = op.ok.length > 1;
  const returns = several ? `Answered[${model}]` : model;
  const path = op.path.replace(/\{([A-Za-z0-9_]+)\}/g, (_, n: string) => `{segment(${snake(n)})}`);
  const lines = [
    `    ${isAsync ? "async " : ""}def ${snake(op.id)}(${signature}) -> ${returns}:`,
    `        """${op.summary.replace(/"""/g, "'''")}.`,
    "",
    `        \`\`${op.method} ${op.path}\`\`${several ? `; answers ${op.ok.map(([s]) => s).join(" or ")} (\`\`status\`\` says which)` : ""}.`,
    `        """`,
    `        call = Call(`,
    `            ${JSON.stringify(op.method)},`,
    `            ${pathArgs.length > 0 ? `f${JSON.stringify(path)}` : JSON.stringify(op.path)},`,
    `            ok=(${op.ok.map(([s]) => s).join(", ")}${op.ok.length === 1 ? "," : ""}),`,
  ];
  if (query.length > 0)
    lines.push(
      `            query={${query.map((p) => `${JSON.stringify(p.name)}: ${snake(p.name)}`).join(", ")}},`,
    );
  if (headers.length > 0)
    lines.push(
      `            headers={${headers.map((p) => `${JSON.stringify(p.name)}: ${snake(p.name)}`).join(", ")}},`,
    );
  if (op.body) lines.push("            body=body,");
  lines.push("            request_timeout=request_timeout,", "        )");
  const send = isAsync ? "await self._send(call)" : "self._send(call)";
  if (several)
    lines.push(
      `        reply = ${send}`,
      `        return Answered(reply.status, cast("${model}", reply.body))`,
    );
  else if (model === "None") lines.push(`        ${send}`);
  else lines.push(`        return cast("${model}", ${isAsync ? `(${send})` : send}.body)`);
  return lines.join("\n");
}

function operationsModule(model: ClientModel, digest: string): string {
  const sync = model.ops.map((op) => method(op, model.names, false)).join("\n\n");
  const asyncs = model.ops.map((op) => method(op, model.names, true)).join("\n\n");
  return `${HEADER(digest)}"""Every operation the client offers, one method each, blocking (:class:\`SyncOperations\`) and async
(:class:\`AsyncOperations\`). The transport (\`\`_transport.py\`\`) sends a :class:\`Call\` and returns its reply."""

from __future__ import annotations

from typing import Any, Literal, cast

from . import models
from ._call import Answered, Call, Reply, segment

__all__ = ["AsyncOperations", "SyncOperations"]


class SyncOperations:
    """The operations as blocking calls."""

    def _send(self, call: Call) -> Reply:
        raise NotImplementedError

${sync}


class AsyncOperations:
    """The operations as coroutines."""

    async def _send(self, call: Call) -> Reply:
        raise NotImplementedError

${asyncs}
`;
}

function run(command: string, args: string[], input?: string): string {
  const r = spawnSync(command, args, { input, encoding: "utf8", cwd: PACKAGE, maxBuffer: 64 * 1024 * 1024 });
  if (r.error)
    throw new Error(
      `${command}: ${r.error.message} (make the client's venv: integrations/client/scripts/venv.sh)`,
    );
  if (r.status !== 0) throw new Error(`${command} ${args.join(" ")} failed:\n${r.stderr}${r.stdout}`);
  return r.stdout;
}

/** ruff's formatting and import order, as the client's checks want the files. */
function ruff(path: string, text: string): string {
  const fixed = run(
    join(VENV_BIN, "ruff"),
    ["check", "--fix-only", "--quiet", "--stdin-filename", path, "-"],
    text,
  );
  return run(join(VENV_BIN, "ruff"), ["format", "--quiet", "--stdin-filename", path, "-"], fixed);
}

/** What the generated files come from: the client's part of the document, and this generator. */
export async function sourceDigest(): Promise<string> {
  const model = clientModel((await openApiDocument()) as unknown as Json);
  const lock = readFileSync(join(PACKAGE, "requirements-dev.lock"), "utf8");
  const self = readFileSync(fileURLToPath(import.meta.url), "utf8");
  return createHash("sha256")
    .update(JSON.stringify(model.schema))
    .update(JSON.stringify(model.ops))
    .update(self)
    .update(lock)
    .digest("hex")
    .slice(0, 32);
}

/** The two files' text, generated (needs the client's venv: datamodel-code-generator and ruff). */
export async function generatePythonClient(): Promise<{ models: string; operations: string }> {
  const model = clientModel((await openApiDocument()) as unknown as Json);
  const digest = await sourceDigest();
  const dir = mkdtempSync(join(tmpdir(), "segops-gen-python-"));
  try {
    const input = join(dir, "schema.json");
    const output = join(dir, "models.py");
    writeFileSync(input, JSON.stringify(model.schema, null, 2));
    run(join(VENV_BIN, "datamodel-codegen"), [
      "--input",
      input,
      "--input-file-type",
      "jsonschema",
      "--output",
      output,
      "--output-model-type",
      "typing.TypedDict",
      "--target-python-version",
      "3.10",
      "--use-standard-collections",
      "--use-union-operator",
      "--enum-field-as-literal",
      "all",
      "--use-schema-description",
      "--use-field-description",
      "--disable-timestamp",
      "--use-title-as-name",
    ]);
    const generated = readFileSync(output, "utf8")
      .replace(/^# generated by datamodel-codegen:\n(#.*\n)*/, "")
      // The document's root only gathers the operations' schemas for the generator.
      .replace(/\n+class Document\(TypedDict\):\n(?: {4}.*\n)*/, "\n");
    const models = `${HEADER(digest)}"""The API's shapes as TypedDicts (datamodel-code-generator): the JSON the service sends and takes,
typed, read and written as plain dicts."""
${generated}`;
    return {
      models: sealed(ruff(MODELS, models)),
      operations: sealed(ruff(OPERATIONS, operationsModule(model, digest))),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The digest of what follows a generated file's header (so an edit by hand shows). */
function contentDigest(body: string): string {
  return createHash("sha256").update(body).digest("hex").slice(0, 32);
}

const CONTENT_LINE = /^# content-digest: [0-9a-f]+\n/m;

/** The file with its content digest after the source digest's line. */
function sealed(text: string): string {
  const cut = text.indexOf("\n", text.indexOf("# source-digest:")) + 1;
  return `${text.slice(0, cut)}# content-digest: ${contentDigest(text.slice(cut))}\n${text.slice(cut)}`;
}

/** What a generated file's header says: the digest of its sources, and whether its content is as generated. */
export function headerOf(text: string): { source: string | undefined; intact: boolean } {
  const source = /^# source-digest: ([0-9a-f]+)$/m.exec(text)?.[1];
  const content = /^# content-digest: ([0-9a-f]+)$/m.exec(text)?.[1];
  const match = CONTENT_LINE.exec(text);
  const body = match ? text.slice(match.index + match[0].length) : "";
  return { source, intact: content !== undefined && content === contentDigest(body) };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { models, operations: ops } = await generatePythonClient();
  if (process.argv.includes("--check")) {
    const stale = [
      [MODELS, models],
      [OPERATIONS, ops],
    ].filter(([path, text]) => readFileSync(path as string, "utf8") !== text);
    if (stale.length > 0) {
      console.error(
        `stale: ${stale.map(([p]) => p).join(", ")}; run bash integrations/client/scripts/gen.sh`,
      );
      process.exit(1);
    }
    console.log("the Python client's generated files are current");
  } else {
    writeFileSync(MODELS, models);
    writeFileSync(OPERATIONS, ops);
    console.log(`wrote ${MODELS} and ${OPERATIONS}`);
  }
}
