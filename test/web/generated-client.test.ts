import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { GENERATED, generateClientTypes } from "../../scripts/gen-web-client.js";

/**
 * The dashboard's API types are generated from the service's OpenAPI document and committed: regenerated
 * here in memory, they must equal the committed file, so a change to the API's routes or schemas that
 * the dashboard's types do not follow fails here (`npm run gen:client` brings the file up to date).
 */
describe("the dashboard's generated API types", () => {
  it("are what the service's OpenAPI document generates now", async () => {
    const committed = readFileSync(GENERATED, "utf8");
    const fresh = await generateClientTypes();
    expect(fresh, "web/src/generated/api.d.ts is stale: run `npm run gen:client`").toBe(committed);
  });
});
