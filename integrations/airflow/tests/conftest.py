"""Test setup. scripts/test.sh starts the Druid emulator and `segops serve` and exports where they are:

- SEGOPS_TEST_URL: the service; SEGOPS_TEST_TOKEN_FILE: its API token
- SEGOPS_TEST_SIM_URL: the emulator (its submission log: GET /__sim/stats)
- SEGOPS_TEST_WORK: a fresh directory for this run (data, Airflow homes, logs)

Airflow reads its configuration when first imported, so everything is set here, before any test module
imports it.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

HERE = Path(__file__).resolve().parent


def _required(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"{name} is not set: run the tests with integrations/airflow/scripts/test.sh")
    return value


WORK = Path(_required("SEGOPS_TEST_WORK"))
SEGOPS_URL = _required("SEGOPS_TEST_URL")
SIM_URL = _required("SEGOPS_TEST_SIM_URL")
TOKEN = Path(_required("SEGOPS_TEST_TOKEN_FILE")).read_text().strip()
DATA_DIR = WORK / "data"
DAGTEST_HOME = WORK / "airflow-dagtest"
PRISTINE_DB = WORK / "airflow-migrated.db"
ROWS_PER_DAY = {"2026-01-01": 24, "2026-01-02": 36, "2026-01-03": 48}
GOOD_DAYS = {**ROWS_PER_DAY, "2026-02-01": 20, "2026-02-02": 20, "2026-02-03": 20, "2026-03-01": 12}
CORRUPT_DAY = "2026-01-04"  # one line is not JSON: Druid fails the task (max parse exceptions 0)
MISSING_DAY = "2026-01-05"  # no file: 0 rows, below min_rows


def write_data(directory: Path) -> None:
    """One JSON-lines file per day (as segops' test/helpers/dataset.ts writes them)."""
    directory.mkdir(parents=True, exist_ok=True)
    for day, rows in GOOD_DAYS.items():
        start = dt.datetime.fromisoformat(day).replace(tzinfo=dt.timezone.utc)
        lines = [
            json.dumps(
                {
                    "ts": (start + dt.timedelta(seconds=i * 86_400 // rows))
                    .isoformat()
                    .replace("+00:00", "Z"),
                    "channel": f"#c{i % 5}",
                    "page": f"p{(i * 7) % 11}",
                    "added": i % 13 + 1,
                }
            )
            for i in range(rows)
        ]
        (directory / f"events-{day}.json").write_text("\n".join(lines) + "\n")
    (directory / f"events-{CORRUPT_DAY}.json").write_text(
        json.dumps({"ts": f"{CORRUPT_DAY}T01:00:00Z", "channel": "#c1", "page": "p1", "added": 1})
        + "\nthis line is not json\n"
    )


def airflow_env(home: Path, dags_folder: Path, lineage_file: Path) -> dict[str, str]:
    """The configuration both Airflow setups share (a SQLite metadata DB under `home`)."""
    return {
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(dags_folder),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
        "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(
            {"type": "file", "log_file_path": str(lineage_file), "append": True}
        ),
        "AIRFLOW__OPENLINEAGE__NAMESPACE": "segops-test",
        "AIRFLOW_CONN_SEGOPS_DEFAULT": json.dumps(
            {"conn_type": "segops", "host": SEGOPS_URL, "password": TOKEN, "extra": {"poll_timeout": 30}}
        ),
        # DAG files import segops_test_support from here.
        "PYTHONPATH": os.pathsep.join([str(HERE / "dags"), os.environ.get("PYTHONPATH", "")]).rstrip(
            os.pathsep
        ),
        "SEGOPS_TEST_DATA_DIR": str(DATA_DIR),
        "SEGOPS_TEST_SIM_URL": SIM_URL,
    }


write_data(DATA_DIR)
DAGTEST_HOME.mkdir(parents=True, exist_ok=True)
os.environ.update(airflow_env(DAGTEST_HOME, HERE / "dags", WORK / "lineage-dagtest.jsonl"))
sys.path.insert(0, str(HERE / "dags"))


@pytest.fixture(scope="session")
def migrated_db() -> Path:
    """`airflow db migrate` once; a copy of the fresh database is kept for the scheduler test."""
    if not PRISTINE_DB.exists():
        subprocess.run(
            [str(Path(sys.executable).with_name("airflow")), "db", "migrate"],
            check=True,
            env=os.environ.copy(),
            stdout=(WORK / "airflow-db-migrate.log").open("w"),
            stderr=subprocess.STDOUT,
            timeout=300,
        )
        shutil.copyfile(DAGTEST_HOME / "airflow.db", PRISTINE_DB)
    return PRISTINE_DB


class Segops:
    """The service, as a test sees it (its own HTTP client, not the provider's)."""

    def __init__(self) -> None:
        self.client = httpx.Client(
            base_url=SEGOPS_URL, headers={"authorization": f"Bearer {TOKEN}"}, timeout=30
        )

    def job(self, job_id: str) -> dict[str, Any]:
        from urllib.parse import quote

        response = self.client.get(f"/api/v1/jobs/{quote(job_id, safe='')}")
        response.raise_for_status()
        job: dict[str, Any] = response.json()
        return job


class Sim:
    """The emulator's submission log and task events."""

    def __init__(self) -> None:
        self.client = httpx.Client(base_url=SIM_URL, timeout=30)
        self.host = httpx.URL(SIM_URL).netloc.decode()

    def stats(self) -> dict[str, Any]:
        response = self.client.get("/__sim/stats")
        response.raise_for_status()
        stats: dict[str, Any] = response.json()
        return stats

    def submissions(self, datasource: str) -> list[dict[str, Any]]:
        """Every submission of a Druid task of `datasource`; segops' ids are `segops_<ds>_<interval>_…`,
        `segops-<nonce>_<ds>_…` for a `new` job."""
        pattern = re.compile(rf"^segops(-[0-9a-z]+)?_{re.escape(datasource)}_\d")
        return [s for s in self.stats()["submissions"] if pattern.match(s.get("id") or "")]

    def task_events(self, task_id: str) -> list[str]:
        return [e["event"] for e in self.stats()["tasks"].get(task_id, [])]


@pytest.fixture(scope="session")
def segops() -> Segops:
    return Segops()


@pytest.fixture(scope="session")
def sim() -> Sim:
    return Sim()


def query(db: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    """A read of an Airflow metadata DB (SQLite), as another process sees it."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30) as conn:
        return list(conn.execute(sql, args))


def lineage_events(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
