import { afterEach, expect, it } from "vitest";
import { connectWatched } from "../../src/cli/connect-watched.js";
import { systemClock } from "../../src/core/clock.js";
import type { DruidClient } from "../../src/druid/client.js";
import { isDruidUnreachable } from "../../src/druid/host-backoff.js";
import { OutageMonitor } from "../../src/druid/outage.js";
import { FakeDruid } from "../druid/helpers/fake-druid.js";

/**
 * The CLI's client (`run`, `backfill`, `poll`, `wait`, the segment operations) shares one backoff per Druid host, as
 * `segops serve` does: once Druid stops answering, its callers' retries are refused in the process instead of each
 * being sent. The start-up check before the run keeps its own backoff, bounded by `--retry-budget`
 * (test/cli/startup-resets.test.ts): a restart at start-up is waited out, not cut short after three attempts.
 */

const CAPACITY = "/druid/indexer/v1/totalWorkerCapacity";
const WORKERS = "/druid/indexer/v1/workers";
let fake: FakeDruid | undefined;
let client: DruidClient | undefined;
afterEach(async () => {
  await client?.close();
  await fake?.close();
  client = undefined;
  fake = undefined;
});

it("the start-up check retries through resets on its own; then ten callers of a Druid gone quiet send a handful, not fifty", async () => {
  fake = new FakeDruid();
  await fake.start();
  const capacity = { currentClusterCapacity: 8, usedClusterCapacity: 0, usedClusterCapacityPercentage: 0 };
  fake.on(
    "GET",
    CAPACITY,
    { reset: true },
    { reset: true },
    { reset: true },
    { reset: true },
    { status: 200, body: capacity },
  );
  fake.on("GET", WORKERS, { reset: true });
  const monitor = new OutageMonitor(systemClock);
  // Five attempts per call with a 1 ms first backoff: without the gate, ten calls send fifty requests within a second.
  client = await connectWatched({ druid: fake.url, retryBase: 1 }, monitor);
  // Four resets and the answer: the gate did not cut the start-up check short after three.
  expect(fake.count("GET", CAPACITY)).toBe(5);
  expect(monitor.hostOutage()).toBeNull();

  const c = client;
  const outcomes = await Promise.allSettled(Array.from({ length: 10 }, () => c.workers()));
  // Each call's first attempt was on the wire before any failed; after three failures the host is down and every
  // retry is refused before it is sent (the next probe is a second away, past these calls).
  expect(fake.count("GET", WORKERS)).toBeLessThanOrEqual(12);
  expect(fake.count("GET", WORKERS)).toBeGreaterThanOrEqual(3);
  for (const o of outcomes) {
    expect(o.status).toBe("rejected");
    expect(isDruidUnreachable((o as PromiseRejectedResult).reason)).toBe(true);
  }
  expect(monitor.hostOutage()?.host).toBe(new URL(fake.url).origin);
  expect(monitor.refusedTotal).toBeGreaterThan(0);
});
