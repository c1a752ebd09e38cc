/**
 * The cloned Historicals of a Coordinator dynamic config (`cloneServers`: each clone's host → its source's host;
 * Druid 34, apache/druid #17863). A clone loads what its source holds, and Brokers leave clones out of queries by
 * default (apache/druid #17899, `cloneQueryMode` excludeClones): a segment only a clone holds is not served.
 * Pure; an absent or malformed field is no clone.
 */
export function cloneHostsOf(dynamicConfig: unknown): Set<string> {
  const clones =
    typeof dynamicConfig === "object" && dynamicConfig !== null
      ? (dynamicConfig as { cloneServers?: unknown }).cloneServers
      : undefined;
  if (typeof clones !== "object" || clones === null || Array.isArray(clones)) return new Set();
  return new Set(Object.keys(clones));
}
