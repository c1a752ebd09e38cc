/** Markdown output for benchmark results. */

export type Cell = string | number;

/** `figures`: the first column (names) left-aligned, the others right-aligned; `text`: all left-aligned. */
export function markdownTable(
  header: readonly string[],
  rows: readonly (readonly Cell[])[],
  layout: "figures" | "text" = "figures",
): string {
  const align = header.map((_, i) => (i === 0 || layout === "text" ? "---" : "---:"));
  const line = (cells: readonly Cell[]) => `| ${cells.map((c) => String(c)).join(" | ")} |`;
  return [line(header), `|${align.join("|")}|`, ...rows.map(line)].join("\n");
}

/** Fixed decimals, thousands separated. */
export function num(value: number, decimals = 0): string {
  if (!Number.isFinite(value)) return "–";
  return value.toLocaleString("en", { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}

export function seconds(ms: number, decimals = 2): string {
  return `${num(ms / 1000, decimals)} s`;
}

/** A ratio shown as `12.3×`; below 10 with two decimals. */
export function times(ratio: number): string {
  if (!Number.isFinite(ratio)) return "–";
  return `${num(ratio, ratio < 10 ? 2 : 1)}×`;
}

export function percent(fraction: number): string {
  return Number.isFinite(fraction) ? `${num(fraction * 100, 0)} %` : "–";
}
