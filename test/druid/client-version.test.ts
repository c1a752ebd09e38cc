import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { NEWEST_KNOWN_MAJOR } from "../../src/druid/capabilities.js";
import { DruidClient } from "../../src/druid/client.js";
import { CAPABILITIES_RETRY_MS } from "../../src/druid/version-read.js";
import { startTestSim } from "../helpers/sim.js";
import { FakeDruid, InstantClock, MemoryLogger } from "./helpers/fake-druid.js";

let druid: FakeDruid;
let clock: InstantClock;
let logger: MemoryLogger;
const clients: DruidClient[] = [];

function client(): DruidClient {
  const c = new DruidClient({ url: druid.url, clock, logger, retry: { maxAttempts: 1 }, random: () => 0 });
  clients.push(c);
  return c;
}

const warnings = () =>
  logger.entries.filter((e) => e.level === "warn" && e.obj.event === "druid-version").map((e) => e.msg);

beforeEach(async () => {
  druid = new FakeDruid();
  clock = new InstantClock();
  logger = new MemoryLogger();
  await druid.start();
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await druid.close();
});

describe("the cluster's Druid version, read by the client", () => {
  it("reads GET /status once per client, however many ask at once and later", async () => {
    druid.on("GET", "/status", { status: 200, body: { version: "37.0.0", modules: [], memory: {} } });
    const c = client();
    const [a, b] = await Promise.all([c.capabilities(), c.capabilities()]);
    const later = await c.capabilities();
    expect(a).toBe(b);
    expect(later).toBe(a);
    expect(a).toMatchObject({ behavesAs: 37, workerDisabledFlag: false, taskLimits: true, warning: null });
    expect(druid.count("GET", "/status")).toBe(1);
    expect(warnings()).toEqual([]);
  });

  it("does not fail when /status cannot be read: the newest known behaviour, one warning, a new read later", async () => {
    druid.on("GET", "/status", { status: 500, body: { error: "boom" } });
    const c = client();
    const first = await c.capabilities();
    expect(first).toMatchObject({ version: null, behavesAs: NEWEST_KNOWN_MAJOR });
    await c.capabilities();
    expect(druid.count("GET", "/status")).toBe(1); // the assumption stands for a while
    clock.sleep(CAPABILITIES_RETRY_MS);
    await c.capabilities();
    expect(druid.count("GET", "/status")).toBe(2);
    expect(warnings()).toHaveLength(1); // still unreadable: not said again
    expect(warnings()[0]).toContain(`assuming Druid ${NEWEST_KNOWN_MAJOR}'s behaviour`);
    druid.on("GET", "/status", { status: 200, body: { version: "38.0.0" } });
    clock.sleep(CAPABILITIES_RETRY_MS);
    expect(await c.capabilities()).toMatchObject({ behavesAs: 38, warning: null });
  });

  it("warns once about a release newer than segops knows and follows the newest known one", async () => {
    druid.on("GET", "/status", { status: 200, body: { version: "40.0.0" } });
    const c = client();
    expect(await c.capabilities()).toMatchObject({ behavesAs: NEWEST_KNOWN_MAJOR });
    await c.capabilities();
    expect(warnings()).toEqual([
      `Druid 40.0.0 is newer than segops knows (up to ${NEWEST_KNOWN_MAJOR}): assuming Druid ${NEWEST_KNOWN_MAJOR}'s behaviour`,
    ]);
  });

  it.each([33, 35, 37, 39])("reads the emulator's version %i", async (druidVersion) => {
    const sim = await startTestSim({ druidVersion });
    const c = new DruidClient({ url: sim.url, logger });
    clients.push(c);
    expect(await c.capabilities()).toMatchObject({ behavesAs: druidVersion, warning: null });
  });
});
