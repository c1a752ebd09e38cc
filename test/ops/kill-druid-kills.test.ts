import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { DruidClient } from "../../src/druid/client.js";
import { druidAutoKills } from "../../src/ops/kill/druid-kills.js";

/**
 * What `segops kill` reads of Druid's own auto-kills through one Router URL: the Router's `/status/properties` is its
 * own, so the Coordinator's and the Overlord's come through its management proxy (`/proxy/<service>/…`), as the
 * doctor reads them; without the proxy nothing is said rather than the Router's settings taken for theirs.
 */

let server: Server | undefined;
let client: DruidClient | undefined;
afterEach(async () => {
  await client?.close();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = client = undefined;
});

async function router(withProxy: boolean): Promise<string> {
  const answers: Record<string, unknown> = {
    "/status": { version: "35.0.0", modules: [] },
    "/status/properties": { "druid.service": "druid/router" },
    ...(withProxy
      ? {
          "/proxy/coordinator/status/properties": {
            "druid.service": "druid/coordinator",
            "druid.coordinator.kill.on": "true",
            "druid.coordinator.kill.bufferPeriod": "P7D",
          },
          "/proxy/overlord/status/properties": {
            "druid.service": "druid/overlord",
            "druid.manager.segments.killUnused.enabled": "true",
          },
        }
      : {}),
  };
  server = createServer((req, res) => {
    const body = answers[req.url ?? ""];
    res.writeHead(body === undefined ? 404 : 200, { "Content-Type": "application/json" });
    res.end(body === undefined ? "" : JSON.stringify(body));
  });
  const listening = server;
  await new Promise<void>((resolve) => listening.listen(0, "127.0.0.1", () => resolve()));
  return `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
}

describe("Druid's own auto-kills, for segops kill's plan", () => {
  it("reads the Coordinator's and the Overlord's settings through a Router's management proxy", async () => {
    client = new DruidClient({ url: await router(true), retry: { baseMs: 1, capMs: 2, maxAttempts: 1 } });
    const { killers, note } = await druidAutoKills(client);
    expect(killers.map((k) => [k.property, k.enabled, k.bufferPeriod])).toEqual([
      ["druid.coordinator.kill.bufferPeriod", true, "P7D"],
      ["druid.manager.segments.killUnused.bufferPeriod", true, "P30D"],
    ]);
    expect(note).toContain("the Coordinator's auto-kill (KillUnusedSegments) after P7D");
    expect(note).toContain("the Overlord's embedded kill (UnusedSegmentsKiller, Druid 34+) after P30D");
  });

  it("says nothing when only the Router's own properties can be read", async () => {
    client = new DruidClient({ url: await router(false), retry: { baseMs: 1, capMs: 2, maxAttempts: 1 } });
    expect(await druidAutoKills(client)).toEqual({ killers: [], note: null });
  });
});
