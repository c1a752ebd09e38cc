"""pydruid's PyDruid client (native queries, POST /druid/v2/) against the emulator.

The expected values are the ones a real Druid 33 answered for the same rows (test/conformance/native-druid33.json).
"""

from __future__ import annotations

import pytest
from pydruid.client import PyDruid
from pydruid.utils.aggregators import count, doublesum, filtered, longmax, longsum
from pydruid.utils.filters import Bound, Dimension, Filter
from pydruid.utils.postaggregator import Const, Field

INTERVALS = "2026-01-01/2026-01-03"


@pytest.fixture
def client(sim_url: str) -> PyDruid:
    return PyDruid(sim_url, "druid/v2")


def test_timeseries_per_day_with_a_filter_and_post_aggregators(client: PyDruid, datasource: str) -> None:
    result = client.timeseries(
        datasource=datasource,
        granularity="day",
        intervals=INTERVALS,
        aggregations={
            "n": count("added"),
            "added": longsum("added"),
            "mx": longmax("added"),
            "en": filtered(Dimension("channel") == "#en", count("added")),
        },
        post_aggregations={"avg": Field("added") / Field("n"), "twice": Field("n") * Const(2)},
        filter=Dimension("page") != "p1",
    )
    assert result.result == [
        {
            "timestamp": "2026-01-01T00:00:00.000Z",
            "result": {"n": 5, "added": 210, "mx": 70, "en": 1, "avg": 42.0, "twice": 10.0},
        },
        {
            "timestamp": "2026-01-02T00:00:00.000Z",
            "result": {"n": 5, "added": 210, "mx": 70, "en": 1, "avg": 42.0, "twice": 10.0},
        },
    ]


def test_topn_ranks_by_a_metric_ties_by_value_null_first(client: PyDruid, datasource: str) -> None:
    result = client.topn(
        datasource=datasource,
        granularity="all",
        intervals=INTERVALS,
        dimension="channel",
        metric="added",
        threshold=3,
        aggregations={"n": count("added"), "added": longsum("added")},
    )
    assert result.result == [
        {
            "timestamp": "2026-01-01T00:15:00.000Z",
            "result": [
                {"channel": None, "n": 4, "added": 240},
                {"channel": "#de", "n": 4, "added": 200},
                {"channel": "#fr", "n": 4, "added": 160},
            ],
        }
    ]


def test_groupby_with_a_bound_filter_and_limit_spec(client: PyDruid, datasource: str) -> None:
    result = client.groupby(
        datasource=datasource,
        granularity="all",
        intervals=INTERVALS,
        dimensions=["page"],
        aggregations={"s": longsum("added"), "d": doublesum("delta")},
        filter=Bound("added", "20", "60", ordering="numeric"),
        limit_spec={
            "type": "default",
            "limit": 2,
            "columns": [{"dimension": "s", "direction": "descending", "dimensionOrder": "numeric"}],
        },
    )
    assert result.result == [
        {
            "version": "v1",
            "timestamp": "2026-01-01T00:00:00.000Z",
            "event": {"page": "p2", "s": 180, "d": -6.0},
        },
        {
            "version": "v1",
            "timestamp": "2026-01-01T00:00:00.000Z",
            "event": {"page": "p1", "s": 140, "d": 6.0},
        },
    ]


def test_scan_lists_rows_of_a_segment(client: PyDruid, datasource: str) -> None:
    result = client.scan(
        datasource=datasource,
        granularity="all",
        intervals="2026-01-01T00/2026-01-01T07",
        columns=["__time", "channel", "added"],
        filter=Filter(type="regex", dimension="channel", pattern="^#"),
        limit=5,
    )
    [batch] = result.result
    assert batch["segmentId"].startswith(f"{datasource}_2026-01-01T00:00:00.000Z_2026-01-02T00:00:00.000Z_")
    assert batch["columns"] == ["__time", "channel", "added"]
    assert batch["events"] == [
        {"__time": 1767226500000, "channel": "#en", "added": 10},
        {"__time": 1767237300000, "channel": "#fr", "added": 20},
        {"__time": 1767248100000, "channel": "#de", "added": 30},
    ]


def test_segment_metadata_merged(client: PyDruid, datasource: str) -> None:
    result = client.segment_metadata(datasource=datasource, merge=True, intervals=INTERVALS)
    [merged] = result.result
    assert merged["id"] == f"{datasource}_2026-01-02T00:00:00.000Z_2026-01-03T00:00:00.000Z_merged"
    assert merged["numRows"] == 16
    assert merged["intervals"] == ["2026-01-01T00:00:00.000Z/2026-01-03T00:00:00.000Z"]
    assert {name: c["type"] for name, c in merged["columns"].items()} == {
        "__time": "LONG",
        "channel": "STRING",
        "page": "STRING",
        "added": "LONG",
        "delta": "DOUBLE",
    }
    assert merged["columns"]["channel"]["cardinality"] == 4
    assert merged["columns"]["channel"]["hasNulls"] is True


def test_time_boundary(client: PyDruid, datasource: str) -> None:
    result = client.time_boundary(datasource=datasource)
    assert result.result == [
        {
            "timestamp": "2026-01-01T00:15:00.000Z",
            "result": {"minTime": "2026-01-01T00:15:00.000Z", "maxTime": "2026-01-02T21:15:00.000Z"},
        }
    ]


def test_a_refused_query_raises_with_druids_message(client: PyDruid, datasource: str) -> None:
    with pytest.raises(OSError, match="Must have a valid, non-null fieldName"):
        client.timeseries(
            datasource=datasource,
            granularity="all",
            intervals=INTERVALS,
            aggregations={"s": {"type": "longSum"}},
        )
