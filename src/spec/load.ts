import { readFile } from "node:fs/promises";
import { UsageError } from "../core/errors.js";
import { type LoadedTemplate, parseTemplateText } from "./template.js";

/** Reads and parses a template or spec file (JSON, YAML or SQL; see {@link parseTemplateText}). */
export async function readTemplateFile(path: string): Promise<LoadedTemplate> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why =
      code === "ENOENT" ? "no such file" : code === "EISDIR" ? "it is a directory" : (e as Error).message;
    throw new UsageError(`cannot read template "${path}": ${why}`, { file: path });
  }
  return parseTemplateText(text, path);
}
