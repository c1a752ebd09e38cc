import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { slotsForSpec } from "../../src/ingest/slots.js";
import { decideAdmission, type InFlightTask } from "../../src/work/admission.js";

const running = (slots: number): InFlightTask => ({ slots, runnerState: "RUNNING" });

describe("admission control", () => {
  it("counts k+1 slots for a parallel task and one for a sequential one", () => {
    expect(slotsForSpec({ spec: { tuningConfig: { maxNumConcurrentSubTasks: 3 } } })).toBe(4);
    expect(slotsForSpec({ spec: { tuningConfig: { maxNumConcurrentSubTasks: 1 } } })).toBe(1);
    expect(slotsForSpec({ spec: {} })).toBe(1);
  });

  it("admits while our slots plus others' fit the live capacity", () => {
    const workers = { capacity: 8, used: 4 }; // 4 used by our two running tasks
    expect(
      decideAdmission({ workers, inFlight: [running(2), running(2)], candidateSlots: 2, maxConcurrency: 10 }),
    ).toEqual({
      admit: true,
    });
    expect(
      decideAdmission({
        workers,
        inFlight: [running(2), running(2), running(2)],
        candidateSlots: 3,
        maxConcurrency: 10,
      }),
    ).toEqual({ admit: false, reason: "capacity" });
  });

  it("leaves room used by other tenants of the cluster", () => {
    // 6 of 8 slots busy, only 2 of them ours: others hold 4, we may use 4.
    const decision = decideAdmission({
      workers: { capacity: 8, used: 6 },
      inFlight: [running(2)],
      candidateSlots: 3,
      maxConcurrency: 10,
    });
    expect(decision).toEqual({ admit: false, reason: "capacity" });
  });

  it("slows down while one of ours is still PENDING", () => {
    const decision = decideAdmission({
      workers: { capacity: 100, used: 0 },
      inFlight: [{ slots: 1, runnerState: "PENDING" }],
      candidateSlots: 1,
      maxConcurrency: 10,
    });
    expect(decision).toEqual({ admit: false, reason: "pending" });
  });

  it("honours the user's concurrency cap", () => {
    const decision = decideAdmission({
      workers: { capacity: 100, used: 1 },
      inFlight: [running(1)],
      candidateSlots: 1,
      maxConcurrency: 1,
    });
    expect(decision).toEqual({ admit: false, reason: "max-concurrency" });
  });

  it("never lets admitted slots exceed capacity (N×(k+1) ≤ slots)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 32 }), fc.integer({ min: 1, max: 8 }), (capacity, k) => {
        const slots = k > 1 ? k + 1 : 1;
        const inFlight: InFlightTask[] = [];
        for (let i = 0; i < 100; i++) {
          const used = inFlight.reduce((s, t) => s + t.slots, 0);
          const d = decideAdmission({
            workers: { capacity, used },
            inFlight,
            candidateSlots: slots,
            maxConcurrency: 50,
          });
          if (!d.admit) break;
          inFlight.push(running(slots));
        }
        const total = inFlight.reduce((s, t) => s + t.slots, 0);
        expect(total <= capacity || inFlight.length === 1).toBe(true);
        expect(inFlight.length).toBeGreaterThan(0);
      }),
    );
  });
});

describe("Druid's per-type task slot limits (taskLimits, apache/druid #16889)", () => {
  const workers = { capacity: 8, used: 0 };
  const typeLimits = (usedByType: Record<string, number> = {}) => ({
    limits: { index_parallel: 2 },
    usedByType,
  });
  const ours = (type: string | null, runnerState: InFlightTask["runnerState"]): InFlightTask => ({
    slots: 1,
    runnerState,
    type,
  });

  it("admits a type up to its limit, counting its slots at Druid and ours not running yet", () => {
    const decide = (inFlight: InFlightTask[], usedByType: Record<string, number>) =>
      decideAdmission({
        workers: { capacity: 8, used: usedByType.index_parallel ?? 0 },
        inFlight,
        candidateSlots: 1,
        maxConcurrency: 10,
        typeLimits: typeLimits(usedByType),
        candidateType: "index_parallel",
      });
    expect(decide([], {})).toEqual({ admit: true });
    expect(decide([ours("index_parallel", "UNKNOWN")], {})).toEqual({ admit: true });
    // One reserved or just submitted, one running at Druid (counted there): the limit is reached.
    expect(decide([ours("index_parallel", "UNKNOWN")], { index_parallel: 1 })).toEqual({
      admit: false,
      reason: "task-limit",
      taskType: "index_parallel",
      limit: 2,
      used: 2,
    });
    // Another tool's two index_parallel supervisors take the limit whatever slots are free.
    expect(decide([], { index_parallel: 2 })).toMatchObject({ admit: false, reason: "task-limit" });
  });

  it("lets other types through, and holds a task of unknown type to every limit", () => {
    const base = {
      workers,
      candidateSlots: 1,
      maxConcurrency: 10,
      typeLimits: typeLimits({ index_parallel: 2 }),
    };
    expect(decideAdmission({ ...base, inFlight: [], candidateType: "kill" })).toEqual({ admit: true });
    expect(decideAdmission({ ...base, inFlight: [] })).toMatchObject({ reason: "task-limit" });
    // Ours of unknown type not running yet count against the limit too.
    const limited = { ...base, typeLimits: typeLimits({}), candidateType: "index_parallel" };
    expect(
      decideAdmission({ ...limited, inFlight: [ours(null, "UNKNOWN"), ours(null, "UNKNOWN")] }),
    ).toMatchObject({
      reason: "task-limit",
    });
    expect(
      decideAdmission({ ...limited, inFlight: [ours("compact", "UNKNOWN"), ours("kill", "UNKNOWN")] }),
    ).toEqual({
      admit: true,
    });
  });

  it("keeps a type with a limit of 0 out for good, even alone on an empty cluster", () => {
    expect(
      decideAdmission({
        workers,
        inFlight: [],
        candidateSlots: 20,
        maxConcurrency: 10,
        typeLimits: { limits: { kill: 0 }, usedByType: {} },
        candidateType: "kill",
      }),
    ).toMatchObject({ admit: false, reason: "task-limit", limit: 0 });
  });
});
