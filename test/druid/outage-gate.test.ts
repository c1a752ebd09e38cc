import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { DruidClient } from "../../src/druid/client.js";
import { TransientError } from "../../src/druid/errors.js";
import { isDruidUnreachable } from "../../src/druid/host-backoff.js";
import type { DruidAttempt, DruidGate } from "../../src/druid/http.js";
import { OutageMonitor } from "../../src/druid/outage.js";
import { FakeDruid } from "./helpers/fake-druid.js";

/**
 * The outage monitor as the client's gate: every caller of one client shares one backoff per host. While
 * Druid does not answer, one probe goes per backoff step and every other call is refused before it is
 * sent; the log says so once, sums it up every five minutes, and says when Druid is back. Time is a manual
 * clock: ten simulated minutes, counted in requests, not seconds.
 */

const WORKERS = "/druid/indexer/v1/workers";
const CAPACITY = "/druid/indexer/v1/totalWorkerCapacity";
const TASKS = "/druid/indexer/v1/tasks";

let fake: FakeDruid;
let client: DruidClient | undefined;
afterEach(async () => {
  await client?.close();
  await fake?.close();
  client = undefined;
  fake = undefined as unknown as FakeDruid;
});

/**
 * Counts the attempts a gate lets through and the answers (resets, here) they get, so a test waits until every
 * attempt sent has its answer before the manual clock moves on — however long the sockets take on a busy
 * machine — and then lets the client schedule its next retry.
 */
function inFlight(monitor?: OutageMonitor) {
  let sent = 0;
  let answered = 0;
  const gate: DruidGate = {
    admit: (call) => {
      monitor?.admit(call);
      sent += 1;
    },
    ...(monitor ? { giveUp: monitor.giveUp } : {}),
  };
  const answer = (a: DruidAttempt) => {
    answered += 1;
    monitor?.record(a);
  };
  const settle = async () => {
    while (answered < sent) await new Promise((resolve) => setTimeout(resolve, 1));
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { gate, answer, settle };
}

let io: () => Promise<void>;

async function setup() {
  fake = new FakeDruid();
  await fake.start();
  for (const path of [WORKERS, CAPACITY, TASKS]) fake.on("GET", path, { reset: true });
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 3));
  const lines: Array<{ msg: string; details: Record<string, unknown> }> = [];
  const refusedRoutes: string[] = [];
  const attempts: Array<[number, string]> = [];
  const monitor = new OutageMonitor(clock, undefined, {
    log: { warn: (details, msg) => lines.push({ msg, details }) },
    random: () => 0.5,
    onRefused: (route) => refusedRoutes.push(route),
  });
  const flight = inFlight(monitor);
  io = flight.settle;
  client = new DruidClient({
    url: fake.url,
    clock,
    random: () => 0.5,
    retry: { baseMs: 100, capMs: 400, maxAttempts: 5, maxTotalWaitMs: 5000 },
    gate: flight.gate,
    onAttempt: (a) => {
      attempts.push([clock.now(), a.endpoint]);
      flight.answer(a);
    },
  });
  return { clock, monitor, lines, refusedRoutes, client, attempts };
}

