import { describe, expect, it } from "vitest";
import { parseInterval } from "../../src/core/interval.js";
import { parseTaskId } from "../../src/core/task-id.js";
import { prepareSpec } from "../../src/spec/prepare.js";
import { parseTemplateText } from "../../src/spec/template.js";
import { validateSpec } from "../../src/spec/validate.js";

const day = parseInterval("2026-01-01/P1D");
const TEMPLATE = parseTemplateText(
  JSON.stringify({
    type: "index_parallel",
    spec: {
      dataSchema: {
        dataSource: "wiki",
        timestampSpec: { column: "ts" },
        granularitySpec: { segmentGranularity: "day" },
      },
      ioConfig: {
        type: "index_parallel",
        inputSource: { type: "local", baseDir: "/data/{{var.env}}/{{start:yyyy-MM-dd}}", filter: "*.json" },
        inputFormat: { type: "json" },
        dropExisting: true,
      },
      tuningConfig: { type: "index_parallel" },
    },
    context: { priority: "{{var.prio}}" },
  }),
  "t.json",
);

describe("preparing a partition's task (render + derive id)", () => {
  it("pins a deterministic id that passes validation", () => {
    const a = prepareSpec(TEMPLATE, { interval: day, vars: { env: "prod", prio: "50" } });
    const b = prepareSpec(TEMPLATE, { interval: day, vars: { env: "prod", prio: "50" } });
    expect(a.kind).toBe("task");
    if (a.kind !== "task") return;
    expect(a.taskId).toBe(b.taskId);
    expect(a.spec.id).toBe(a.taskId);
    expect(parseTaskId(a.taskId)).toMatchObject({
      datasource: "wiki",
      slug: "20260101-20260102",
      attempt: 1,
    });
    expect(validateSpec(a.spec, { partition: day }).errors).toEqual([]);
  });

  it("gives a new id for a new attempt, spec version, variable value or partition, not for a volatile field", () => {
    const id = (o: Partial<Parameters<typeof prepareSpec>[1]>) =>
      prepareSpec(TEMPLATE, { interval: day, vars: { env: "prod", prio: "50" }, ...o }).taskId;
    const base = id({});
    expect(id({ attempt: 2 })).not.toBe(base);
    expect(id({ specVersion: "2" })).not.toBe(base);
    expect(id({ vars: { env: "test", prio: "50" } })).not.toBe(base);
    expect(id({ interval: parseInterval("2026-01-02/P1D") })).not.toBe(base);
    expect(id({ vars: { env: "prod", prio: "90" } })).toBe(base);
  });

  it("prepares SQL templates with sqlQueryId pinned and the controller id query-<id>", () => {
    const sql = parseTemplateText(
      "REPLACE INTO wiki OVERWRITE WHERE __time >= TIMESTAMP '{{start}}' AND __time < TIMESTAMP '{{end}}' SELECT 1 PARTITIONED BY DAY",
      "q.sql",
    );
    const p = prepareSpec(sql, { interval: day, attempt: 3 });
    expect(p.kind).toBe("sql");
    if (p.kind !== "sql") return;
    expect(p.taskId).toBe(`query-${p.body.context.sqlQueryId}`);
    expect(parseTaskId(String(p.body.context.sqlQueryId))).toMatchObject({ datasource: "wiki", attempt: 3 });
    expect(prepareSpec(sql, { interval: day, attempt: 3 }).taskId).toBe(p.taskId);
  });
});
