import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { UsageError } from "../../src/core/errors.js";
import { DruidClient } from "../../src/druid/client.js";
import { budgetClass, parseRequestBudget, RequestBudget } from "../../src/druid/request-budget.js";
import { FakeDruid } from "./helpers/fake-druid.js";

const H = "http://druid:8888";
const STATUS = "POST /druid/indexer/v1/taskStatus";
const HANDOFF = "POST /druid/coordinator/v1/metadata/datasources/:dataSource/segments";
const ADMISSION = "GET /druid/indexer/v1/workers";

/** Records the order in which taken calls are let through. */
function taker(budget: RequestBudget) {
  const order: string[] = [];
  const take = (name: string, route: string, origin = H, signal?: AbortSignal) =>
    budget.take({ origin, route, signal }).then(() => {
      order.push(name);
    });
  return { order, take };
}

describe("request budget (a token bucket per Druid host)", () => {
  it("lets a second's worth through at once, then one per 1/N s, never dropping a call", async () => {
    const clock = new ManualClock(0);
    const budget = new RequestBudget({ perSecond: 2, clock });
    const { order, take } = taker(budget);
    const all = ["a", "b", "c", "d", "e"].map((n) => take(n, STATUS));
    await clock.advance(0);
    expect(order).toEqual(["a", "b"]);
    await clock.advance(499);
    expect(order).toEqual(["a", "b"]);
    await clock.advance(1);
    expect(order).toEqual(["a", "b", "c"]);
    await clock.advance(1000);
    await Promise.all(all);
    expect(order).toEqual(["a", "b", "c", "d", "e"]);
    expect(budget.stats.immediate).toBe(2);
    expect(budget.stats.waits.status).toBe(3);
    // c waited 500 ms, d 1,000, e 1,500.
    expect(budget.stats.waitedMs.status).toBe(3000);
  });

  it("lets status lookups past handoff checks past admission reads, in arrival order within a class", async () => {
    const clock = new ManualClock(0);
    const waits: string[] = [];
    const budget = new RequestBudget({
      perSecond: 1,
      clock,
      onWait: (cls, ms) => waits.push(`${cls} ${ms}`),
    });
    const { order, take } = taker(budget);
    const first = take("first", ADMISSION);
    await first;
    const rest = [
      take("admission", ADMISSION),
      take("handoff-1", HANDOFF),
      take("status-1", STATUS),
      take("handoff-2", HANDOFF),
      take("status-2", STATUS),
    ];
    for (let s = 0; s < 5; s++) await clock.advance(1000);
    await Promise.all(rest);
    expect(order).toEqual(["first", "status-1", "status-2", "handoff-1", "handoff-2", "admission"]);
    expect(waits).toEqual(["status 1000", "status 2000", "handoff 3000", "handoff 4000", "admission 5000"]);
  });

  it("keeps one bucket per host: a busy Overlord does not hold back the Coordinator", async () => {
    const clock = new ManualClock(0);
    const budget = new RequestBudget({ perSecond: 1, clock });
    const { order, take } = taker(budget);
    await take("overlord-1", STATUS, "http://overlord:8081");
    const held = take("overlord-2", STATUS, "http://overlord:8081");
    await take("coordinator-1", HANDOFF, "http://coordinator:8081");
    expect(order).toEqual(["overlord-1", "coordinator-1"]);
    await clock.advance(1000);
    await held;
    expect(order).toEqual(["overlord-1", "coordinator-1", "overlord-2"]);
  });

  it("drops a waiting call whose signal aborts, and lets the next one have its token", async () => {
    const clock = new ManualClock(0);
    const budget = new RequestBudget({ perSecond: 1, clock });
    const { order, take } = taker(budget);
    await take("a", STATUS);
    const stop = new AbortController();
    const canceled = take("b", STATUS, H, stop.signal);
    const next = take("c", HANDOFF);
    expect(budget.waiting).toBe(2);
    stop.abort(new Error("canceled"));
    await expect(canceled).rejects.toThrow("canceled");
    expect(budget.waiting).toBe(1);
    await clock.advance(1000);
    await next;
    expect(order).toEqual(["a", "c"]);
  });

  it("classes the routes segops polls with, and parses N/s or N", () => {
    expect(budgetClass(STATUS)).toBe("status");
    expect(budgetClass("GET /druid/indexer/v1/task/:taskId/status")).toBe("status");
    expect(budgetClass(HANDOFF)).toBe("handoff");
    expect(
      budgetClass("GET /druid/coordinator/v1/datasources/:dataSource/intervals/:interval/serverview"),
    ).toBe("handoff");
    expect(budgetClass(ADMISSION)).toBe("admission");
    expect(budgetClass("GET /druid/indexer/v1/tasks")).toBe("admission");
    expect(budgetClass("POST /druid/indexer/v1/task")).toBe("other");
    expect(parseRequestBudget("--druid-request-budget", "20/s")).toBe(20);
    expect(parseRequestBudget("--druid-request-budget", "2.5")).toBe(2.5);
    for (const bad of ["0/s", "-1", "fast", "20/min", ""])
      expect(() => parseRequestBudget("--druid-request-budget", bad)).toThrow(
        /--druid-request-budget .*expected requests a second per Druid host, as N\/s or N above 0/,
      );
    expect(() => new RequestBudget({ perSecond: 0, clock: new ManualClock(0) })).toThrow(UsageError);
  });
});

describe("request budget in the client", () => {
  let fake: FakeDruid | undefined;
  let client: DruidClient | undefined;
  afterEach(async () => {
    await client?.close();
    await fake?.close();
    client = undefined;
    fake = undefined;
  });

  it("holds a call past the budget until a token accrues on the client's clock, then sends it", async () => {
    fake = new FakeDruid();
    await fake.start();
    fake.on("GET", "/druid/indexer/v1/workers", { status: 200, body: [] });
    const clock = new ManualClock(0);
    client = new DruidClient({ url: fake.url, clock, requestBudget: { perSecond: 1 } });
    await client.workers();
    const second = client.workers();
    // Waiting on state: the budget holds the call (one waiter, nothing sent) until the clock moves.
    expect(client.requestBudget?.waiting).toBe(1);
    expect(fake.count("GET", "/druid/indexer/v1/workers")).toBe(1);
    await clock.advance(1000);
    expect(await second).toEqual([]);
    expect(fake.count("GET", "/druid/indexer/v1/workers")).toBe(2);
    expect(client.requestBudget?.stats.waits.admission).toBe(1);
  });
});
