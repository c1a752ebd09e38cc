"""Ingests one small datasource into the emulator that scripts/test.sh started, and waits until it is served.

The rows are the native conformance cases' (test/conformance/native-cases.ts): two days of eight rows, every third
hour; channel null every fourth row; a long and a double column.
"""

from __future__ import annotations

import json
import os
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

DATASOURCE = "pydruid_wiki"
INTERVAL = "2026-01-01T00:00:00.000Z/2026-01-03T00:00:00.000Z"


def rows() -> list[dict[str, object]]:
    channels = ["#en", "#fr", "#de", None]
    return [
        {
            "time": f"{day}T{i * 3:02d}:15:00Z",
            "channel": channels[i % 4],
            "page": f"p{i % 3}",
            "added": (i + 1) * 10,
            "delta": (-1 if i % 2 else 1) * (i + 0.5),
        }
        for day in ("2026-01-01", "2026-01-02")
        for i in range(8)
    ]


def _call(url: str, body: object | None = None) -> object:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data, {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as res:
        return json.loads(res.read() or b"null")


def _wait(what: str, probe, patience_s: float = 120.0) -> None:
    # Polls until the state is reached; the patience only bounds a wait that never ends (a real Druid takes seconds
    # to ingest and hand off; the emulator at --time-scale 100 tenths of a second).
    give_up = time.monotonic() + patience_s
    while not probe():
        if time.monotonic() > give_up:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.05)


@pytest.fixture(scope="session")
def sim_url() -> str:
    url = os.environ.get("SEGOPS_TEST_SIM_URL")
    if not url:
        raise RuntimeError("SEGOPS_TEST_SIM_URL is not set: run integrations/pydruid/scripts/test.sh")
    return url.rstrip("/")


@pytest.fixture(scope="session")
def datasource(sim_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data_dir: Path = tmp_path_factory.mktemp("input")
    (data_dir / "rows.json").write_text("".join(json.dumps(r) + "\n" for r in rows()))
    task_id = f"pydruid_{uuid.uuid4().hex[:12]}"
    spec = {
        "type": "index_parallel",
        "id": task_id,
        "spec": {
            "dataSchema": {
                "dataSource": DATASOURCE,
                "timestampSpec": {"column": "time", "format": "iso"},
                "dimensionsSpec": {
                    "dimensions": [
                        "channel",
                        "page",
                        {"type": "long", "name": "added"},
                        {"type": "double", "name": "delta"},
                    ]
                },
                "granularitySpec": {"segmentGranularity": "day", "queryGranularity": "none", "rollup": False},
            },
            "ioConfig": {
                "type": "index_parallel",
                "inputSource": {"type": "local", "baseDir": str(data_dir), "filter": "*.json"},
                "inputFormat": {"type": "json"},
            },
            "tuningConfig": {"type": "index_parallel", "partitionsSpec": {"type": "dynamic"}},
        },
    }
    _call(f"{sim_url}/druid/indexer/v1/task", spec)

    def succeeded() -> bool:
        status = _call(f"{sim_url}/druid/indexer/v1/task/{task_id}/status")["status"]  # type: ignore[index]
        assert status["statusCode"] != "FAILED", status
        return status["statusCode"] == "SUCCESS"

    _wait(f"task {task_id}", succeeded)
    load = (
        f"{sim_url}/druid/coordinator/v1/datasources/{DATASOURCE}/loadstatus"
        f"?forceMetadataRefresh=true&interval={INTERVAL.replace('/', '_')}"
    )
    _wait("the segments to load", lambda: _call(load) == {DATASOURCE: 100})
    yield DATASOURCE
