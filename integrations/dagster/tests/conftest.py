"""Fixtures: the segops service and Druid emulator that scripts/test.sh started, data, templates.

The tests need a running `segops serve` on the emulator; scripts/test.sh starts both and exports
SEGOPS_TEST_URL, SEGOPS_TEST_TOKEN, SEGOPS_TEST_SIM_URL and SEGOPS_TEST_WORK. Without them every test
errors (never skips): run the tests through scripts/test.sh.
"""

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest
from dagster import DagsterInstance, instance_for_test

from dagster_segops import SegopsClient, SegopsResource

#: Rows per day in the dataset: one every 30 minutes, so any hour holds 2 and any local day 46 to 50.
ROWS_PER_DAY = 48
#: Days with a file (UTC dates); 2026-01-05 is missing on purpose.
DATA_FROM = datetime(2026, 1, 1, tzinfo=timezone.utc)
DATA_DAYS = 20
MISSING_DAY = "2026-01-05"
#: A day whose file holds unparseable lines as well as good ones.
CORRUPT_DAY = "2026-01-15"
#: America/Los_Angeles around its 2026 spring-forward (2026-03-08): UTC days 2026-03-05 to 2026-03-12.
DST_FROM = datetime(2026, 3, 5, tzinfo=timezone.utc)
DST_DAYS = 8


@dataclass(frozen=True)
class Service:
    url: str
    token: str
    sim_url: str
    work: Path

    def resource(self, token: str | None = None) -> SegopsResource:
        return SegopsResource(url=self.url, token=self.token if token is None else token)

    def client(self) -> SegopsClient:
        """segops' Python client, as the tests use it to look at what the asset did."""
        return SegopsClient(self.url, self.token)

    def submissions(self, datasource: str) -> list[dict[str, Any]]:
        """The emulator's log of task submissions (POST /druid/indexer/v1/task) for one datasource."""
        stats = httpx.get(f"{self.sim_url}/__sim/stats", timeout=10).json()
        prefix = f"segops_{datasource}_"
        return [s for s in stats["submissions"] if str(s["id"]).startswith(prefix)]

    def rows(self, datasource: str) -> int:
        """The rows the datasource serves, counted by Druid SQL (the emulator's Broker)."""
        query = {"query": f'SELECT COUNT(*) AS n FROM "{datasource}"'}
        result = httpx.post(f"{self.sim_url}/druid/v2/sql", json=query, timeout=10).json()
        return int(result[0]["n"]) if result else 0

    def accepted(self, datasource: str) -> list[str]:
        """Ids of the submissions Druid accepted (a duplicate id is refused with 400 and reattached)."""
        return [str(s["id"]) for s in self.submissions(datasource) if s["accepted"]]


@pytest.fixture(scope="session")
def service() -> Service:
    names = ["SEGOPS_TEST_URL", "SEGOPS_TEST_TOKEN", "SEGOPS_TEST_SIM_URL", "SEGOPS_TEST_WORK"]
    missing = [n for n in names if not os.environ.get(n)]
    if missing:
        raise RuntimeError(
            f"{', '.join(missing)} not set: run the tests with integrations/dagster/scripts/test.sh, which "
            "starts the Druid emulator and segops serve"
        )
    service = Service(
        url=os.environ["SEGOPS_TEST_URL"],
        token=os.environ["SEGOPS_TEST_TOKEN"],
        sim_url=os.environ["SEGOPS_TEST_SIM_URL"],
        work=Path(os.environ["SEGOPS_TEST_WORK"]),
    )
    ready = httpx.get(f"{service.url}/readyz", timeout=10)
    assert ready.status_code == 200, ready.text
    return service


def _iso(t: datetime) -> str:
    return t.isoformat().replace("+00:00", "Z")


def write_day(directory: Path, day: datetime, *, corrupt: bool = False, rows: int = ROWS_PER_DAY) -> Path:
    """One JSON-lines file for a UTC day, ``rows`` rows spread over it (and, when ``corrupt``, a line that
    is not JSON after every fourth row)."""
    lines = []
    for i in range(rows):
        ts = day + timedelta(seconds=i * 86_400 // rows)
        lines.append(json.dumps({"ts": _iso(ts), "channel": f"#c{i % 5}", "page": f"p{i % 11}", "added": i}))
        if corrupt and i % 4 == 3:
            lines.append("{not json")
    path = directory / f"events-{day:%Y-%m-%d}.json"
    path.write_text("\n".join(lines) + "\n")
    return path


def write_dataset(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for d in range(DATA_DAYS):
        day = DATA_FROM + timedelta(days=d)
        if f"{day:%Y-%m-%d}" != MISSING_DAY:
            write_day(directory, day, corrupt=f"{day:%Y-%m-%d}" == CORRUPT_DAY)
    for d in range(DST_DAYS):
        write_day(directory, DST_FROM + timedelta(days=d))
    return directory


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_dataset(tmp_path_factory.mktemp("data"))


def template(datasource: str, segment_granularity: Any = "day") -> dict[str, Any]:
    """An index_parallel template reading one day file per partition (the file of the window's UTC start
    date), replacing the partition's chunks."""
    return {
        "type": "index_parallel",
        "spec": {
            "dataSchema": {
                "dataSource": datasource,
                "timestampSpec": {"column": "ts", "format": "iso"},
                "dimensionsSpec": {"dimensions": ["channel", "page"]},
                "metricsSpec": [
                    {"type": "count", "name": "count"},
                    {"type": "longSum", "name": "added", "fieldName": "added"},
                ],
                "granularitySpec": {
                    "segmentGranularity": segment_granularity,
                    "queryGranularity": "none",
                    "rollup": False,
                },
            },
            "ioConfig": {
                "type": "index_parallel",
                "inputSource": {
                    "type": "local",
                    "baseDir": "{{var.dataDir}}",
                    "filter": "events-{{start:yyyy-MM-dd}}.json",
                },
                "inputFormat": {"type": "json"},
                "appendToExisting": False,
                "dropExisting": True,
            },
            "tuningConfig": {
                "type": "index_parallel",
                "maxNumConcurrentSubTasks": 1,
                "partitionsSpec": {"type": "dynamic"},
            },
        },
    }


@pytest.fixture(scope="module")
def instance() -> Iterator[DagsterInstance]:
    """A Dagster instance in a temporary DAGSTER_HOME (SQLite run and event storage), one per module."""
    with instance_for_test() as inst:
        yield inst
