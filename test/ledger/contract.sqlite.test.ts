import { describe } from "vitest";
import { sqliteBackend } from "../helpers/ledger-backends.js";
import { ledgerContract } from "../helpers/ledger-contract.js";

describe("ledger + driver contract on SQLite", () => {
  ledgerContract(() => sqliteBackend());
});
