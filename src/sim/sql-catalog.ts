import { HISTORICAL } from "./coordinator.js";
import type { SimEngine } from "./engine.js";
import { instantText } from "./instant-text.js";
import { nestedScalar, storedJson } from "./json-value.js";
import type { Column, SqlRow, SqlType, Value } from "./sql.js";
import { Timestamp } from "./sql.js";
import { Sketch } from "./sql-sketches.js";
import { type SimSegment, shardSpecJson, timelineRows } from "./timeline.js";
import { versionTraits } from "./versions.js";
import { statusPlus } from "./views.js";

/**
 * The tables Broker SQL knows (`DruidSchema`, `SystemSchema`, `InformationSchema`; docs/querying/sql-metadata-tables.md),
 * with the columns, types and row shapes a real Druid 33 answered (docs/real-druid.md, "Broker SQL"). Schemas:
 * `druid` (datasources a Historical serves: a datasource whose segments are published but not loaded is no table
 * yet), `INFORMATION_SCHEMA`, `lookup` (none), `sys`, `view` (none).
 */
export interface SqlTable {
  schema: string;
  name: string;
  tableType: "TABLE" | "SYSTEM_TABLE";
  columns: Column[];
  /** The rows; null when the emulator lists the table but cannot query it. */
  rows: (() => SqlRow[]) | null;
}

export const SCHEMAS = ["druid", "INFORMATION_SCHEMA", "lookup", "sys", "view"] as const;

const cols = (spec: string): Column[] =>
  spec
    .trim()
    .split(/\s+/)
    .map((pair) => {
      const [name, type] = pair.split(":") as [string, string];
      return { name, type: (type === "V" ? "VARCHAR" : type === "B" ? "BIGINT" : type) as SqlType };
    });

/** `SystemSchema.SEGMENTS_SIGNATURE`; Druid 33 has no `projections` (versions.ts). */
export function sysSegmentsColumns(druidVersion: number): Column[] {
  const all = cols(`segment_id:V datasource:V start:V end:V size:B version:V partition_num:B num_replicas:B
    num_rows:B is_active:B is_published:B is_available:B is_realtime:B is_overshadowed:B shard_spec:V
    dimensions:V metrics:V projections:V last_compaction_state:V replication_factor:B`);
  return versionTraits(druidVersion).sysSegmentsProjections
    ? all
    : all.filter((c) => c.name !== "projections");
}

const SERVERS = cols(
  "server:V host:V plaintext_port:B tls_port:B server_type:V tier:V curr_size:B max_size:B is_leader:B start_time:V",
);
const TASKS = cols(`task_id:V group_id:V type:V datasource:V created_time:V queue_insertion_time:V status:V
  runner_status:V duration:B location:V host:V plaintext_port:B tls_port:B error_msg:V`);
const SERVER_SEGMENTS = cols("server:V segment_id:V");
const SUPERVISORS = cols(
  "supervisor_id:V state:V detailed_state:V healthy:B type:V source:V suspended:B spec:V",
);
const SCHEMATA = cols(`CATALOG_NAME:V SCHEMA_NAME:V SCHEMA_OWNER:V DEFAULT_CHARACTER_SET_CATALOG:V
  DEFAULT_CHARACTER_SET_SCHEMA:V DEFAULT_CHARACTER_SET_NAME:V SQL_PATH:V`);
const TABLES = cols("TABLE_CATALOG:V TABLE_SCHEMA:V TABLE_NAME:V TABLE_TYPE:V IS_JOINABLE:V IS_BROADCAST:V");
const COLUMNS =
  cols(`TABLE_CATALOG:V TABLE_SCHEMA:V TABLE_NAME:V COLUMN_NAME:V ORDINAL_POSITION:B COLUMN_DEFAULT:V
  IS_NULLABLE:V DATA_TYPE:V CHARACTER_MAXIMUM_LENGTH:V CHARACTER_OCTET_LENGTH:V NUMERIC_PRECISION:B
  NUMERIC_PRECISION_RADIX:B NUMERIC_SCALE:B DATETIME_PRECISION:B CHARACTER_SET_NAME:V COLLATION_NAME:V JDBC_TYPE:B`);
