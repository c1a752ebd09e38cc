import { SegopsError } from "../core/errors.js";

/** One thing the conversion changed or left out, by the Hadoop spec's JSON path. */
export interface ConvertNote {
  /** Path in the Hadoop spec, e.g. `spec.tuningConfig.jobProperties`. */
  readonly path: string;
  /** `dropped`: not carried over; `mapped`: carried over in another form; `check`: carried over, verify it. */
  readonly kind: "dropped" | "mapped" | "check";
  readonly message: string;
}

/** A Hadoop spec segops cannot convert: bad input (exit 2), with the path and what to do. */
export class ConvertError extends SegopsError {
  constructor(path: string, message: string) {
    super("InvalidSpec", `${path}: ${message}`, { path });
  }
}

export type Json = unknown;
export type JsonObject = Record<string, Json>;

export const isObject = (v: Json): v is JsonObject =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Collects notes while a conversion runs. */
export class Notes {
  readonly list: ConvertNote[] = [];
  dropped(path: string, message: string): void {
    this.list.push({ path, kind: "dropped", message });
  }
  mapped(path: string, message: string): void {
    this.list.push({ path, kind: "mapped", message });
  }
  check(path: string, message: string): void {
    this.list.push({ path, kind: "check", message });
  }
}
