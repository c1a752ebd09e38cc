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
