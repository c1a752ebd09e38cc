/**
 * Rows a Druid (or the emulator) serves for a datasource, through Broker SQL: over `[from, to)` (days,
 * `YYYY-MM-DD`), or over all time. What a user would check after a run.
 */
export async function sqlCount(url: string, datasource: string, from?: string, to?: string): Promise<number> {
  const where =
    from !== undefined && to !== undefined
      ? ` WHERE __time >= TIMESTAMP '${from} 00:00:00' AND __time < TIMESTAMP '${to} 00:00:00'`
      : "";
  const res = await fetch(`${url}/druid/v2/sql`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ query: `SELECT COUNT(*) AS n FROM "${datasource}"${where}` }),
  });
  const body = (await res.json()) as Array<{ n: number }>;
  if (!Array.isArray(body)) throw new Error(`SQL failed: ${JSON.stringify(body)}`);
  return body[0]?.n ?? 0;
}

/** The day after `day` (`YYYY-MM-DD`). */
export const nextDay = (day: string): string =>
  new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
