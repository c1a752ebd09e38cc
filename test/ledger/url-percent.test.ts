import { describe, expect, it } from "vitest";
import { UsageError } from "../../src/core/errors.js";
import { openStore, parseLedgerUrl } from "../../src/ledger/open.js";
import { runCli } from "../helpers/cli-process.js";

/**
 * The PostgreSQL driver percent-decodes the user name, password, host and database of a ledger URL: a
 * malformed escape in one of them is bad input, refused before connecting with a message that names the
 * part (and never the password), not a bare "URI malformed" from deep inside the driver.
 */

const SECRET = "Pg%ZZsecret";

describe("a malformed %-escape in a PostgreSQL ledger URL", () => {
  const cases = [
    ["password", `postgres://u:${SECRET}@127.0.0.1:1/db`],
    ["password", "postgres://u:pw%C3@127.0.0.1:1/db"], // hex, but no UTF-8 byte sequence
    ["password", "postgresql://u:pw%@127.0.0.1:1/db"],
    ["user name", "postgres://u%zz:pw@127.0.0.1:1/db"],
    ["host", "postgres://u:pw@h%zz:1/db"],
    ["database name", "postgres://u:pw@127.0.0.1:1/d%zzb"],
  ] as const;

  for (const [part, url] of cases) {
    it(`in the ${part} is a usage error naming it: ${url.replace(/:[^:@/]*@/, ":***@")}`, () => {
      let error: unknown;
      try {
        parseLedgerUrl(url, "--ledger");
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(UsageError);
      const message = (error as Error).message;
      expect(message).toMatch(new RegExp(`^--ledger: ledger URL .*: the ${part} holds a malformed %-escape`));
      const password = new URL(url).password;
      if (password !== "") expect(message).not.toContain(password);
    });
  }

  it("is refused by openStore too, before any connection", async () => {
    await expect(openStore(`postgres://u:${SECRET}@127.0.0.1:1/db`)).rejects.toThrow(
      expect.objectContaining({
        code: "Usage",
        message: expect.stringMatching(/^ledger URL postgres:\/\/u:\*\*\*@127\.0\.0\.1:1\/db: the password/),
      }),
    );
  });

  it("well-formed escapes still pass", () => {
    expect(parseLedgerUrl("postgres://u%40x:p%25w%C3%B6@127.0.0.1:1/d%20b")).toEqual({ kind: "postgres" });
  });

  it("makes the CLI exit 2 naming --ledger, without the password", async () => {
    const r = await runCli(["jobs", "--ledger", `postgres://u:${SECRET}@127.0.0.1:1/db`]).done;
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--ledger: ledger URL postgres:\/\/u:\*\*\*@127\.0\.0\.1:1\/db: the password/);
    expect(`${r.stdout}${r.stderr}`).not.toMatch(/ZZsecret|URI malformed/);
  }, 30_000);
});
