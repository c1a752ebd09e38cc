import { describe, expect, it } from "vitest";
import { isDruidError, UnavailableError } from "../../src/druid/errors.js";
import {
  admit,
  afterAttempt,
  DEFAULT_PROBE_SCHEDULE,
  DEFAULT_TRIP_RULE,
  DruidUnreachableError,
  type HostState,
  hostAnswered,
  isDruidUnreachable,
  probeDelay,
  upState,
} from "../../src/druid/host-backoff.js";

/** The per-host backoff's pure decisions: the probe schedule, when a host is down, and what may be sent. */

const top = () => 0; // no jitter taken off: the ceiling itself
const bottom = () => 0.999_999; // the most jitter taken off

describe("probeDelay", () => {
  it("grows by the factor from the minimum and stops at the cap (p-retry's schedule)", () => {
    const delays = Array.from({ length: 8 }, (_, n) => probeDelay(n, {}, top));
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000]);
    expect(DEFAULT_PROBE_SCHEDULE).toEqual({
      minTimeoutMs: 1000,
      factor: 2,
      maxTimeoutMs: 30_000,
      jitter: 0.2,
    });
  });

  it("jitter only takes off, at most its share, so the cap holds", () => {
    for (const n of [0, 3, 10, 1000]) {
      const ceiling = probeDelay(n, {}, top);
      const low = probeDelay(n, {}, bottom);
      expect(low).toBeLessThanOrEqual(ceiling);
      expect(low).toBeGreaterThanOrEqual(Math.floor(ceiling * 0.8));
      expect(probeDelay(n, {}, () => 0.5)).toBe(Math.round(ceiling * 0.9));
    }
    // A random source outside [0, 1) cannot push a delay past its bounds.
    expect(probeDelay(9, {}, () => 7)).toBe(24_000);
    expect(probeDelay(9, {}, () => Number.NaN)).toBe(30_000);
  });

  it("takes its own schedule, and refuses one that makes no sense", () => {
    expect(probeDelay(2, { minTimeoutMs: 100, factor: 3, maxTimeoutMs: 500, jitter: 0 })).toBe(500);
    expect(probeDelay(1, { minTimeoutMs: 100, factor: 3, maxTimeoutMs: 500, jitter: 0 })).toBe(300);
    expect(() => probeDelay(0, { factor: 0.5 })).toThrow(RangeError);
    expect(() => probeDelay(0, { jitter: 2 })).toThrow(RangeError);
    expect(() => probeDelay(0, { minTimeoutMs: 10, maxTimeoutMs: 5 })).toThrow(RangeError);
  });
});