const ROUTINES = cols(
  "ROUTINE_CATALOG:V ROUTINE_SCHEMA:V ROUTINE_NAME:V ROUTINE_TYPE:V IS_AGGREGATOR:V SIGNATURES:V",
);
/** The `INFORMATION_SCHEMA.COLUMNS` columns that are nullable (a real Druid 33 said YES for these only). */
const NULLABLE_COLUMNS_COLUMNS = new Set([
  "CHARACTER_MAXIMUM_LENGTH",
  "CHARACTER_OCTET_LENGTH",
  "NUMERIC_PRECISION",
  "NUMERIC_PRECISION_RADIX",
  "NUMERIC_SCALE",
  "DATETIME_PRECISION",
  "CHARACTER_SET_NAME",
  "COLLATION_NAME",
]);

/** A served datasource's columns: `__time`, then the dimensions and metrics of its served segments. */
function dataSourceColumns(segments: SimSegment[]): Column[] {
  const out: Column[] = [{ name: "__time", type: "TIMESTAMP" }];
  const seen = new Set(["__time"]);
  // The newest segment's type wins, as in the Broker's merged row signature.
  const newestFirst = [...segments].sort((a, b) =>
    a.version < b.version ? 1 : a.version > b.version ? -1 : 0,
  );
  const typeOf = (name: string, fallback: SqlType): SqlType => {
    for (const s of newestFirst) {
      const t = s.columnTypes?.[name];
      if (t) return t as SqlType;
    }
    return fallback;
  };
  for (const s of segments) {
    for (const d of s.dimensions) {
      if (seen.has(d)) continue;
      seen.add(d);
      out.push({ name: d, type: typeOf(d, "VARCHAR") });
    }
    for (const m of s.metrics) {
      if (seen.has(m)) continue;
      seen.add(m);
      out.push({ name: m, type: typeOf(m, "BIGINT") });
    }
  }
  return out;
}

function toValue(v: unknown): SqlRow[string] {
  if (v === undefined || v === null) return null;
  if (typeof v === "number" || typeof v === "string") return v;
  // A sketch metric's value stays a sketch for the sketch functions (a result refuses it: sql-sketches.ts).
  if (v instanceof Sketch) return v as unknown as Value;
  // A multi-value string row is its list of values (sql-exec.ts prints it); an empty list is stored as null, as
  // Druid's IncrementalIndex stores it (a real Druid 33 answered null for an ingested `[]`).
  if (Array.isArray(v))
    return v.length === 0 ? null : v.length === 1 ? toValue(v[0]) : (v as unknown as Value);
  return JSON.stringify(v);
}

/** `sys.segments`: every used (published) segment; availability, replicas and row counts from the Historical. */
function sysSegments(engine: SimEngine): SqlRow[] {
  const rows: SqlRow[] = [];
  for (const ds of engine.store.dataSources()) {
    const shadowed = engine.store.overshadowed(ds, engine.now);
    for (const s of engine.store.used(ds, engine.now)) {
      const available = engine.isServed(s);
      const overshadowed = shadowed.has(s.id);
      rows.push({
        segment_id: s.id,
        datasource: ds,
        start: instantText(s.interval.start),
        end: instantText(s.interval.end),
        size: s.size,
        version: s.version,
        partition_num: s.partitionNum,
        num_replicas: available ? 1 : 0,
        // The Broker learns row counts from the segments it queries: 0 until one is loaded (Druid 33).
        num_rows: available ? s.numRows : 0,
        is_active: overshadowed ? 0 : 1,
        is_published: 1,
        is_available: available ? 1 : 0,
        is_realtime: 0,
        is_overshadowed: overshadowed ? 1 : 0,
        shard_spec: JSON.stringify(shardSpecJson(s, engine.options.druidVersion)),
        dimensions: JSON.stringify(s.dimensions),
        metrics: JSON.stringify(s.metrics),
        projections: null,
        last_compaction_state: s.lastCompactionState ? JSON.stringify(s.lastCompactionState) : null,
        replication_factor: engine.replicationFactor(s) ?? -1,
      });
    }
  }
  return rows;
}

