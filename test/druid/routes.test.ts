import { describe, expect, it } from "vitest";
import { routeOf } from "../../src/druid/routes.js";
import { brokerRoutes } from "../../src/sim/routes/broker.js";
import { coordinatorRoutes } from "../../src/sim/routes/coordinator.js";
import { overlordRoutes } from "../../src/sim/routes/overlord.js";

const emulated = new Set(
  [...overlordRoutes(), ...coordinatorRoutes(), ...brokerRoutes()].map((r) => `${r.method} ${r.path}`),
);

describe("routeOf: Druid paths as route patterns (the metrics' endpoint label)", () => {
  it.each([
    ["POST", "/druid/indexer/v1/task", "/druid/indexer/v1/task"],
    [
      "GET",
      "/druid/indexer/v1/task/segops_ds_2026-01-01_abc/status",
      "/druid/indexer/v1/task/:taskId/status",
    ],
    ["GET", "/druid/indexer/v1/task/a%2Fb/reports", "/druid/indexer/v1/task/:taskId/reports"],
    ["POST", "/druid/indexer/v1/task/x/shutdown", "/druid/indexer/v1/task/:taskId/shutdown"],
    ["GET", "/druid/indexer/v1/task/x", "/druid/indexer/v1/task/:taskId"],
    ["POST", "/druid/indexer/v1/taskStatus", "/druid/indexer/v1/taskStatus"],
    ["GET", "/druid/indexer/v1/tasks", "/druid/indexer/v1/tasks"],
    ["GET", "/druid/indexer/v1/workers", "/druid/indexer/v1/workers"],
    ["GET", "/druid/indexer/v1/totalWorkerCapacity", "/druid/indexer/v1/totalWorkerCapacity"],
    ["GET", "/druid/coordinator/v1/loadstatus", "/druid/coordinator/v1/loadstatus"],
    [
      "GET",
      "/druid/coordinator/v1/datasources/wiki/loadstatus",
      "/druid/coordinator/v1/datasources/:dataSource/loadstatus",
    ],
    [
      "GET",
      "/druid/coordinator/v1/datasources/wiki/segments",
      "/druid/coordinator/v1/datasources/:dataSource/segments",
    ],
    [
      "GET",
      "/druid/coordinator/v1/datasources/wiki/intervals",
      "/druid/coordinator/v1/datasources/:dataSource/intervals",
    ],
    [
      "GET",
      "/druid/coordinator/v1/datasources/wiki/intervals/2026-01-01T00:00:00.000Z_2026-01-02T00:00:00.000Z/serverview",
      "/druid/coordinator/v1/datasources/:dataSource/intervals/:interval/serverview",
    ],
    [
      "GET",
      "/druid/coordinator/v1/datasources/wiki/intervals/2026-01-01_2026-01-02",
      "/druid/coordinator/v1/datasources/:dataSource/intervals/:interval",
    ],
    [
      "GET",
      "/druid/coordinator/v1/metadata/datasources/wiki/segments",
      "/druid/coordinator/v1/metadata/datasources/:dataSource/segments",
    ],
    ["GET", "/druid/coordinator/v1/rules/wiki", "/druid/coordinator/v1/rules/:dataSource"],
    ["POST", "/druid/v2/sql", "/druid/v2/sql"],
  ])("%s %s → %s, a route the emulator serves under that name", (method, path, route) => {
    expect(routeOf(path)).toBe(route);
    expect(emulated.has(`${method} ${route}`)).toBe(true);
  });

  it("drops the query string", () => {
    expect(routeOf("/druid/coordinator/v1/loadstatus?simple")).toBe("/druid/coordinator/v1/loadstatus");
  });
});