describe("a host goes down, is probed, comes back", () => {
  const fail = (s: HostState, now: number) => afterAttempt(s, { answered: false, now }, {}, {}, top);

  it("down after three unanswered attempts in a row; an answer in between starts the count again", () => {
    let s = upState();
    s = fail(s, 0);
    s = fail(s, 10);
    expect(s.downSince).toBeNull();
    s = fail(s, 20);
    expect(s.downSince).toBe(0);
    expect(s.nextProbeAt).toBe(20 + 1000);
    let t = fail(fail(upState(), 0), 600);
    t = afterAttempt(t, { answered: true, now: 700 });
    t = fail(fail(t, 1200), 1700);
    expect(t.downSince).toBeNull();
    expect(DEFAULT_TRIP_RULE).toEqual({ failures: 3, spanMs: 0, probeTimeoutMs: 60_000 });
  });

  it("a trip rule may also ask the failures to span some time", () => {
    const rule = { failures: 3, spanMs: 1000 };
    const failAt = (s: HostState, now: number) => afterAttempt(s, { answered: false, now }, rule, {}, top);
    let s = failAt(failAt(failAt(upState(), 0), 100), 200);
    expect(s.downSince).toBeNull(); // three, but within 200 ms
    s = failAt(s, 1000);
    expect(s.downSince).toBe(0);
  });

  it("while down: one probe when due, every other call refused until then", () => {
    let s = fail(fail(fail(upState(), 0), 500), 1000); // down since 0, first probe at 2000
    const early = admit(s, 1500);
    expect(early).toMatchObject({ send: false, retryAt: 2000 });
    const probe = admit(s, 2000);
    expect(probe).toMatchObject({ send: true, probe: true });
    s = probe.state;
    // The probe is out: nobody else goes, not even once it is due again.
    expect(admit(s, 2100).send).toBe(false);
    // It fails: the next one after twice the wait.
    s = fail(s, 2200);
    expect(s.failedProbes).toBe(1);
    expect(s.nextProbeAt).toBe(2200 + 2000);
    expect(admit(s, 4199).send).toBe(false);
    expect(admit(s, 4200).send).toBe(true);
  });

  it("a failure while down that was not the probe (sent before the host went down) moves nothing", () => {
    const s = fail(fail(fail(upState(), 0), 500), 1000);
    const late = fail(s, 1500);
    expect(late.nextProbeAt).toBe(s.nextProbeAt);
    expect(late.failedProbes).toBe(0);
  });

  it("a probe that never comes back frees its slot after the probe timeout", () => {
    const s = admit(fail(fail(fail(upState(), 0), 500), 1000), 2000).state;
    expect(admit(s, 61_999).send).toBe(false);
    expect(admit(s, 62_000)).toMatchObject({ send: true, probe: true });
  });

  it("an answer brings the host back: everything goes at once", () => {
    const s = admit(fail(fail(fail(upState(), 0), 500), 1000), 2000).state;
    const back = afterAttempt(s, { answered: true, now: 2100 });
    expect(back).toEqual(upState());
    expect(admit(back, 2101)).toMatchObject({ send: true, probe: false });
  });

  it("a host answered when it sent any status but a gateway's 502/504", () => {
    expect(hostAnswered(null)).toBe(false);
    expect(hostAnswered(502)).toBe(false);
    expect(hostAnswered(504)).toBe(false);
    for (const status of [200, 400, 404, 429, 500, 503]) expect(hostAnswered(status)).toBe(true);
  });

  it("over ten minutes down, the probes are about one per backoff step: far below one a second", () => {
    let s = fail(fail(fail(upState(), 0), 500), 1000);
    let sent = 0;
    for (let now = 1000; now < 601_000; now += 50) {
      const a = admit(s, now);
      s = a.state;
      if (a.send) {
        sent++;
        s = fail(s, now);
      }
    }
    // Probes at 2, 4, 8, 16 and 32 s, then every 30 s from 62 s: 23 in ten minutes.
    expect(sent).toBe(23);
  });
});

describe("DruidUnreachableError", () => {
  it("is a retryable Druid error that says nothing was sent and when to come back", () => {
    const e = new DruidUnreachableError({
      endpoint: "GET /druid/indexer/v1/workers",
      host: "http://druid:8888",
      since: Date.UTC(2026, 0, 1, 12, 3),
      retryAt: Date.UTC(2026, 0, 1, 12, 4),
      lastError: "GET /status: refused",
    });
    expect(e).toBeInstanceOf(UnavailableError);
    expect(isDruidError(e)).toBe(true);
    expect(e.retryable).toBe(true);
    expect(e.requestSent).toBe(false);
    expect(isDruidUnreachable(e)).toBe(true);
    expect(e.message).toMatch(/http:\/\/druid:8888 has not answered since 2026-01-01T12:03:00.000Z/);
    expect(e.message).toMatch(/not sent, the next probe at 2026-01-01T12:04:00.000Z/);
    // A call that gave up on a host found down meanwhile: its own failure is the cause.
    const cause = Object.assign(new Error("refused"), { requestSent: false });
    const gaveUp = new DruidUnreachableError({ endpoint: "GET /x", host: "h", since: 0, retryAt: 1, cause });
    expect(gaveUp.cause).toBe(cause);
    expect(gaveUp.requestSent).toBe(false);
    expect(gaveUp.message).toMatch(/no answer to this call either/);
    const sent = new DruidUnreachableError({
      endpoint: "GET /x",
      host: "h",
      since: 0,
      retryAt: 1,
      cause: new Error("reset"),
    });
    expect(sent.requestSent).toBe(true);
    // Recognised by shape too (a copy of the module from another package).
    const copy = Object.assign(new Error("x"), { druidUnreachable: true, retryAt: 1 });
    expect(isDruidUnreachable(copy)).toBe(true);
    expect(isDruidUnreachable(new UnavailableError({ endpoint: "GET /x", status: 503 }))).toBe(false);
  });
});
