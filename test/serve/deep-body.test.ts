import { describe, expect, it } from "vitest";
import { MAX_BODY_DEPTH } from "../../src/serve/problems.js";
import { dailyTemplate } from "../helpers/dataset.js";
import { startTestService } from "../helpers/serve.js";

/**
 * A request body nested past the service's limit is bad input (400 `invalid-request` naming the body and
 * the depth), refused before anything validates or plans it, however deep it goes: 2,000 levels once
 * overflowed the validator's stack and answered 500. The ledger is left as it was.
 */

/** `{"a":{"a":…1…}}` with `levels` objects, as text (the same shape a hostile client sends). */
function nested(levels: number): string {
  return `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;
}

/** A backfill whose template's context nests `levels` objects below the body (body 1, template 2, context 3). */
function backfillText(levels: number): string {
  const template = JSON.stringify(dailyTemplate({ datasource: "deep" }));
  return `{"template":${template.slice(0, -1)},"context":${nested(levels)}},"from":"2026-01-01","to":"2026-01-02","vars":{"dataDir":"/nowhere"}}`;
}

describe("a request body nested too deep", () => {
  it("is a 400 invalid-request naming the body and the limit, at 2,000 levels and just over the limit, with nothing written", async () => {
    const t = await startTestService();
    for (const levels of [2000, MAX_BODY_DEPTH - 1]) {
      const res = await t.call("/api/v1/backfills", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: backfillText(levels),
      });
      expect(res.status, res.text).toBe(400);
      expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(res.json).toMatchObject({
        type: "/problems/invalid-request",
        status: 400,
        detail: expect.stringMatching(
          new RegExp(`^body: nested deeper than ${MAX_BODY_DEPTH} levels at template\\.context\\.a\\.a`),
        ),
        errors: [
          {
            in: "body",
            path: expect.stringMatching(/^template\.context\.a\.a/),
            message: `nested deeper than ${MAX_BODY_DEPTH} levels`,
          },
        ],
      });
      // The path is clipped, so the answer stays small however deep the body went.
      expect(res.text.length).toBeLessThan(1000);
    }
    expect(await t.store.listJobs()).toEqual([]);
    expect(t.logs.join("\n")).not.toMatch(/internal error/);
  });

  it("is measured on every route with a body, and a body at the limit passes on to validation", async () => {
    const t = await startTestService();
    const login = (levels: number) =>
      t.call("/api/v1/login", {
        method: "POST",
        headers: { "content-type": "application/json" },
        // Level 1 is the body, so `extra` holds levels - 1 objects.
        body: `{"token":"x","extra":${nested(levels - 1)}}`,
      });
    const over = await login(MAX_BODY_DEPTH + 1);
    expect(over.status).toBe(400);
    expect(over.json.detail).toMatch(
      new RegExp(`^body: nested deeper than ${MAX_BODY_DEPTH} levels at extra\\.a`),
    );
    // At the limit the body is validated as usual: the login's schema knows no `extra`.
    const at = await login(MAX_BODY_DEPTH);
    expect(at.status).toBe(400);
    expect(at.json.detail).not.toMatch(/nested deeper/);
    expect(at.json.errors).toEqual([expect.objectContaining({ in: "body", path: "" })]);
  });
});
