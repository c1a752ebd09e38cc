import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { firstError, jsonSyntaxProblem, parseJsonText } from "../../src/core/json-text.js";

function problem(text: string) {
  try {
    JSON.parse(text);
  } catch (error) {
    return jsonSyntaxProblem(text, error as Error);
  }
  throw new Error(`${text} is JSON`);
}

describe("JSON syntax errors said by line and column", () => {
  it("names the file, line and column and what was expected", () => {
    const text = '{\n  "spec": {\n    "a": 1\n    "b": 2\n  }\n}';
    expect(() => parseJsonText(text, "spec.json")).toThrow(
      "spec.json:4:5: expected ',' or '}' after a property",
    );
  });

  it.each([
    ['{"a": [1, 2,]}', 1, 13, "expected a value after ',' (a trailing comma is not JSON)"],
    ['{"a": 1,}', 1, 9, "expected a double-quoted property name after ',' (a trailing comma is not JSON)"],
    ['{"a": tru}', 1, 7, "expected a value: a string, number, object, array, true, false or null"],
    ["{a: 1}", 1, 2, "expected a double-quoted property name or '}'"],
    ['{"a" 1}', 1, 6, "expected ':' after a property name"],
    [
      '{"a": "x\ny"}',
      1,
      9,
      "a control character (a line break, a tab) inside a string: write it as \\n or \\t",
    ],
    [
      '{"a": "\\q"}',
      1,
      8,
      'bad escape in a string: expected \\", \\\\, \\/, \\b, \\f, \\n, \\r, \\t or \\uXXXX',
    ],
    ['{"a": 1} x', 1, 10, "unexpected text after the JSON value"],
    ['{"a": [1', 1, 9, "unexpected end of the text: expected ',' or ']'"],
    ["", 1, 1, "unexpected end of the text: expected a value"],
  ])("%j at %i:%i", (text, line, column, message) => {
    expect(problem(text)).toMatchObject({ line, column, message });
  });

  it("finds an error in every text JSON.parse refuses, and none in what it takes", () => {
    const junk = fc.constantFrom(",", "}", "]", "{", "[", "x", '"', ":", "\n", "\\", "-", "0", " ");
    let refused = 0;
    fc.assert(
      fc.property(fc.json(), fc.nat(), junk, (json, at, extra) => {
        const i = at % (json.length + 1);
        const text = json.slice(0, i) + extra + json.slice(i);
        let parsed = true;
        try {
          JSON.parse(text);
        } catch {
          parsed = false;
          refused++;
        }
        const found = firstError(text);
        expect(found === undefined, text).toBe(parsed);
        if (found) expect(found.offset).toBeLessThanOrEqual(text.length);
      }),
      { seed: 7, numRuns: 2000 },
    );
    expect(refused).toBeGreaterThan(100);
  });

  it("scans a deeply nested text without recursion", () => {
    const text = `${"[".repeat(200_000)}}`;
    expect(problem(text)).toMatchObject({ line: 1, column: 200_001 });
  });
});
