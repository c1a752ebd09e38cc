import { gunzipSync } from "node:zlib";
import { request } from "undici";
import { afterEach, expect, it } from "vitest";
import { DruidClient } from "../../src/druid/client.js";
import type { DruidAttempt } from "../../src/druid/http.js";
import { startSim } from "../../src/sim/server.js";
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

it("asks for gzip and counts the bytes as sent: a compressed answer is read whole, its wire size reported", async () => {
  const sim = await startSim({ workers: 1, capacity: 2 });
  const attempts: DruidAttempt[] = [];
  const plain: DruidAttempt[] = [];
  const ids = Array.from({ length: 40 }, (_, i) => `segops_events_2026-01-${String(i).padStart(2, "0")}_a1`);
  try {
    client = new DruidClient({ url: sim.url, onAttempt: (a) => attempts.push(a) });
    const uncompressed = new DruidClient({
      url: sim.url,
      compression: false,
      onAttempt: (a) => plain.push(a),
    });
    try {
      // The same answer both ways: forty unknown ids' statuses (an empty map), and the worker list.
      expect(await client.bulkTaskStates(ids)).toEqual(await uncompressed.bulkTaskStates(ids));
      expect(await client.workers()).toEqual(await uncompressed.workers());
    } finally {
      await uncompressed.close();
    }
  } finally {
    await sim.close();
  }
  const workers = (list: DruidAttempt[]) => list.find((a) => a.route === "GET /druid/indexer/v1/workers");
  // Gzip's own header and trailer make a tiny answer larger; the worker list (a few hundred bytes) shrinks.
  expect(workers(attempts)?.bytes).toBeLessThan(workers(plain)?.bytes ?? 0);
});

it("sends no Accept-Encoding with compression off, and reads a server's plain answer with it on", async () => {
  fake = new FakeDruid();
  await fake.start();
  fake.on("GET", "/druid/indexer/v1/workers", { status: 200, body: [] });
  const attempts: DruidAttempt[] = [];
  client = new DruidClient({ url: fake.url, onAttempt: (a) => attempts.push(a) });
  expect(await client.workers()).toEqual([]);
  expect(attempts[0]?.bytes).toBe(2);
  const off = new DruidClient({ url: fake.url, compression: false });
  try {
    await off.workers();
  } finally {
    await off.close();
  }
  expect(fake.requests.map((r) => r.headers["accept-encoding"])).toEqual(["gzip", undefined]);
});

it("the emulator gzips an answer only for a client that accepts gzip, as Druid's Jetty does", async () => {
  const sim = await startSim({ workers: 1, capacity: 2 });
  try {
    const url = `${sim.url}/druid/indexer/v1/workers`;
    const asked = await request(url, { headers: { "accept-encoding": "gzip, deflate" } });
    expect(asked.headers["content-encoding"]).toBe("gzip");
    const body = Buffer.from(await asked.body.arrayBuffer());
    expect(JSON.parse(gunzipSync(body).toString("utf8"))).toHaveLength(1);
    for (const headers of [{}, { "accept-encoding": "gzip;q=0, identity" }]) {
      const plain = await request(url, { headers });
      expect(plain.headers["content-encoding"]).toBeUndefined();
      expect(JSON.parse(await plain.body.text())).toHaveLength(1);
    }
  } finally {
    await sim.close();
  }
});
