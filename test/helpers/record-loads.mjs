// Registered with `node --import`: records every module URL the process resolves into the file named by
// SEGOPS_RECORD_LOADS, so a test can assert what an import did (or did not) load.
import { register } from "node:module";

register(
  `data:text/javascript,${encodeURIComponent(`
import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(${JSON.stringify(process.env.SEGOPS_RECORD_LOADS ?? "/dev/null")}, resolved.url + "\\n");
  return resolved;
}
`)}`,
);
