"""Partition windows → segops backfill granularity, on real Dagster partitions definitions (no service)."""

import json
from datetime import datetime, timezone

import pytest
from dagster import (
    DailyPartitionsDefinition,
    HourlyPartitionsDefinition,
    MonthlyPartitionsDefinition,
    TimeWindowPartitionsDefinition,
    WeeklyPartitionsDefinition,
)

from dagster_segops import GranularityMismatch, granularity_for_windows


def _windows(pd: TimeWindowPartitionsDefinition, first: str, last: str) -> list[tuple[datetime, datetime]]:
    keys = list(pd.get_partition_keys())
    chosen = keys[keys.index(first) : keys.index(last) + 1]
    assert chosen, (first, last)
    return [
        (w.start.astimezone(timezone.utc), w.end.astimezone(timezone.utc))
        for w in (pd.time_window_for_partition_key(k) for k in chosen)
    ]


def _granularity(pd: TimeWindowPartitionsDefinition, first: str, last: str) -> dict[str, str]:
    return dict(json.loads(granularity_for_windows(_windows(pd, first, last), pd.timezone)))


def test_utc_days_are_p1d_without_origin() -> None:
    pd = DailyPartitionsDefinition(start_date="2026-01-01", end_date="2026-02-01")
    assert _granularity(pd, "2026-01-03", "2026-01-09") == {
        "type": "period",
        "period": "P1D",
        "timeZone": "UTC",
    }


def test_local_days_across_a_dst_change_are_p1d_in_the_zone() -> None:
    pd = DailyPartitionsDefinition(
        start_date="2026-03-01", end_date="2026-03-20", timezone="America/Los_Angeles"
    )
    windows = _windows(pd, "2026-03-07", "2026-03-09")
    # Dagster's own windows: the day of the change is 23 hours long.
    assert [(e - s).total_seconds() / 3600 for s, e in windows] == [24, 23, 24]
    assert json.loads(granularity_for_windows(windows, pd.timezone)) == {
        "type": "period",
        "period": "P1D",
        "timeZone": "America/Los_Angeles",
    }


def test_hours_in_a_half_hour_zone_are_local_hours() -> None:
    pd = HourlyPartitionsDefinition(
        start_date="2026-01-01-00:00", end_date="2026-01-03-00:00", timezone="Asia/Kolkata"
    )
    assert _granularity(pd, "2026-01-01-05:00", "2026-01-01-09:00") == {
        "type": "period",
        "period": "PT1H",
        "timeZone": "Asia/Kolkata",
    }


def test_hours_at_half_past_need_an_origin() -> None:
    pd = HourlyPartitionsDefinition(
        start_date="2026-01-01-00:30", end_date="2026-01-02-00:30", minute_offset=30
    )
    keys = list(pd.get_partition_keys())
    got = _granularity(pd, keys[2], keys[6])
    assert got == {
        "type": "period",
        "period": "PT1H",
        "timeZone": "UTC",
        "origin": "2026-01-01T02:30:00Z",
    }


def test_weeks_from_sunday_need_an_origin_druid_weeks_start_on_monday() -> None:
    pd = WeeklyPartitionsDefinition(start_date="2026-01-04", end_date="2026-03-01")  # Sundays
    got = _granularity(pd, "2026-01-11", "2026-02-01")
    assert got == {
        "type": "period",
        "period": "P1W",
        "timeZone": "UTC",
        "origin": "2026-01-11T00:00:00Z",
    }
    monday = WeeklyPartitionsDefinition(start_date="2026-01-05", end_date="2026-03-02", day_offset=1)
    assert "origin" not in _granularity(monday, "2026-01-12", "2026-02-02")


def test_months_on_the_fifth_in_a_zone() -> None:
    pd = MonthlyPartitionsDefinition(
        start_date="2026-01-05", end_date="2027-01-05", day_offset=5, timezone="Europe/Berlin"
    )
    got = _granularity(pd, "2026-02-05", "2026-06-05")
    assert got == {
        "type": "period",
        "period": "P1M",
        "timeZone": "Europe/Berlin",
        "origin": datetime(2026, 2, 4, 23, tzinfo=timezone.utc).isoformat().replace("+00:00", "Z"),
    }
    first = MonthlyPartitionsDefinition(start_date="2026-01-01", end_date="2027-01-01")
    assert _granularity(first, "2026-02-01", "2026-11-01") == {
        "type": "period",
        "period": "P1M",
        "timeZone": "UTC",
    }


def test_quarter_hours_are_pt15m_from_an_origin() -> None:
    pd = TimeWindowPartitionsDefinition(
        cron_schedule="*/15 * * * *", start="2026-01-01-00:00", end="2026-01-01-06:00", fmt="%Y-%m-%d-%H:%M"
    )
    got = _granularity(pd, "2026-01-01-01:15", "2026-01-01-03:00")
    assert got["period"] == "PT15M"
    assert got["origin"] == "2026-01-01T01:15:00Z"


def test_weekday_windows_are_no_period_and_say_which_window() -> None:
    pd = TimeWindowPartitionsDefinition(
        cron_schedule="0 0 * * 1-5", start="2026-01-05", end="2026-02-02", fmt="%Y-%m-%d"
    )
    # Monday to Friday: the Friday window runs to Monday, three days, where the others are one.
    with pytest.raises(GranularityMismatch, match=r"window 2026-01-09T00:00:00\+00:00/2026-01-12") as info:
        granularity_for_windows(_windows(pd, "2026-01-05", "2026-01-13"), pd.timezone)
    assert "backfill_granularity" in str(info.value)


def test_a_single_window_is_its_own_period() -> None:
    pd = DailyPartitionsDefinition(start_date="2026-01-01", end_date="2026-02-01", hour_offset=6)
    got = _granularity(pd, "2026-01-10", "2026-01-10")
    assert got == {"type": "period", "period": "P1D", "timeZone": "UTC", "origin": "2026-01-10T06:00:00Z"}


def test_local_hours_across_spring_forward_from_dagsters_own_datetimes() -> None:
    pd = HourlyPartitionsDefinition(
        start_date="2026-03-07-00:00", end_date="2026-03-10-00:00", timezone="America/Los_Angeles"
    )
    keys = list(pd.get_partition_keys())
    chosen = keys[keys.index("2026-03-08-00:00") : keys.index("2026-03-08-05:00") + 1]
    # Dagster's windows as it gives them (in the zone): 02:00 local does not exist that day.
    windows = [(w.start, w.end) for w in (pd.time_window_for_partition_key(k) for k in chosen)]
    assert len(windows) == 5
    assert json.loads(granularity_for_windows(windows, pd.timezone)) == {
        "type": "period",
        "period": "PT1H",
        "timeZone": "America/Los_Angeles",
    }
