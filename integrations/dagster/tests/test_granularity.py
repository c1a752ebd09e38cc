"""Partition windows → segops backfill granularity: the package reads a period off Dagster's windows and the
service plans the backfill (`POST /api/v1/backfills/plan`), so how Druid buckets time is segops' rule alone.
Each test's template declares the segment granularity the windows need (segops refuses partitions it does
not align with), and no test leaves a job behind."""

import json
from datetime import datetime, timezone
from typing import Any

import pytest
from dagster import (
    DailyPartitionsDefinition,
    HourlyPartitionsDefinition,
    TimeWindowPartitionsDefinition,
    WeeklyPartitionsDefinition,
)

from dagster_segops import GranularityMismatch, granularity_for_windows

from .conftest import Service, template


def _windows(pd: TimeWindowPartitionsDefinition, first: str, last: str) -> list[tuple[datetime, datetime]]:
    keys = list(pd.get_partition_keys())
    chosen = keys[keys.index(first) : keys.index(last) + 1]
    assert chosen, (first, last)
    # As Dagster gives them (in the partitions' zone).
    return [(w.start, w.end) for w in (pd.time_window_for_partition_key(k) for k in chosen)]


def _granularity(
    service: Service, pd: TimeWindowPartitionsDefinition, first: str, last: str, segments: Any
) -> dict[str, str]:
    body = {"template": template("dagster_granularity", segments), "vars": {"dataDir": "/nowhere"}}
    with service.client() as client:
        text = granularity_for_windows(client, body, _windows(pd, first, last), pd.timezone)
        assert not [j for j in client.list_jobs()["items"] if "dagster_granularity" in j["id"]]
    return dict(json.loads(text))


def test_utc_days_are_the_default_origins_days(service: Service) -> None:
    pd = DailyPartitionsDefinition(start_date="2026-01-01", end_date="2026-02-01")
    assert _granularity(service, pd, "2026-01-03", "2026-01-09", "day") == {
        "type": "period",
        "period": "P1D",
        "timeZone": "UTC",
    }


def test_local_days_across_a_dst_change_are_p1d_in_the_zone(service: Service) -> None:
    zone = "America/Los_Angeles"
    pd = DailyPartitionsDefinition(start_date="2026-03-01", end_date="2026-03-20", timezone=zone)
    windows = _windows(pd, "2026-03-07", "2026-03-09")
    # Dagster's own windows: the day of the change is 23 hours long; segops plans the same three.
    hours = [
        (e.astimezone(timezone.utc) - s.astimezone(timezone.utc)).total_seconds() / 3600 for s, e in windows
    ]
    assert hours == [24, 23, 24]
    local_day = {"type": "period", "period": "P1D", "timeZone": zone}
    assert _granularity(service, pd, "2026-03-07", "2026-03-09", local_day) == local_day


def test_weeks_from_sunday_are_planned_from_an_origin(service: Service) -> None:
    # Druid's weeks start on Monday: segops refuses Monday weeks for this template, and plans Sunday ones.
    pd = WeeklyPartitionsDefinition(start_date="2026-01-04", end_date="2026-03-01")
    sundays = {"type": "period", "period": "P1W", "timeZone": "UTC", "origin": "2026-01-11T00:00:00Z"}
    assert _granularity(service, pd, "2026-01-11", "2026-02-01", sundays) == sundays


def test_hours_at_half_past_are_planned_from_an_origin(service: Service) -> None:
    pd = HourlyPartitionsDefinition(
        start_date="2026-01-01-00:30", end_date="2026-01-02-00:30", minute_offset=30
    )
    keys = list(pd.get_partition_keys())
    half_past = {"type": "period", "period": "PT1H", "timeZone": "UTC", "origin": "2026-01-01T02:30:00Z"}
    assert _granularity(service, pd, keys[2], keys[6], half_past) == half_past


def test_local_hours_across_spring_forward(service: Service) -> None:
    zone = "America/Los_Angeles"
    pd = HourlyPartitionsDefinition(start_date="2026-03-07-00:00", end_date="2026-03-10-00:00", timezone=zone)
    keys = list(pd.get_partition_keys())
    # 02:00 local does not exist that day: five windows from midnight to 06:00.
    assert len(keys[keys.index("2026-03-08-00:00") : keys.index("2026-03-08-05:00") + 1]) == 5
    hours = {"type": "period", "period": "PT1H", "timeZone": zone}
    assert _granularity(service, pd, "2026-03-08-00:00", "2026-03-08-05:00", hours) == hours


def test_weekday_windows_fit_no_period_and_the_failure_names_the_window(service: Service) -> None:
    pd = TimeWindowPartitionsDefinition(
        cron_schedule="0 0 * * 1-5", start="2026-01-05", end="2026-02-02", fmt="%Y-%m-%d"
    )
    # Monday to Friday: the Friday window runs to Monday, three days, where segops plans one.
    with pytest.raises(GranularityMismatch, match=r"window 2026-01-09T00:00:00Z/2026-01-12") as info:
        _granularity(service, pd, "2026-01-05", "2026-01-13", "day")
    assert "it plans 2026-01-09T00:00:00Z/2026-01-10T00:00:00Z there" in str(info.value)
    assert "backfill_granularity" in str(info.value)


def test_a_template_segops_refuses_is_the_services_refusal(service: Service) -> None:
    pd = DailyPartitionsDefinition(start_date="2026-01-01", end_date="2026-02-01")
    windows = _windows(pd, "2026-01-03", "2026-01-04")
    with service.client() as client, pytest.raises(Exception, match="400") as info:
        granularity_for_windows(client, {"template": "not a template"}, windows, "UTC")
    assert "template" in str(info.value)
