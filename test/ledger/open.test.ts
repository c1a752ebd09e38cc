import { describe, expect, it } from "vitest";
import { redactUrl } from "../../src/ledger/errors.js";
import { openStore } from "../../src/ledger/open.js";
import { pickDistinctKeys } from "../../src/ledger/sql/claim.js";
import { transition } from "../../src/ledger/sql/transition.js";

describe("openStore", () => {
  it("never shows a connection password in its error", async () => {
    const error = await openStore("postgres://segops:hunter2@127.0.0.1:1/ledger", { poolSize: 1 }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: "Ledger" });
    expect(String((error as Error).message)).toContain("postgres://segops:***@127.0.0.1:1/ledger");
    expect(
      JSON.stringify({ m: (error as Error).message, d: (error as { details: unknown }).details }),
    ).not.toContain("hunter2");
  });

  it("refuses an unknown URL scheme with a clear message", async () => {
    await expect(openStore("mysql://u:pw@h/db")).rejects.toThrow(
      "unsupported ledger URL mysql://u:***@h/db: expected sqlite:PATH, sqlite::memory: or postgres://…",
    );
  });

  it("redacts password parameters too", () => {
    expect(redactUrl("postgresql://h/db?user=a&password=s3cret&sslmode=require")).toBe(
      "postgresql://h/db?user=a&password=***&sslmode=require",
    );
  });
});

describe("SQL builders", () => {
  it("bind every value as a parameter, never in the text", () => {
    const s = transition(
      "postgres",
      { id: "t'; DROP TABLE tasks; --", owner: "o", version: 7 },
      { to: "failed", reason: "it's broken" },
      123,
    );
    expect(s.text).not.toContain("DROP TABLE");
    expect(s.text).not.toContain("it's broken");
    expect(s.values).toContain("t'; DROP TABLE tasks; --");
    expect(s.text).toMatch(/AND state = 'running'/);
  });

  it("a claim keeps only the first candidate of each exclusion key", () => {
    const picked = pickDistinctKeys([
      { id: "a", exclusionKey: "x" },
      { id: "b", exclusionKey: null },
      { id: "c", exclusionKey: "x" },
      { id: "d", exclusionKey: null },
      { id: "e", exclusionKey: "y" },
    ]);
    expect(picked.map((c) => c.id)).toEqual(["a", "b", "d", "e"]);
  });
});