describe("one backoff per host during an outage", () => {
  it("ten minutes of a dead Druid under four callers a second: about one probe per step, a log line when it goes, one every five minutes and one when it is back, and then everything at once", async () => {
    const { clock, monitor, lines, refusedRoutes, client: c, attempts } = await setup();
    const start = clock.now();
    const errors: unknown[] = [];
    const calls: Array<Promise<unknown>> = [];
    const callers = () => [
      c.workers(),
      c.totalWorkerCapacity(),
      c.tasks({ state: "pending" }),
      c.tasks({ state: "waiting" }),
    ];
    for (let second = 0; second < 600; second++) {
      for (const call of callers()) calls.push(call.catch((e) => errors.push(e)));
      for (let step = 0; step < 4; step++) {
        await io();
        await clock.advance(250);
      }
    }
    await io();
    const sentDuringOutage = fake.requests.length;
    const seconds = (clock.now() - start) / 1000;
    expect(seconds).toBe(600);
    // Before: every caller retried on its own (four callers × five attempts a call, ~10 requests a second).
    // Now: the attempts that found Druid down (three unanswered in a row), then one probe per step: 1, 2,
    // 4, 8, 16 s apart, then 27 to 30 s (the cap, less its jitter).
    expect(sentDuringOutage / seconds).toBeLessThanOrEqual(1);
    expect(sentDuringOutage).toBe(attempts.length);
    const probes = attempts.filter(([at]) => at - start >= 2000).map(([at]) => at);
    expect(attempts.length - probes.length).toBeLessThanOrEqual(30);
    expect(probes.length).toBeGreaterThanOrEqual(20);
    expect(probes.length).toBeLessThanOrEqual(30);
    const gaps = probes.slice(1).map((at, i) => at - (probes[i] as number));
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(900);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(30_000);
    // Everything else was refused here, typed, never sent.
    expect(errors.length).toBeGreaterThan(2000);
    expect(errors.filter(isDruidUnreachable).length).toBeGreaterThan(errors.length - 20);
    expect(monitor.refusedTotal).toBe(refusedRoutes.length);
    expect(monitor.refusedTotal + sentDuringOutage).toBeGreaterThan(2400);
    // Since its first unanswered attempt (the first answer to come back, a reset, arrives a step in).
    const since = (attempts[0] as [number, string])[0];
    const sinceText = new Date(since).toISOString();
    expect(since - start).toBeLessThan(5000);
    expect(monitor.hostOutage()).toMatchObject({ host: fake.url, since });
    expect(monitor.describe()).toContain(`Druid unreachable since ${sinceText} (`);
    // One line when it went down, one summary five minutes later, and nothing per call.
    expect(lines.map((l) => l.msg)).toEqual([
      expect.stringMatching(/^Druid does not answer: work waits/),
      expect.stringMatching(/^Druid still does not answer \(5m0\ds\)/),
    ]);
    expect(lines[1]?.details).toMatchObject({ since: sinceText });
    expect((lines[1]?.details.refused as number) > 1000).toBe(true);

    // Druid is back: the next probe finds it, and then every call goes.
    fake.on("GET", WORKERS, { status: 200, body: [] });
    fake.on("GET", CAPACITY, {
      status: 200,
      body: { currentClusterCapacity: 4, maximumCapacityWithAutoScale: 4, usedClusterCapacity: 0 },
    });
    fake.on("GET", TASKS, { status: 200, body: [] });
    for (let second = 0; second < 31 && monitor.hostOutage() !== null; second++) {
      for (const call of callers()) calls.push(call.catch((e) => errors.push(e)));
      for (let step = 0; step < 4; step++) {
        await io();
        await clock.advance(250);
      }
    }
    expect(monitor.hostOutage()).toBeNull();
    expect(monitor.since).toBeNull();
    // The probe that found it back came after the ten minutes, past the second summary.
    expect(lines.map((l) => l.msg.split(" (")[0])).toEqual([
      expect.stringMatching(/^Druid does not answer/),
      "Druid still does not answer",
      "Druid still does not answer",
      expect.stringMatching(/^Druid answers again after 10m\d\ds: work resumes$/),
    ]);
    const back = lines[3];
    expect(back?.details).toMatchObject({ since: sinceText });
    expect(Object.keys(back?.details.waiting as object)).toEqual(
      expect.arrayContaining([`GET ${WORKERS}`, `GET ${CAPACITY}`, `GET ${TASKS}`]),
    );
    const before = fake.requests.length;
    await expect(Promise.all(callers())).resolves.toHaveLength(4);
    expect(fake.requests.length - before).toBe(4);
    await Promise.all(calls);
  }, 60_000);

  it("a call whose own attempts find the host down leaves as Druid unreachable, not as its last failure", async () => {
    const { clock, monitor, lines } = await setup();
    const flight = inFlight(monitor);
    io = flight.settle;
    const few = new DruidClient({
      url: fake.url,
      clock,
      random: () => 0.5,
      retry: { baseMs: 100, capMs: 400, maxAttempts: 3, maxTotalWaitMs: 5000 },
      gate: flight.gate,
      onAttempt: flight.answer,
    });
    try {
      const call = few.workers().catch((e) => e);
      for (let step = 0; step < 10; step++) {
        await io();
        await clock.advance(250);
      }
      const error = await call;
      expect(fake.count("GET", WORKERS)).toBe(3);
      expect(isDruidUnreachable(error)).toBe(true);
      expect(error.requestSent).toBe(true); // a reset: the request had gone out
      expect(error.cause).toMatchObject({ code: "Transient" });
      expect(lines).toHaveLength(1);
    } finally {
      await few.close();
    }
  }, 60_000);

  it("once the host answers, what its calls failed with while it did not is over; a 500 of its own is not", () => {
    const clock = new ManualClock();
    const monitor = new OutageMonitor(clock);
    const origin = "http://druid:8888";
    const noAnswer = (endpoint: string) => ({
      reachable: false as const,
      endpoint,
      route: endpoint,
      status: null,
      origin,
      error: new TransientError({ endpoint, requestSent: false }),
    });
    // The status endpoint fails with a 500 of its own (Druid answers that much).
    monitor.record({
      reachable: false,
      endpoint: "POST /druid/indexer/v1/taskStatus",
      route: "POST /druid/indexer/v1/taskStatus",
      status: 500,
      origin,
      error: new TransientError({
        endpoint: "POST /druid/indexer/v1/taskStatus",
        status: 500,
        requestSent: true,
      }),
    });
    // Submissions failed while Druid was down, and are held back since (nothing tries them again).
    monitor.record(noAnswer("POST /druid/indexer/v1/task"));
    monitor.record(noAnswer("GET /druid/indexer/v1/workers"));
    monitor.record(noAnswer("GET /druid/indexer/v1/workers"));
    expect(monitor.hostOutage()).not.toBeNull();
    monitor.record({
      reachable: true,
      endpoint: "GET /druid/indexer/v1/totalWorkerCapacity",
      route: "GET /druid/indexer/v1/totalWorkerCapacity",
      status: 200,
      origin,
    });
    expect(monitor.hostOutage()).toBeNull();
    // The status endpoint's own 500 still counts (what --druid-outage-timeout bounds); the rest is over.
    expect(monitor.lastError).toMatch(/^POST \/druid\/indexer\/v1\/taskStatus/);
  });

  it("a host down that nothing asks for any more stops counting, like an endpoint family no longer tried", async () => {
    const clock = new ManualClock();
    const monitor = new OutageMonitor(clock, 60_000);
    const origin = "http://druid:8888";
    for (let i = 0; i < 3; i++)
      monitor.record({
        reachable: false,
        endpoint: "GET /druid/indexer/v1/workers",
        route: "GET /druid/indexer/v1/workers",
        status: null,
        origin,
        error: new TransientError({ endpoint: "GET /druid/indexer/v1/workers", requestSent: false }),
      });
    expect(monitor.hostOutage()).not.toBeNull();
    await clock.advance(30_000);
    // Calls are made (the first is the probe, the next refused while it is out): the outage still counts
    // while something waits on it.
    const call = { origin, endpoint: "GET /druid/indexer/v1/tasks", route: "GET /druid/indexer/v1/tasks" };
    expect(() => monitor.admit(call)).not.toThrow();
    expect(() => monitor.admit(call)).toThrow(/not sent/);
    await clock.advance(45_000);
    expect(monitor.hostOutage()).not.toBeNull();
    await clock.advance(20_000);
    expect(monitor.hostOutage()).toBeNull();
    expect(monitor.since).toBeNull();
  });

  it("a host that answers, even with errors, is not down: 500s and 503s are each call's own retries", async () => {
    const { clock, monitor, client: c } = await setup();
    fake.on("GET", WORKERS, { status: 503, body: { error: "no leader" } });
    for (let i = 0; i < 5; i++) {
      const call = c.workers().catch((e) => e);
      for (let step = 0; step < 20; step++) {
        await io();
        await clock.advance(250);
      }
      expect(isDruidUnreachable(await call)).toBe(false);
    }
    expect(monitor.hostOutage()).toBeNull();
    // The endpoint family still counts as an outage of its own (what `--druid-outage-timeout` bounds).
    expect(monitor.since).not.toBeNull();
    expect(fake.count("GET", WORKERS)).toBe(25);
  }, 60_000);

  it("the CLI's monitor without the gate sends as before: nothing is refused", async () => {
    const clock = new ManualClock();
    fake = new FakeDruid();
    await fake.start();
    fake.on("GET", WORKERS, { reset: true });
    const monitor = new OutageMonitor(clock);
    // Counted only: this client has no gate of the monitor's.
    const flight = inFlight();
    io = flight.settle;
    client = new DruidClient({
      url: fake.url,
      clock,
      random: () => 0.5,
      retry: { baseMs: 100, capMs: 400, maxAttempts: 3, maxTotalWaitMs: 5000 },
      gate: flight.gate,
      onAttempt: (a) => {
        flight.answer(a);
        monitor.record(a);
      },
    });
    for (let i = 0; i < 3; i++) {
      const call = client.workers().catch((e) => e);
      for (let step = 0; step < 10; step++) {
        await io();
        await clock.advance(250);
      }
      expect(isDruidUnreachable(await call)).toBe(false);
    }
    expect(fake.count("GET", WORKERS)).toBe(9);
    expect(monitor.refusedTotal).toBe(0);
    // The host is down all the same: "since" holds while its calls go on failing.
    expect(monitor.hostOutage()).not.toBeNull();
  }, 60_000);
});
