import { coordinatorKiller, embeddedKiller } from "../druid/auto-kill.js";
import { CAPABILITY_ROWS, capabilitiesFor, rowApplies } from "../druid/capabilities.js";
import { isDruidError } from "../druid/errors.js";
import { DruidHttp, type DruidHttpOptions, type DruidResponse } from "../druid/http.js";
import type { LoadedTemplate } from "../spec/template.js";
import { lintTemplate, templateDataSource } from "./lints.js";
import { permissionFindings, permissionResult } from "./permissions.js";
import { API_PROBES, type ApiProbe, PROBE_DATASOURCE, UNTRIED_WRITES } from "./probes.js";
import { type DoctorReport, type Finding, type PermissionResult, settle } from "./report.js";
import { routerVerdict } from "./router.js";
import { compactionFindings, killFindings } from "./settings.js";

/** What the doctor examines: a cluster (client options as every command builds them) and templates. */
export interface DoctorInput {
  readonly druid: DruidHttpOptions;
  /** Whether the Overlord and Coordinator are reached through the one `--druid` URL (no --overlord/--coordinator). */
  readonly throughOneUrl: boolean;
  readonly templates: readonly { readonly file: string; readonly template: LoadedTemplate }[];
  /** How far back the user wants to roll back (an ISO period, checked by the caller), if asked. */
  readonly rollbackHorizon?: string;
}

/**
 * A service's runtime properties (`GET /status/properties`), for the auto-kill settings. Through a Router the
 * plain path answers the Router's own, so the management proxy's `/proxy/<service>/…` is asked first; a plain
 * answer is taken only when it is not a Router's (`druid.service`). Null when neither could be read.
 */
async function serviceProperties(
  http: DruidHttp,
  service: "coordinator" | "overlord",
  throughOneUrl: boolean,
): Promise<Record<string, string> | null> {
  const paths = throughOneUrl
    ? [`/proxy/${service}/status/properties`, "/status/properties"]
    : ["/status/properties"];
  for (const path of paths) {
    const answer = await ask(http, { service, method: "GET", path });
    if (
      answer.status === null ||
      answer.status >= 300 ||
      answer.body === null ||
      typeof answer.body !== "object"
    )
      continue;
    const props: Record<string, string> = {};
    for (const [k, v] of Object.entries(answer.body as Record<string, unknown>))
      if (typeof v === "string") props[k] = v;
    if (/router/i.test(props["druid.service"] ?? "")) continue;
    return props;
  }
  return null;
}

/** One answer: the status (null: none) and the parsed JSON body when there was one. */
interface Answer {
  readonly status: number | null;
  readonly body: unknown;
  readonly error?: string;
}

async function ask(
  http: DruidHttp,
  req: {
    service: ApiProbe["service"];
    method: "GET" | "POST";
    path: string;
    query?: Record<string, string | boolean>;
    json?: unknown;
  },
): Promise<Answer> {
  try {
    const response: DruidResponse = await http.send({ ...req, idempotent: true });
    let body: unknown = null;
    try {
      body = JSON.parse(response.body);
    } catch {
      body = response.body;
    }
    return { status: response.status, body };
  } catch (error) {
    if (isDruidError(error)) return { status: error.status ?? null, body: null, error: error.message };
    return { status: null, body: null, error: error instanceof Error ? error.message : String(error) };
  }
}

/** Fills `{dataSource}` in a path, query or body (path segments encoded). */
function fill<T>(value: T, ds: string, encode: boolean): T {
  if (typeof value === "string")
    return value.replaceAll("{dataSource}", encode ? encodeURIComponent(ds) : ds) as T;
  if (Array.isArray(value)) return value.map((v) => fill(v, ds, encode)) as T;
  if (value !== null && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, ds, encode)])) as T;
  return value;
}

/**
 * Runs the doctor: reads the release, tries every API segops needs (read-only: GETs, and POSTs that read),
 * tells a Router without its management proxy, reads the compaction and kill settings, and lints the templates.
 * Never throws for what Druid answers: every answer is part of the report.
 */
export async function runDoctor(input: DoctorInput): Promise<DoctorReport> {
  const http = new DruidHttp(input.druid);
  try {
    return await examine(http, input);
  } finally {
    await http.close();
  }
}

