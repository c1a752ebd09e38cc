import { errors as undiciErrors } from "undici";
import { describe, expect, it } from "vitest";
import { classify, parseErrorBody, parseRetryAfter } from "../../src/druid/classify.js";
import {
  CapacityError,
  DruidError,
  DuplicateTaskError,
  isDruidError,
  type NotFoundError,
  TlsError,
  TransientError,
} from "../../src/druid/errors.js";
import { RECORDED_BODIES } from "./fixtures/bodies.js";

const RETRYABLE = new Set(["Capacity", "Unavailable", "Transient"]);
const endpoint = "POST /druid/indexer/v1/task";

describe("classify: every recorded Druid body (docs/druid-api.md, all versions)", () => {
  it.each(RECORDED_BODIES.map((r) => [`${r.name} (${r.section})`, r] as const))("%s", (_label, recorded) => {
    const error = classify(
      { status: recorded.status, headers: recorded.headers ?? {}, body: recorded.body },
      { endpoint },
    );
    expect(error).toBeInstanceOf(DruidError);
    expect(error.code).toBe(recorded.expect.code);
    expect(error.status).toBe(recorded.status);
    expect(error.endpoint).toBe(endpoint);
    expect(error.retryable).toBe(RETRYABLE.has(recorded.expect.code));
    if (recorded.expect.druidMessage !== undefined) {
      expect(error.druidMessage).toBe(recorded.expect.druidMessage);
      expect(error.message).toContain(recorded.expect.druidMessage);
    }
    if (recorded.expect.druidErrorCode !== undefined) {
      expect(error.druidErrorCode).toBe(recorded.expect.druidErrorCode);
    }
    if (recorded.expect.taskId !== undefined) {
      expect((error as DuplicateTaskError | NotFoundError).taskId).toBe(recorded.expect.taskId);
    }
    expect(error.message).toContain(`${endpoint}, HTTP ${recorded.status}`);
  });

  it("covers every class the contract can produce from a response", () => {
    const codes = new Set(RECORDED_BODIES.map((r) => r.expect.code));
    for (const code of [
      "DuplicateTask",
      "SpecRejected",
      "NotFound",
      "Unauthorized",
      "Forbidden",
      "Capacity",
      "Unavailable",
      "Transient",
      "Unsupported",
      "BadRequest",
    ]) {
      expect(codes).toContain(code);
    }
  });
});

describe("classify: edge cases", () => {
  it("parses a duplicate task id that itself contains brackets", () => {
    const error = classify(
      { status: 400, body: JSON.stringify({ error: "Task[odd]id[x]] already exists!" }) },
      { endpoint },
    );
    expect(error).toBeInstanceOf(DuplicateTaskError);
    expect((error as DuplicateTaskError).taskId).toBe("odd]id[x]");
  });

  it("does not mistake the payload-too-big message for a duplicate", () => {
    const error = classify(
      {
        status: 400,
        body: JSON.stringify({
          errorCode: "invalidInput",
          category: "INVALID_INPUT",
          errorMessage: "Task[x] has payload of size[2] but max allowed size is [1]. already exists",
        }),
      },
      { endpoint },
    );
    expect(error.code).toBe("SpecRejected");
  });

  it("keeps the duplicate class even when an entryAlreadyExists message names no id", () => {
    const error = classify(
      { status: 400, body: JSON.stringify({ errorCode: "entryAlreadyExists", errorMessage: "exists" }) },
      { endpoint },
    );
    expect(error.code).toBe("DuplicateTask");
    expect((error as DuplicateTaskError).taskId).toBeUndefined();
  });

  it("reads Retry-After in seconds and as an HTTP date", () => {
    const now = Date.UTC(2026, 0, 1, 0, 0, 0);
    expect(parseRetryAfter("3", now)).toBe(3000);
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:00:10 GMT", now)).toBe(10_000);
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:00:10 GMT")).toBeUndefined();
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    const error = classify({ status: 429, headers: { "retry-after": "2" }, body: "" }, { endpoint });
    expect(error).toBeInstanceOf(CapacityError);
    expect(error.retryAfterMs).toBe(2000);
  });

  it("treats an unexpected 3xx as an unusable response, not a retry", () => {
    const error = classify({ status: 302, body: "" }, { endpoint });
    expect(error.code).toBe("UnexpectedResponse");
    expect(error.retryable).toBe(false);
  });

  it("clips a huge body so messages stay readable", () => {
    const parsed = parseErrorBody("x".repeat(10_000));
    expect(parsed.message?.length).toBeLessThan(2100);
  });

  it("masks secrets echoed in a body", () => {
    const error = classify(
      {
        status: 400,
        body: JSON.stringify({ error: "bad header Basic c2VjcmV0LXB3ZA== for hunter2-secret" }),
      },
      { endpoint, secrets: ["hunter2-secret", "c2VjcmV0LXB3ZA=="] },
    );
    expect(error.message).not.toContain("hunter2-secret");
    expect(error.message).not.toContain("c2VjcmV0LXB3ZA==");
    expect(error.message).toContain("[REDACTED]");
  });

  it("passes an existing Druid error through unchanged", () => {
    const original = classify({ status: 503, body: "" }, { endpoint });
    expect(classify(original, { endpoint: "GET /other" })).toBe(original);
    expect(isDruidError(original)).toBe(true);
    expect(isDruidError(new Error("x"))).toBe(false);
  });
});

describe("classify: transport failures", () => {
  const sysError = (code: string, message = `${code} oops`) => Object.assign(new Error(message), { code });

  it.each([
    ["a connection reset", sysError("ECONNRESET"), true],
    ["a broken pipe", sysError("EPIPE"), true],
    ["a socket error", new undiciErrors.SocketError("other side closed"), true],
    ["a headers timeout", new undiciErrors.HeadersTimeoutError(), true],
    ["a body timeout", new undiciErrors.BodyTimeoutError(), true],
    ["a connect timeout", new undiciErrors.ConnectTimeoutError(), false],
    ["a refused connection", sysError("ECONNREFUSED"), false],
    ["a DNS failure", sysError("ENOTFOUND"), false],
    [
      "an AggregateError of refused addresses",
      new AggregateError([sysError("ECONNREFUSED"), sysError("ECONNREFUSED")], "connect failed"),
      false,
    ],
    ["an unknown thrown value", "weird", true],
  ] as const)("%s is Transient (requestSent=%s)", (_label, failure, requestSent) => {
    const error = classify(failure, { endpoint });
    expect(error).toBeInstanceOf(TransientError);
    expect(error.retryable).toBe(true);
    expect((error as TransientError).requestSent).toBe(requestSent);
    expect(error.status).toBeUndefined();
    expect(error.message).toContain(endpoint);
  });

  it("describes timeouts in words", () => {
    expect(classify(new undiciErrors.HeadersTimeoutError(), { endpoint }).message).toContain(
      "timed out waiting for response headers",
    );
  });

  it("treats certificate failures as a non-retryable TLS problem", () => {
    const error = classify(sysError("DEPTH_ZERO_SELF_SIGNED_CERT", "self-signed certificate"), { endpoint });
    expect(error).toBeInstanceOf(TlsError);
    expect(error.retryable).toBe(false);
  });
});
