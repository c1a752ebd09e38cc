/**
 * Jackson's parse exception for a body that is not JSON, as Druid's resources let it through to Jetty's error
 * page (a 500 naming the exception; observed on Druid 33 for a task body, docs/druid-api.md §2.2). Jackson's
 * `ReaderBasedJsonParser` reads the body once and stops at the first character it cannot take; this finds that
 * character for the common mistakes (a bare word where a value goes, a missing quote, comma or colon, a body
 * cut short inside a string or between entries) and words it as Jackson does. Observed pairs are in
 * test/sim/jackson-parse.test.ts. Not modelled: a task body whose `type` Jackson resolves before it meets the
 * error, which Druid answers from the Task's deserializer instead.
 */

export const JETTY_SOURCE = "(org.eclipse.jetty.server.HttpInputOverHTTP)";

export interface JacksonParseError {
  /** The exception's class, as Jetty's page names it. */
  readonly exception: string;
  readonly message: string;
}

const PARSE = "com.fasterxml.jackson.core.JsonParseException";
const EOF = "com.fasterxml.jackson.core.io.JsonEOFException";
const TOKEN = "was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')";
const VALUE =
  "expected a valid value (JSON String, Number, Array, Object or token 'null', 'true' or 'false')";

/** Jackson's location: 1-based line, and the column just past the character at `offset`. */
function at(text: string, offset: number): string {
  const before = text.slice(0, offset).split("\n");
  return `\n at [Source: ${JETTY_SOURCE}; line: ${before.length}, column: ${(before.at(-1)?.length ?? 0) + 2}]`;
}

class Stop {
  constructor(readonly error: JacksonParseError) {}
}

/** Jackson's exception for `text`, or null when it is JSON. */
export function jacksonParseError(text: string): JacksonParseError | null {
  try {
    JSON.parse(text);
    return null;
  } catch {
    // Found below, with Jackson's words.
  }
  let i = 0;
  const fail = (message: string, exception = PARSE): never => {
    throw new Stop({ exception, message });
  };
  const unexpected = (expecting: string): never => {
    const ch = text[i] as string;
    return fail(`Unexpected character ('${ch}' (code ${ch.codePointAt(0)})): ${expecting}${at(text, i)}`);
  };
  const cutShort = (what: string): never =>
    fail(`Unexpected end-of-input${what}${at(text, text.length - 1)}`);
  const ws = () => {
    while (i < text.length && /\s/.test(text[i] as string)) i++;
  };
  const string = () => {
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
    if (i >= text.length) fail(`Unexpected end-of-input in VALUE_STRING${at(text, text.length - 1)}`, EOF);
    i++;
  };
  const value = (): void => {
    ws();
    if (i >= text.length) cutShort(": expected a value");
    const ch = text[i] as string;
    if (ch === "{" || ch === "[" || ch === '"') {
      (ch === "{" ? object : ch === "[" ? array : string)();
      return;
    }
    const literal = /^(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)(?![A-Za-z0-9_$])/.exec(
      text.slice(i),
    );
    if (literal) {
      i += literal[0].length;
      return;
    }
    const token = /^[A-Za-z0-9_$]+/.exec(text.slice(i));
    if (!token) {
      unexpected(VALUE);
      return;
    }
    // Jackson has read one character past the token when there is one.
    const after = i + token[0].length;
    fail(`Unrecognized token '${token[0]}': ${TOKEN}${at(text, after < text.length ? after : after - 1)}`);
  };
  const object = () => {
    i++;
    ws();
    if (text[i] === "}") {
      i++;
      return;
    }
    for (;;) {
      ws();
      if (i >= text.length) cutShort(" within/between Object entries");
      if (text[i] !== '"') unexpected("was expecting double-quote to start field name");
      string();
      ws();
      if (i >= text.length) cutShort(": expected close marker for Object");
      if (text[i] !== ":") unexpected("was expecting a colon to separate field name and value");
      i++;
      value();
      ws();
      if (i >= text.length) cutShort(": expected close marker for Object");
      if (text[i] === "}") {
        i++;
        return;
      }
      if (text[i] !== ",") unexpected("was expecting comma to separate Object entries");
      i++;
    }
  };
  const array = () => {
    i++;
    ws();
    if (text[i] === "]") {
      i++;
      return;
    }
    for (;;) {
      value();
      ws();
      if (i >= text.length) cutShort(": expected close marker for Array");
      if (text[i] === "]") {
        i++;
        return;
      }
      if (text[i] !== ",") unexpected("was expecting comma to separate Array entries");
      i++;
    }
  };
  try {
    value();
    ws();
    if (i < text.length) unexpected("expected end-of-input");
  } catch (stop) {
    if (stop instanceof Stop) return stop.error;
    throw stop;
  }
  return { exception: PARSE, message: "Unexpected character in request body" };
}
