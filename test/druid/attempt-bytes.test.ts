import { afterEach, expect, it } from "vitest";
import { DruidClient } from "../../src/druid/client.js";
import type { DruidAttempt } from "../../src/druid/http.js";
import { FakeDruid } from "./helpers/fake-druid.js";

/**
 * Every attempt tells `onAttempt` the bytes of Druid's answer and the endpoint's route template: what the
 * per-endpoint cost figures (/metrics, the dashboard's Druid load) add up.
 */

let fake: FakeDruid | undefined;
let client: DruidClient | undefined;
afterEach(async () => {
  await client?.close();
  await fake?.close();
  client = undefined;
  fake = undefined;
});

it("reports each answer's body size in bytes (multi-byte characters counted as bytes), with the route, not the raw path", async () => {
  fake = new FakeDruid();
  await fake.start();
  const status = { task: "t-ü", status: { id: "t-ü", statusCode: "RUNNING", errorMsg: "ünïcode" } };
  fake.on("GET", "/druid/indexer/v1/task/t-%C3%BC/status", { status: 200, body: status });
  fake.on(
    "GET",
    "/druid/indexer/v1/workers",
    { status: 500, body: "x".repeat(10) },
    { status: 200, body: [] },
  );
  const attempts: DruidAttempt[] = [];
  client = new DruidClient({
    url: fake.url,
    retry: { baseMs: 1, capMs: 1, maxAttempts: 3 },
    random: () => 0,
    onAttempt: (a) => attempts.push(a),
  });
  await client.taskStatus("t-ü");
  await client.workers();
  expect(attempts.map((a) => [a.route, a.status, a.bytes])).toEqual([
    ["GET /druid/indexer/v1/task/:taskId/status", 200, Buffer.byteLength(JSON.stringify(status))],
    // The failed attempt's answer cost bytes too; the retry's `[]` is two.
    ["GET /druid/indexer/v1/workers", 500, 10],
    ["GET /druid/indexer/v1/workers", 200, 2],
  ]);
  expect(Buffer.byteLength(JSON.stringify(status))).toBeGreaterThan(JSON.stringify(status).length);
});
