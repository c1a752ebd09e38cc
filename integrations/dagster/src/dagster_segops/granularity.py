"""Dagster time-window partitions as a segops (Druid) partition granularity, proven by the service.

A single-run backfill over many partition keys becomes one segops backfill, and segops cuts its range into
Druid's buckets of a granularity. For that backfill to hold exactly one segops partition per Dagster
partition key, the granularity must bucket time as the partitions definition does. How Druid buckets time
is segops' rule, not this package's: the first window suggests a period (calendar fields when start and
end share the local time of day, else hours, minutes or seconds), and the service plans the backfill with
it (``POST /api/v1/backfills/plan``: nothing is stored) — first with Druid's default origin, then with the
range's first window start as the origin. The first whose planned partitions are exactly the windows is
the granularity; when none is, :class:`GranularityMismatch` names the first window that does not fit.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any
from zoneinfo import ZoneInfo

from segops_client import SegopsApiError, SegopsClient, models

__all__ = ["GranularityMismatch", "granularity_for_windows"]

Window = tuple[datetime, datetime]


class GranularityMismatch(ValueError):
    """The partitions' windows are not the buckets of one Druid period granularity."""


def _iso(instant: datetime) -> str:
    return instant.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def _window(interval: str) -> Window:
    start, end = interval.split("/")
    return (datetime.fromisoformat(start), datetime.fromisoformat(end))


def _period(start: datetime, end: datetime, zone: ZoneInfo) -> str:
    """The ISO period one window spans, read off Dagster's window (the candidate the service checks)."""
    a, b = start.astimezone(zone).replace(tzinfo=None), end.astimezone(zone).replace(tzinfo=None)
    if a.time() == b.time() and b.date() > a.date():
        months = (b.year - a.year) * 12 + (b.month - a.month)
        if a.day == b.day and months > 0:
            return f"P{months // 12}Y" if months % 12 == 0 else f"P{months}M"
        days = (b.date() - a.date()).days
        return f"P{days // 7}W" if days % 7 == 0 else f"P{days}D"
    seconds = (end.astimezone(timezone.utc) - start.astimezone(timezone.utc)).total_seconds()
    if seconds <= 0 or seconds != int(seconds):
        raise GranularityMismatch(
            f"window {start.isoformat()}/{end.isoformat()} is not a whole number of seconds"
        )
    s = int(seconds)
    return f"PT{s // 3600}H" if s % 3600 == 0 else f"PT{s // 60}M" if s % 60 == 0 else f"PT{s}S"


def granularity_for_windows(
    client: SegopsClient,
    body: Mapping[str, Any],
    windows: Sequence[Window],
    timezone_name: str,
) -> str:
    """The segops ``granularity`` (JSON text of a Druid period granularity) whose buckets over
    ``[windows[0].start, windows[-1].end)`` the service plans as exactly ``windows``, for the backfill
    ``body`` (its template, vars, …). Raises :class:`GranularityMismatch` when neither candidate is, or
    the service's refusal of the last one (a template that does not render, say)."""
    if not windows:
        raise GranularityMismatch("no partition windows")
    utc = [(s.astimezone(timezone.utc), e.astimezone(timezone.utc)) for s, e in windows]
    period = _period(utc[0][0], utc[0][1], ZoneInfo(timezone_name))
    spec: dict[str, str] = {"type": "period", "period": period, "timeZone": timezone_name}
    candidates = [spec, {**spec, "origin": _iso(utc[0][0])}]
    planned: list[Window] = []
    refused: SegopsApiError | None = None
    for candidate in candidates:
        granularity = json.dumps(candidate, separators=(",", ":"))
        request = {**body, "from": _iso(utc[0][0]), "to": _iso(utc[-1][1]), "granularity": granularity}
        try:
            plan = client.plan_backfill(_backfill(request))
        except SegopsApiError as error:
            # A candidate whose buckets the template's segment granularity does not align with is refused.
            if error.status != 400:
                raise
            refused = error
            continue
        planned = [_window(p["interval"]) for p in plan["partitions"]]
        if planned == utc:
            return granularity
    if not planned and refused is not None:
        raise refused
    for k, window in enumerate(utc):
        want = planned[k] if k < len(planned) else None
        if window != want:
            shown = f"{_iso(want[0])}/{_iso(want[1])}" if want else "nothing"
            raise GranularityMismatch(
                f"the partition window {_iso(window[0])}/{_iso(window[1])} is not a {period} bucket in "
                f"{timezone_name} as segops plans it (it plans {shown} there): the windows are not one "
                "Druid period granularity; pass backfill_granularity= explicitly, or materialise key by key"
            )
    raise GranularityMismatch(f"segops plans more buckets than the {len(utc)} windows over their range")


def _backfill(request: Mapping[str, Any]) -> models.BackfillRequest:
    # The asset builds the body from its own arguments; the service checks it as it checks a backfill.
    return request  # type: ignore[return-value]
