/**
 * `?pretty`: the JSON as Jackson's `DefaultPrettyPrinter` writes it (what Druid's `QueryResource` uses): an
 * object's members one per line, indented two spaces a level, `"name" : value`; an array's items on one line
 * between `[ ` and ` ]` (observed on a real Druid 33: `[ {\n  "timestamp" : …\n} ]`).
 */
export function jacksonPretty(value: unknown, level = 0): string {
  if (Array.isArray(value)) {
    return value.length === 0 ? "[ ]" : `[ ${value.map((v) => jacksonPretty(v, level)).join(", ")} ]`;
  }
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value);
    if (entries.length === 0) return "{ }";
    const pad = "  ".repeat(level + 1);
    const members = entries.map(([k, v]) => `${pad}${JSON.stringify(k)} : ${jacksonPretty(v, level + 1)}`);
    return `{\n${members.join(",\n")}\n${"  ".repeat(level)}}`;
  }
  return JSON.stringify(value) ?? "null";
}
