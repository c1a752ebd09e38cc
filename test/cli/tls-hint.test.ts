import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeDruid } from "../druid/helpers/fake-druid.js";
import { segopsInProcess } from "../helpers/cli-in-process.js";

const CA = new URL("../druid/fixtures/tls/localhost.crt", import.meta.url).pathname;

let druid: FakeDruid;

beforeEach(async () => {
  druid = new FakeDruid();
  await druid.start({ tls: true });
  druid.on("GET", "/druid/coordinator/v1/metadata/datasources/wiki/segments", { status: 200, body: [] });
});

afterEach(async () => {
  await druid.close();
});

describe("a Druid whose certificate is not trusted", () => {
  it("stops before anything is asked of it, saying so and naming --ca-file, not asking whether Druid runs", async () => {
    const r = await segopsInProcess(["audit", "wiki", "--druid", druid.url]);
    expect(r.code).toBe(4);
    expect(r.err).toContain("certificate is not trusted");
    expect(r.err).toContain("--ca-file");
    expect(r.err).not.toContain("is Druid running there");
  });

  it("is reached once its CA is given", async () => {
    druid.on("GET", "/druid/indexer/v1/totalWorkerCapacity", {
      status: 200,
      body: { currentClusterCapacity: 2 },
    });
    const r = await segopsInProcess(["audit", "wiki", "--druid", druid.url, "--ca-file", CA]);
    expect(r.err).not.toContain("certificate is not trusted");
    expect(r.code).not.toBe(4);
  });
});
