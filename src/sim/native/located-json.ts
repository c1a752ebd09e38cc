/**
 * JSON with where each value sits in the request body, for Jackson's error locations. Druid's `QueryResource`
 * reads a native query with Jackson, whose messages end `at [Source: …; line: L, column: C]`: a refused type id
 * points at the id's value, a refused constructor at the closing brace of the object it was building (observed
 * on a real Druid 33: test/conformance/native-cases.ts). Only called on bodies `JSON.parse` already accepted.
 */

export const JETTY_SOURCE = "(org.eclipse.jetty.server.HttpInputOverHTTP)";

export interface Place {
  /** Offset of the value's first character. */
  start: number;
  /** Offset of an object's or array's closing character (the value's last character otherwise). */
  close: number;
  /** An object's members: where each value starts. */
  members?: Map<string, number>;
}

export class Located {
  readonly #places = new WeakMap<object, Place>();
  readonly value: unknown;

  constructor(readonly raw: string) {
    let i = 0;
    const ws = () => {
      while (i < raw.length && /\s/.test(raw[i] as string)) i++;
    };
    const str = (): string => {
      const from = i;
      i++;
      while (raw[i] !== '"') i += raw[i] === "\\" ? 2 : 1;
      i++;
      return JSON.parse(raw.slice(from, i)) as string;
    };
    const val = (): unknown => {
      ws();
      const start = i;
      const ch = raw[i];
      if (ch === "{") {
        i++;
        const out: Record<string, unknown> = {};
        const members = new Map<string, number>();
        ws();
        while (raw[i] !== "}") {
          ws();
          const key = str();
          ws();
          i++; // ':'
          ws();
          members.set(key, i);
          out[key] = val();
          ws();
          if (raw[i] === ",") i++;
          ws();
        }
        this.#places.set(out, { start, close: i, members });
        i++;
        return out;
      }
      if (ch === "[") {
        i++;
        const out: unknown[] = [];
        ws();
        while (raw[i] !== "]") {
          out.push(val());
          ws();
          if (raw[i] === ",") i++;
          ws();
        }
        this.#places.set(out, { start, close: i });
        i++;
        return out;
      }
      if (ch === '"') return str();
      const lit = /^(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(raw.slice(i));
      const token = lit?.[0] ?? "";
      i += token.length;
      return JSON.parse(token);
    };
    this.value = val();
  }

  place(o: object): Place | undefined {
    return this.#places.get(o);
  }

  /** Jackson's `at [Source: …; line: L, column: C]` for the character at `offset`. */
  at(offset: number): string {
    const before = this.raw.slice(0, offset).split("\n");
    return `at [Source: ${JETTY_SOURCE}; line: ${before.length}, column: ${(before.at(-1)?.length ?? 0) + 1}]`;
  }

  /** Where an object closes (a constructor's refusal). */
  closeOf(o: object): string {
    return this.at(this.place(o)?.close ?? this.raw.trimEnd().length - 1);
  }

  /** Where a member's value starts (a refused type id or enum constant). */
  memberOf(o: object, key: string): string {
    const p = this.place(o);
    return this.at(p?.members?.get(key) ?? p?.close ?? 0);
  }
}
