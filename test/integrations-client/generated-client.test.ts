import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { headerOf, MODELS, OPERATIONS, sourceDigest } from "../../scripts/gen-python-client.js";

/**
 * The Python client's generated files (integrations/client: models.py, _operations.py) come from the
 * service's OpenAPI document and are committed. Generating them needs Python (datamodel-code-generator
 * and ruff in the client's venv), so this test compares what they were generated from instead: the digest
 * of the client's part of the document, the generator and its pinned tools, which each file's header
 * names, must be today's, and each file's content must be what was generated (`bash
 * integrations/client/scripts/gen.sh` brings them up to date; `gen.sh --check` regenerates and compares).
 */
describe("the Python client's generated files", () => {
  it("come from the service's OpenAPI document as it is now, unedited", async () => {
    const today = await sourceDigest();
    for (const path of [MODELS, OPERATIONS]) {
      const header = headerOf(readFileSync(path, "utf8"));
      expect(header.source, `${path} is stale: run bash integrations/client/scripts/gen.sh`).toBe(today);
      expect(header.intact, `${path} was edited by hand: run bash integrations/client/scripts/gen.sh`).toBe(
        true,
      );
    }
  });
});
