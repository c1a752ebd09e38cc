import { describe } from "vitest";
import { postgresBackend } from "../helpers/ledger-backends.js";
import { ledgerContract } from "../helpers/ledger-contract.js";

describe("ledger + driver contract on PostgreSQL", () => {
  ledgerContract(() => postgresBackend());
});
