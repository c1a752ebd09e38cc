import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startupHint } from "../../src/cli/druid-hints.js";
import { classifyFailure } from "../../src/druid/classify.js";
import { FakeDruid } from "../druid/helpers/fake-druid.js";
import { segopsInProcess } from "../helpers/cli-in-process.js";

/** `--druid` mistakes a new user makes, each answered with what was sent and what to write instead. */

let druid: FakeDruid;

beforeEach(async () => {
  druid = new FakeDruid();
  await druid.start();
});

afterEach(async () => {
  await druid.close();
});

describe("--druid mistakes", () => {
  it("a URL without a scheme is shown whole, with the scheme to add", async () => {
    const port = new URL(druid.url).port;
    const r = await segopsInProcess(["audit", "wiki", "--druid", `localhost:${port}`]);
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      `segops: --druid: expected http(s)://host:port, got localhost:${port}: add the scheme, e.g. http://localhost:${port}\n`,
    );
    // A password typed into such a URL is not echoed back.
    const secret = await segopsInProcess(["audit", "wiki", "--druid", `bob:hunter22@localhost:${port}`]);
    expect(secret.code).toBe(2);
    expect(secret.err).toContain("expected http(s)://host:port");
    expect(secret.err).not.toContain("hunter22");
  });

  it("a path prefix: the 404 shows the path as sent and names the prefix and the Router setting", async () => {
    const r = await segopsInProcess(["audit", "wiki", "--druid", `${druid.url}/druid/`]);
    expect(r.code).toBe(4);
    expect(r.err).toContain("(GET /druid/druid/indexer/v1/totalWorkerCapacity, HTTP 404)");
    expect(r.err).toContain("the URL's path /druid, sent before every API path (drop it)");
    expect(r.err).toContain("druid.router.managementProxy.enabled=true");
    expect(r.err).not.toContain("is Druid running there");
  });

  it("https:// against plain HTTP says so and gives the http:// URL, not a certificate problem", async () => {
    const https = druid.url.replace(/^http:/, "https:");
    const r = await segopsInProcess(["audit", "wiki", "--druid", https]);
    expect(r.code).toBe(4);
    expect(r.err).toContain("the server answered plain HTTP to a TLS handshake: use http://");
    expect(r.err).toContain(`pass ${druid.url}`);
    expect(r.err).not.toMatch(/certificate|ssl3_get_record|openssl/i);
  });
});

describe("start-up hints", () => {
  it("a certificate problem still names --ca-file", () => {
    const error = classifyFailure(
      Object.assign(new Error("self-signed"), { code: "DEPTH_ZERO_SELF_SIGNED_CERT" }),
      {
        endpoint: "GET /x",
      },
    );
    expect(startupHint(error, "https://druid:8888")).toMatch(/certificate is not trusted: .*--ca-file/);
  });
});
