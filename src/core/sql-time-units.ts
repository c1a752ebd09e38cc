/**
 * Calcite's time units as the ISO periods Druid maps them to (`org.apache.druid.sql.calcite.expression.TimeUnits`):
 * what `FLOOR(__time TO DAY)` and `CEIL(… TO unit)` floor by, and what `PARTITIONED BY FLOOR(__time TO unit)`
 * partitions by. A unit not here (MILLISECOND, DECADE…) has no period: Druid refuses it where a period is needed.
 */
export const SQL_TIME_UNIT_PERIODS: Readonly<Record<string, string>> = {
  SECOND: "PT1S",
  MINUTE: "PT1M",
  HOUR: "PT1H",
  DAY: "P1D",
  WEEK: "P1W",
  MONTH: "P1M",
  QUARTER: "P3M",
  YEAR: "P1Y",
};

/** The period of a time unit (upper-case, as Calcite reads it), or undefined when Druid maps it to none. */
export function sqlTimeUnitPeriod(unit: string): string | undefined {
  return Object.hasOwn(SQL_TIME_UNIT_PERIODS, unit) ? SQL_TIME_UNIT_PERIODS[unit] : undefined;
}