async function examine(http: DruidHttp, input: DoctorInput): Promise<DoctorReport> {
  const findings: Finding[] = [];
  const status = await ask(http, { service: "overlord", method: "GET", path: "/status" });
  const version =
    status.body !== null && typeof status.body === "object"
      ? (status.body as { version?: unknown }).version
      : undefined;
  const caps = capabilitiesFor(status.status !== null && status.status < 300 ? version : null, status.error);
  const reported = caps.version?.text ?? null;
  const [coordinatorLeader, overlordLeader] = await Promise.all([
    ask(http, { service: "coordinator", method: "GET", path: "/druid/coordinator/v1/leader" }),
    ask(http, { service: "overlord", method: "GET", path: "/druid/indexer/v1/leader" }),
  ]);
  const unreachable =
    status.status === null && coordinatorLeader.status === null && overlordLeader.status === null;
  if (unreachable) {
    findings.push({
      severity: "blocker",
      code: "druid-unreachable",
      message: `Druid did not answer: ${status.error ?? "no answer"}. Is Druid running at ${http.endpoints().overlord}?`,
    });
  }
  const router = routerVerdict({
    throughOneUrl: input.throughOneUrl,
    status: status.status,
    coordinatorLeader: coordinatorLeader.status,
    overlordLeader: overlordLeader.status,
  });
  if (router.finding) findings.push(router.finding);
  // The version is said unread once, not again beside an unreachable or non-Druid URL.
  if (caps.warning && !unreachable && router.verdict !== "not-druid")
    findings.push({ severity: "note", code: "release", message: caps.warning });

  const templates = input.templates.map((t) => ({ ...t, dataSource: templateDataSource(t.template) }));
  const dataSources = [...new Set(templates.flatMap((t) => (t.dataSource ? [t.dataSource] : [])))];
  const probeDs = dataSources[0] ?? PROBE_DATASOURCE;
  // Behind a Router without its proxy (or a wrong URL) every management API is absent: said once, by the router.
  const managementMissing = router.verdict === "no-management-proxy" || router.verdict === "not-druid";
  const permissions: PermissionResult[] = [];
  const bodies = new Map<string, unknown>();
  // One at a time: a doctor run should not add load to a cluster that may be struggling already.
  for (const probe of API_PROBES) {
    const path = fill(probe.path, probeDs, true);
    // A Druid that answered nothing is not asked again per API: each would wait out the retry budget.
    const answer: Answer = unreachable
      ? { status: null, body: null }
      : await ask(http, {
          service: probe.service,
          method: probe.method,
          path,
          ...(probe.query ? { query: fill({ ...probe.query }, probeDs, false) } : {}),
          ...(probe.body !== undefined ? { json: fill(probe.body, probeDs, false) } : {}),
        });
    permissions.push(permissionResult(probe, `${probe.method} ${path}`, answer.status, managementMissing));
    if (answer.status !== null && answer.status < 300) bodies.set(probe.id, answer.body);
  }
  findings.push(...permissionFindings(permissions, managementMissing));
  // Listed so the table is whole: what the user must also be granted, which only a write would show.
  for (const w of UNTRIED_WRITES) {
    permissions.push({
      id: w.id,
      api: fill(w.api, probeDs, false),
      resource: w.resource,
      action: w.action,
      verdict: "not-tried",
      status: null,
      usedFor: w.usedFor,
      cost: w.cost,
      required: w.required,
    });
  }
  findings.push(
    ...compactionFindings(
      bodies.get("coordinator.compactionConfig"),
      dataSources,
      caps.compactionSkipIntervals,
    ),
  );
  const [coordinatorProps, overlordProps] = unreachable
    ? [null, null]
    : [
        await serviceProperties(http, "coordinator", input.throughOneUrl),
        await serviceProperties(http, "overlord", input.throughOneUrl),
      ];
  const killers =
    coordinatorProps === null
      ? null
      : [
          coordinatorKiller(coordinatorProps),
          overlordProps === null ? null : embeddedKiller(overlordProps, caps.behavesAs),
        ];
  findings.push(
    ...killFindings(bodies.get("coordinator.dynamicConfig"), dataSources, killers, input.rollbackHorizon),
  );
  for (const t of templates)
    findings.push(...lintTemplate(t.file, t.template, caps.version ? caps.behavesAs : null));

  const settled = settle(findings);
  return {
    endpoints: http.endpoints(),
    release: { reported, behavesAs: caps.behavesAs, warning: caps.warning },
    behaviours: CAPABILITY_ROWS.map((row) => ({
      key: row.key,
      applies: rowApplies(row, caps.behavesAs),
      what: row.what,
      source: row.source,
    })),
    router: { verdict: router.verdict, detail: router.detail },
    permissions,
    templates: templates.map((t) => ({ file: t.file, dataSource: t.dataSource })),
    ...settled,
  };
}
