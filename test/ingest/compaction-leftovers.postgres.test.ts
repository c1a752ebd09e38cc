import { afterAll, beforeAll, describe, it } from "vitest";
import { openStore } from "../../src/ledger/open.js";
import { sharedMonthAndLeftover } from "../helpers/compaction-leftovers.js";
import { startPostgres, type TestPostgres } from "../helpers/postgres.js";

let pg: TestPostgres;
beforeAll(async () => {
  pg = await startPostgres();
});
afterAll(async () => {
  await pg?.stop();
});

describe("skip intervals across hosts and after a cancel, on an emulated Druid 39 (PostgreSQL ledger)", () => {
  it("lets a second host's partition share the month, and the next run takes out what a canceled job left", async () => {
    await sharedMonthAndLeftover(() => openStore(pg.freshUrl()));
  });
});
