import { HISTORICAL } from "../coordinator.js";
import { druidError, json, type Reply } from "../reply.js";

/**
 * Druid's answers to a native query it refuses (`QueryResource`; observed on a real Druid 33, see
 * test/conformance/native-cases.ts). A query Jackson cannot bind is a 400 in the legacy `QueryException` shape
 * (`{"error":"Unknown exception","errorMessage","errorClass","host":null}`); one a data server refuses while
 * running is a 500 carrying both the legacy fields and the `DruidException` ones (`legacyQueryException`).
 */
export class NativeQueryError extends Error {
  constructor(readonly reply: Reply) {
    super(String(reply.body));
  }
}

export const CLASSES = {
  typeId: "com.fasterxml.jackson.databind.exc.InvalidTypeIdException",
  instantiation: "com.fasterxml.jackson.databind.exc.ValueInstantiationException",
  mismatch: "com.fasterxml.jackson.databind.exc.MismatchedInputException",
  format: "com.fasterxml.jackson.databind.exc.InvalidFormatException",
} as const;

/** A binding refusal: `message` already ends with Jackson's location (and reference chain, if any). */
export function bindError(errorClass: string, message: string): NativeQueryError {
  return new NativeQueryError(
    json(400, { error: "Unknown exception", errorMessage: message, errorClass, host: null }),
  );
}

/** What the emulator does not compute: its own 501 `Emulator: …`, never a misread. */
export function emulatorGap(message: string): NativeQueryError {
  return new NativeQueryError(druidError("general", "USER", "UNSUPPORTED", `Emulator: ${message}`));
}

/** `UOE` thrown on the Historical while running the query (e.g. an unsupported scan resultFormat). */
export function unsupported(message: string): NativeQueryError {
  const errorClass = "org.apache.druid.java.util.common.UOE";
  return new NativeQueryError(
    json(500, {
      error: "Unsupported operation",
      errorClass,
      host: HISTORICAL,
      errorCode: "legacyQueryException",
      persona: "OPERATOR",
      category: "RUNTIME_FAILURE",
      errorMessage: message,
      context: { host: HISTORICAL, errorClass, legacyErrorCode: "Unsupported operation" },
    }),
  );
}
