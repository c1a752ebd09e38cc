/**
 * The route pattern of a Druid API path, as Druid's docs write it (`/druid/indexer/v1/task/{taskId}/status`,
 * here with find-my-way's `:taskId`): metrics label requests by it, so a label names an endpoint, not one
 * task or datasource (which would make one time series per task).
 */
const PARAMETERS: ReadonlyArray<readonly [RegExp, string]> = [
  [/^(\/druid\/indexer\/v1\/task\/)[^/]+(\/.*)?$/, ":taskId"],
  [/^(\/druid\/coordinator\/v1\/metadata\/datasources\/)[^/]+(\/.*)?$/, ":dataSource"],
  // The served view of one interval: the interval is a parameter too, or every interval would be its own label.
  [
    /^(\/druid\/coordinator\/v1\/datasources\/)[^/]+\/intervals\/[^/]+(\/.*)?$/,
    ":dataSource/intervals/:interval",
  ],
  [/^(\/druid\/coordinator\/v1\/datasources\/)[^/]+(\/.*)?$/, ":dataSource"],
  [/^(\/druid\/coordinator\/v1\/rules\/)[^/]+(\/.*)?$/, ":dataSource"],
  [/^(\/druid\/indexer\/v1\/datasources\/)[^/]+(\/.*)?$/, ":dataSource"],
];

export function routeOf(path: string): string {
  const bare = path.split("?")[0] ?? path;
  for (const [pattern, name] of PARAMETERS) {
    const m = pattern.exec(bare);
    if (m) return `${m[1]}${name}${m[2] ?? ""}`;
  }
  return bare;
}
