import { readFileSync } from "node:fs";

/**
 * segops' version: package.json's `version`, the one place it is written. The CLI (`--version`) and the
 * service (the OpenAPI document) read it here; the Python packages' builds read the same file. The path is
 * the same from src/core (run through tsx) and dist/core (installed): the package root is two levels up.
 * Not exported from core/index.ts, so that only the programs that print it read the file.
 */
export const VERSION: string = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;