function hostPort(url: string): { host: string; port: number } {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port) };
}

/**
 * `sys.servers`: the emulator itself as Coordinator, Overlord (both leaders), Broker and Router; the
 * Historical (`_default_tier`) holding the served segments; one `middle_manager` per emulated worker.
 */
function sysServers(engine: SimEngine, url: string): SqlRow[] {
  const self = hostPort(url);
  const start = instantText(engine.startedAt);
  const row = (host: string, port: number, type: string, extra: Partial<SqlRow> = {}): SqlRow => ({
    server: `${host}:${port}`,
    host,
    plaintext_port: port,
    tls_port: -1,
    server_type: type,
    tier: null,
    curr_size: 0,
    max_size: 0,
    is_leader: null,
    start_time: start,
    ...extra,
  });
  const servedSize = engine.store
    .dataSources()
    .flatMap((ds) => engine.served(ds))
    .reduce((n, s) => n + s.size, 0);
  const [hHost, hPort] = HISTORICAL.split(":") as [string, string];
  return [
    row(self.host, self.port, "coordinator", { is_leader: 1 }),
    row(hHost, Number(hPort), "historical", {
      tier: "_default_tier",
      curr_size: servedSize,
      max_size: 2147483648,
    }),
    row(self.host, self.port, "broker"),
    row(self.host, self.port, "overlord", { is_leader: 1 }),
    row(self.host, self.port, "router"),
    ...engine.slots.workers.map((w) => {
      const [host, port] = w.host.split(":") as [string, string];
      return row(host, Number(port), "middle_manager");
    }),
  ];
}

/** `sys.tasks`: the Overlord's task list (`/tasks` fields, `location` as `host:port`). */
function sysTasks(engine: SimEngine): SqlRow[] {
  return [...engine.tasks.values()].map((task) => {
    const s = statusPlus(task, "list");
    const loc = s.location as { host: string | null; port: number; tlsPort: number };
    return {
      task_id: s.id as string,
      group_id: s.groupId as string,
      type: s.type as string,
      datasource: s.dataSource as string,
      created_time: s.createdTime as string,
      queue_insertion_time: s.queueInsertionTime as string,
      status: s.statusCode as string,
      runner_status: s.runnerStatusCode as string,
      duration: s.duration as number,
      location: loc.host === null ? null : `${loc.host}:${loc.port}`,
      host: loc.host,
      plaintext_port: loc.port,
      tls_port: loc.tlsPort,
      error_msg: (s.errorMsg as string | null) ?? null,
    };
  });
}

/** One `INFORMATION_SCHEMA.COLUMNS` row (Calcite's metadata for the type). */
function columnRow(t: SqlTable, c: Column, ordinal: number): SqlRow {
  const varchar = c.type === "VARCHAR";
  const numeric: Record<string, [number, number | null, number]> = {
    BIGINT: [19, 0, -5],
    INTEGER: [10, 0, 4],
    DOUBLE: [15, null, 8],
    FLOAT: [7, null, 6],
  };
  const n = numeric[c.type];
  const nullable =
    t.schema === "druid"
      ? c.name !== "__time"
      : t.schema === "INFORMATION_SCHEMA"
        ? t.name === "COLUMNS"
          ? NULLABLE_COLUMNS_COLUMNS.has(c.name)
          : t.name === "ROUTINES" && c.name === "SIGNATURES"
        : true;
  return {
    TABLE_CATALOG: "druid",
    TABLE_SCHEMA: t.schema,
    TABLE_NAME: t.name,
    COLUMN_NAME: c.name,
    ORDINAL_POSITION: ordinal,
    COLUMN_DEFAULT: "",
    IS_NULLABLE: nullable ? "YES" : "NO",
    DATA_TYPE: c.type,
    CHARACTER_MAXIMUM_LENGTH: null,
    CHARACTER_OCTET_LENGTH: null,
    NUMERIC_PRECISION: n ? n[0] : null,
    NUMERIC_PRECISION_RADIX: n ? 10 : null,
    NUMERIC_SCALE: n ? n[1] : null,
    DATETIME_PRECISION: c.type === "TIMESTAMP" ? 3 : null,
    CHARACTER_SET_NAME: varchar ? "UTF-16LE" : null,
    COLLATION_NAME: varchar ? "UTF-16LE$en_US$primary" : null,
    JDBC_TYPE: varchar ? 12 : c.type === "TIMESTAMP" ? 93 : n ? n[2] : 1111,
  };
}

