import { describe, expect, it } from "vitest";
import { jacksonParseError } from "../../src/sim/jackson-parse.js";

/**
 * Bodies POSTed to a real Druid 33.0.0's `/druid/indexer/v1/task` and the exception its Jetty error page named
 * (observed 2026-12-03 on the real-Druid stage's cluster): the emulator must name the same.
 */
const OBSERVED: Array<[string, string]> = [
  [
    '{"type": "index_parallel", bad',
    "com.fasterxml.jackson.core.JsonParseException: Unexpected character ('b' (code 98)): was expecting double-quote to start field name\n at [Source: (org.eclipse.jetty.server.HttpInputOverHTTP); line: 1, column: 29]",
  ],
  [
    '{"type": bad}',
    "com.fasterxml.jackson.core.JsonParseException: Unrecognized token 'bad': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')\n at [Source: (org.eclipse.jetty.server.HttpInputOverHTTP); line: 1, column: 14]",
  ],
  [
    '{"a": [1 2]}',
    "com.fasterxml.jackson.core.JsonParseException: Unexpected character ('2' (code 50)): was expecting comma to separate Array entries\n at [Source: (org.eclipse.jetty.server.HttpInputOverHTTP); line: 1, column: 11]",
  ],
  [
    '{"a" 1}',
    "com.fasterxml.jackson.core.JsonParseException: Unexpected character ('1' (code 49)): was expecting a colon to separate field name and value\n at [Source: (org.eclipse.jetty.server.HttpInputOverHTTP); line: 1, column: 7]",
  ],
  [
    '{"a": tru}',
    "com.fasterxml.jackson.core.JsonParseException: Unrecognized token 'tru': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')\n at [Source: (org.eclipse.jetty.server.HttpInputOverHTTP); line: 1, column: 11]",
  ],
  [
    '{"a": "unterminated',
    "com.fasterxml.jackson.core.io.JsonEOFException: Unexpected end-of-input in VALUE_STRING\n at [Source: (org.eclipse.jetty.server.HttpInputOverHTTP); line: 1, column: 20]",
  ],
  [
    "nope",
    "com.fasterxml.jackson.core.JsonParseException: Unrecognized token 'nope': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')\n at [Source: (org.eclipse.jetty.server.HttpInputOverHTTP); line: 1, column: 5]",
  ],
  [
    '{\n  "a": 1,\n  b\n}',
    "com.fasterxml.jackson.core.JsonParseException: Unexpected character ('b' (code 98)): was expecting double-quote to start field name\n at [Source: (org.eclipse.jetty.server.HttpInputOverHTTP); line: 3, column: 4]",
  ],
  [
    '{"a": 1,',
    "com.fasterxml.jackson.core.JsonParseException: Unexpected end-of-input within/between Object entries\n at [Source: (org.eclipse.jetty.server.HttpInputOverHTTP); line: 1, column: 9]",
  ],
];

describe("Jackson's parse errors for a body that is not JSON", () => {
  it.each(OBSERVED)("%j", (body, druid) => {
    const e = jacksonParseError(body);
    expect(e && `${e.exception}: ${e.message}`).toBe(druid);
  });

  it("is null for JSON", () => {
    expect(jacksonParseError('{"type": "index_parallel"}')).toBeNull();
  });
});
