/**
 * JSON text read from users (templates, request bodies, flags), with syntax errors said where they are:
 * `spec.json:31:7: expected ',' or '}' after a property` instead of V8's `at position 878`. Pure.
 *
 * `JSON.parse` stays the parser (and the authority on what is JSON); only when it fails is the text
 * scanned again to find the line and column of the first error, since V8 gives a position for some
 * errors only (not for `[1,]` or `tru`) and words it differently across Node releases.
 */

/** Where a JSON text first goes wrong (line and column from 1) and what is wrong there. */
export interface JsonSyntaxProblem {
  readonly offset: number;
  readonly line: number;
  readonly column: number;
  readonly message: string;
}

/** `JSON.parse(text)`, or a SyntaxError whose message starts `name:line:column: `. */
export function parseJsonText(text: string, name: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const problem = jsonSyntaxProblem(text, error as Error);
    throw new SyntaxError(`${name}:${problem.line}:${problem.column}: ${problem.message}`);
  }
}

/** The first syntax error of a text `JSON.parse` refused with `error`. */
export function jsonSyntaxProblem(text: string, error: Error): JsonSyntaxProblem {
  const scanned = firstError(text);
  const offset = scanned?.offset ?? v8Offset(text, error.message) ?? text.length;
  const { line, column } = lineColumn(text, offset);
  return { offset, line, column, message: scanned?.message ?? v8Words(error.message) };
}

/** V8's offset, as `at position N` (Node 20) or `(line L column C)` (Node 22+). */
function v8Offset(text: string, message: string): number | undefined {
  const at = /at position (\d+)/.exec(message);
  if (at?.[1] !== undefined) return Number(at[1]);
  const lc = /\(line (\d+) column (\d+)\)/.exec(message);
  if (lc?.[1] === undefined || lc[2] === undefined) return undefined;
  const lines = text.split("\n").slice(0, Number(lc[1]) - 1);
  return lines.reduce((n, l) => n + l.length + 1, 0) + Number(lc[2]) - 1;
}

/** V8's words without its position or its quote of the whole text. */
function v8Words(message: string): string {
  const words = message
    .replace(/,? ".*" is not valid JSON$/s, "")
    .replace(/ in JSON at position \d+.*$/s, "")
    .replace(/ \(line \d+ column \d+\)$/, "");
  return words.charAt(0).toLowerCase() + words.slice(1);
}

function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      start = i + 1;
    }
  }
  return { line, column: offset - start + 1 };
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const WHITESPACE = /[ \t\n\r]*/y;
const ESCAPE = /\\(?:["\\/bfnrt]|u[0-9A-Fa-f]{4})/y;

/** What the scanner expects next. */
type Expect = "value" | "value-or-]" | "key-or-}" | "key" | ":" | "after";

/**
 * The offset and words of the first error of a JSON text, by a scan with an explicit stack (no recursion:
 * a template nested 100,000 deep must not overflow the call stack); undefined when it finds none.
 */
export function firstError(text: string): { offset: number; message: string } | undefined {
  const stack: string[] = [];
  let expect: Expect = "value";
  let i = 0;
  const fail = (message: string) => ({ offset: i, message });
  const skip = () => {
    WHITESPACE.lastIndex = i;
    WHITESPACE.exec(text);
    i = WHITESPACE.lastIndex;
  };
  /** Scans a string at `i`; an error, or undefined with `i` past it. */
  const string = (): { offset: number; message: string } | undefined => {
    i++;
    for (;;) {
      if (i >= text.length) return fail("a string is not closed: expected '\"'");
      const c = text.charCodeAt(i);
      if (c === 34) {
        i++;
        return undefined;
      }
      if (c < 32)
        return fail("a control character (a line break, a tab) inside a string: write it as \\n or \\t");
      if (c === 92) {
        ESCAPE.lastIndex = i;
        if (!ESCAPE.test(text))
          return fail('bad escape in a string: expected \\", \\\\, \\/, \\b, \\f, \\n, \\r, \\t or \\uXXXX');
        i = ESCAPE.lastIndex;
      } else i++;
    }
  };
  for (;;) {
    skip();
    const c = text[i];
    if (expect === "after") {
      const top = stack[stack.length - 1];
      if (top === undefined)
        return i < text.length ? fail("unexpected text after the JSON value") : undefined;
      const close = top === "{" ? "}" : "]";
      if (c === ",") {
        i++;
        expect = top === "{" ? "key" : "value";
      } else if (c === close) {
        i++;
        stack.pop();
      } else if (c === undefined) return fail(`unexpected end of the text: expected ',' or '${close}'`);
      else return fail(`expected ',' or '${close}' after ${top === "{" ? "a property" : "an array element"}`);
      continue;
    }
    if (expect === ":") {
      if (c !== ":") return fail("expected ':' after a property name");
      i++;
      expect = "value";
      continue;
    }
    if (expect === "key" || expect === "key-or-}") {
      if (c === "}" && expect === "key-or-}") {
        i++;
        stack.pop();
        expect = "after";
        continue;
      }
      if (c !== '"')
        return fail(
          expect === "key"
            ? "expected a double-quoted property name after ',' (a trailing comma is not JSON)"
            : "expected a double-quoted property name or '}'",
        );
      const bad = string();
      if (bad) return bad;
      expect = ":";
      continue;
    }
    // A value (or, right after '[', the end of the array).
    if (c === "]" && expect === "value-or-]") {
      i++;
      stack.pop();
      expect = "after";
      continue;
    }
    if (c === undefined) return fail("unexpected end of the text: expected a value");
    if (c === "{" || c === "[") {
      stack.push(c);
      i++;
      expect = c === "{" ? "key-or-}" : "value-or-]";
      continue;
    }
    if (c === '"') {
      const bad = string();
      if (bad) return bad;
    } else if (text.startsWith("true", i) || text.startsWith("null", i)) i += 4;
    else if (text.startsWith("false", i)) i += 5;
    else {
      NUMBER.lastIndex = i;
      if (!NUMBER.test(text))
        return fail(
          stack[stack.length - 1] === "[" && c === "]"
            ? "expected a value after ',' (a trailing comma is not JSON)"
            : "expected a value: a string, number, object, array, true, false or null",
        );
      i = NUMBER.lastIndex;
    }
    expect = "after";
  }
}
