"""Dagster time-window partitions as a segops (Druid) partition granularity.

A single-run backfill over many partition keys becomes one segops backfill, and segops cuts its range
into Druid's own buckets of a granularity. For that backfill to hold exactly one segops partition per
Dagster partition key, the granularity must bucket time as the partitions definition does. This module
finds it from the windows themselves (so any cron schedule and any time zone work, as long as the
windows are regular) and proves it by walking the buckets as Druid would
(``PeriodGranularity``: years, months, weeks and days count in local wall time from the origin; hours,
minutes and seconds are absolute durations) before anything is created:

- daily windows at local midnight: ``{"type": "period", "period": "P1D", "timeZone": TZ}``;
- windows that do not start where Druid's default origin puts them (weekly from Sunday, daily from
  06:00, hourly at :30, every 15 minutes, monthly on the 5th): the same with ``"origin"`` = the range's
  first window start;
- windows that are not one period apart (a weekday-only schedule): :class:`GranularityMismatch`, naming
  the first window that does not fit; pass the granularity explicitly, or backfill key by key.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

__all__ = ["GranularityMismatch", "Period", "granularity_for_windows", "period_of_window"]

Window = tuple[datetime, datetime]


class GranularityMismatch(ValueError):
    """The partitions' windows are not the buckets of one Druid period granularity."""


@dataclass(frozen=True)
class Period:
    """One ISO-8601 period field: ``unit`` in years, months, weeks, days (calendar, in local wall time)
    or hours, minutes, seconds (absolute)."""

    unit: str
    size: int

    @property
    def iso(self) -> str:
        letter = {
            "years": "Y",
            "months": "M",
            "weeks": "W",
            "days": "D",
            "hours": "H",
            "minutes": "M",
            "seconds": "S",
        }[self.unit]
        time_part = self.unit in ("hours", "minutes", "seconds")
        return f"P{'T' if time_part else ''}{self.size}{letter}"

    @property
    def calendar(self) -> bool:
        return self.unit in ("years", "months", "weeks", "days")


def _utc(instant: datetime) -> datetime:
    return instant.astimezone(timezone.utc)


def _local(instant: datetime, zone: ZoneInfo) -> datetime:
    return instant.astimezone(zone).replace(tzinfo=None)


def _months_between(a: datetime, b: datetime) -> int:
    return (b.year - a.year) * 12 + (b.month - a.month)


def period_of_window(start: datetime, end: datetime, zone: ZoneInfo) -> Period:
    """The period one window spans: calendar fields when start and end share the local time of day (and
    day of month, for months), else an absolute duration in hours, minutes or seconds."""
    a, b = _local(start, zone), _local(end, zone)
    if a.time() == b.time() and b.date() > a.date():
        months = _months_between(a, b)
        if a.day == b.day and months > 0:
            return Period("years", months // 12) if months % 12 == 0 else Period("months", months)
        days = (b.date() - a.date()).days
        return Period("weeks", days // 7) if days % 7 == 0 else Period("days", days)
    # Aware datetimes of one tzinfo subtract as wall times in Python: compare instants in UTC.
    seconds = (_utc(end) - _utc(start)).total_seconds()
    if seconds <= 0 or seconds != int(seconds):
        raise GranularityMismatch(
            f"window {start.isoformat()}/{end.isoformat()} is not a whole number of seconds"
        )
    s = int(seconds)
    if s % 3600 == 0:
        return Period("hours", s // 3600)
    if s % 60 == 0:
        return Period("minutes", s // 60)
    return Period("seconds", s)


def _add(origin: datetime, period: Period, k: int, zone: ZoneInfo) -> datetime:
    """``origin + k·period`` as Druid's PeriodGranularity adds it (calendar fields in local wall time, a
    wall time in a DST gap moved forward by the gap; time fields as absolute durations)."""
    if not period.calendar:
        step = {"hours": 3600, "minutes": 60, "seconds": 1}[period.unit] * period.size
        return _utc(origin) + timedelta(seconds=step * k)
    local = _local(origin, zone)
    if period.unit in ("years", "months"):
        months = period.size * k * (12 if period.unit == "years" else 1)
        total = local.year * 12 + (local.month - 1) + months
        year, month = divmod(total, 12)
        month += 1
        day = min(local.day, _days_in_month(year, month))
        local = local.replace(year=year, month=month, day=day)
    else:
        local = local + timedelta(days=period.size * k * (7 if period.unit == "weeks" else 1))
    # fold=0 takes the earlier offset of an ambiguous wall time and moves one in a gap forward by the gap.
    return local.replace(tzinfo=zone).astimezone(timezone.utc)


def _days_in_month(year: int, month: int) -> int:
    nxt = datetime(year + (month == 12), month % 12 + 1, 1)
    return (nxt - timedelta(days=1)).day


def _default_origin_fits(start: datetime, period: Period, zone: ZoneInfo) -> bool:
    """Whether Druid's default origin (none given) puts a bucket start at ``start``: a single field of
    size 1 truncates local wall time (to the local hour, midnight, Monday, the 1st, 1 January)."""
    if period.size != 1:
        return False
    t = _local(start, zone)
    midnight = t.time() == datetime.min.time()
    return {
        "seconds": t.microsecond == 0,
        "minutes": t.second == 0 and t.microsecond == 0,
        "hours": t.minute == 0 and t.second == 0 and t.microsecond == 0,
        "days": midnight,
        "weeks": midnight and t.weekday() == 0,
        "months": midnight and t.day == 1,
        "years": midnight and t.day == 1 and t.month == 1,
    }[period.unit]


def granularity_for_windows(windows: Sequence[Window], timezone_name: str) -> str:
    """The segops ``granularity`` (JSON text of a Druid period granularity) whose buckets over
    ``[windows[0].start, windows[-1].end)`` are exactly ``windows``; raises :class:`GranularityMismatch`
    when there is none of one period."""
    if not windows:
        raise GranularityMismatch("no partition windows")
    zone = ZoneInfo(timezone_name)
    windows = [(_utc(s), _utc(e)) for s, e in windows]
    first_start, first_end = windows[0]
    period = period_of_window(first_start, first_end, zone)
    for k, (start, end) in enumerate(windows):
        want = (_add(first_start, period, k, zone), _add(first_start, period, k + 1, zone))
        if (start, end) != want:
            raise GranularityMismatch(
                f"the partition window {start.isoformat()}/{end.isoformat()} is not a {period.iso} bucket in "
                f"{timezone_name} counted from {first_start.isoformat()} "
                f"(expected {want[0].isoformat()}/{want[1].isoformat()}): the windows are not one Druid "
                "period granularity; pass backfill_granularity= explicitly, or materialise key by key"
            )
    spec: dict[str, str] = {"type": "period", "period": period.iso, "timeZone": timezone_name}
    if not _default_origin_fits(first_start, period, zone):
        spec["origin"] = first_start.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")
    return json.dumps(spec, separators=(",", ":"))