/** Every table, schema by schema (`SCHEMAS` order), names sorted within a schema. */
export function catalog(engine: SimEngine, url: string): SqlTable[] {
  const druid: SqlTable[] = engine.store
    .dataSources()
    .map((ds) => ({ ds, served: engine.served(ds) }))
    .filter(({ served }) => served.length > 0)
    .map(({ ds, served }) => {
      const columns = dataSourceColumns(served);
      // Nested columns are dimensions; an OTHER metric (a sketch the emulator does not build) is not JSON.
      const dimensions = new Set(served.flatMap((s) => s.dimensions));
      return {
        schema: "druid",
        name: ds,
        tableType: "TABLE" as const,
        columns,
        rows: () =>
          timelineRows(served).map((r) => {
            const row: SqlRow = {};
            for (const c of columns)
              row[c.name] =
                c.name === "__time"
                  ? new Timestamp(r.__time)
                  : (c.type === "OTHER" || c.type === "ARRAY") && dimensions.has(c.name)
                    ? storedJson(r[c.name])
                    : toValue(nestedScalar(r[c.name], c.type));
            return row;
          }),
      };
    });
  const system = (schema: string, name: string, columns: Column[], rows: SqlTable["rows"]): SqlTable => ({
    schema,
    name,
    tableType: "SYSTEM_TABLE",
    columns,
    rows,
  });
  const tables: SqlTable[] = [
    ...druid,
    system("INFORMATION_SCHEMA", "COLUMNS", COLUMNS, () =>
      tables.flatMap((t) => t.columns.map((c, i) => columnRow(t, c, i + 1))),
    ),
    system("INFORMATION_SCHEMA", "ROUTINES", ROUTINES, null),
    system("INFORMATION_SCHEMA", "SCHEMATA", SCHEMATA, () =>
      SCHEMAS.map((name) => ({
        CATALOG_NAME: "druid",
        SCHEMA_NAME: name,
        SCHEMA_OWNER: null,
        DEFAULT_CHARACTER_SET_CATALOG: null,
        DEFAULT_CHARACTER_SET_SCHEMA: null,
        DEFAULT_CHARACTER_SET_NAME: null,
        SQL_PATH: null,
      })),
    ),
    system("INFORMATION_SCHEMA", "TABLES", TABLES, () =>
      tables.map((t) => ({
        TABLE_CATALOG: "druid",
        TABLE_SCHEMA: t.schema,
        TABLE_NAME: t.name,
        TABLE_TYPE: t.tableType,
        IS_JOINABLE: "NO",
        IS_BROADCAST: "NO",
      })),
    ),
    system("sys", "segments", sysSegmentsColumns(engine.options.druidVersion), () => sysSegments(engine)),
    system("sys", "server_segments", SERVER_SEGMENTS, () =>
      engine.store
        .dataSources()
        .flatMap((ds) => engine.served(ds))
        .map((s) => ({ server: HISTORICAL, segment_id: s.id })),
    ),
    system("sys", "servers", SERVERS, () => sysServers(engine, url)),
    system("sys", "supervisors", SUPERVISORS, () => []),
    system("sys", "tasks", TASKS, () => sysTasks(engine)),
  ];
  return tables;
}
