"""Test setup. scripts/test.sh starts the Druid emulator and `segops serve` and exports where they are:

- SEGOPS_TEST_URL: the service; SEGOPS_TEST_TOKEN_FILE: its API token
- SEGOPS_TEST_SIM_URL: the emulator (its submission log: GET /__sim/stats)
- SEGOPS_TEST_WORK: a fresh directory for this run (data, Airflow homes, logs)

Airflow reads its configuration when first imported, so everything is set here, before any test module
imports it.
"""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

HERE = Path(__file__).resolve().parent
#: Whether the tests run on Airflow 3 (else 2.10), read without importing Airflow (it reads its
#: configuration when imported, and the environment is set below).
AIRFLOW_3 = int(importlib.metadata.version("apache-airflow").split(".")[0]) >= 3


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
DB = DAGTEST_HOME / "airflow.db"  # the metadata DB of the dag.test() runs
UTC = dt.timezone.utc
PRISTINE_DB = WORK / "airflow-migrated.db"
ROWS_PER_DAY = {"2026-01-01": 24, "2026-01-02": 36, "2026-01-03": 48}
GOOD_DAYS = {**ROWS_PER_DAY, "2026-02-01": 20, "2026-02-02": 20, "2026-02-03": 20, "2026-03-01": 12}
CORRUPT_DAY = "2026-01-04"  # one line is not JSON: Druid fails the task (max parse exceptions 0)
MISSING_DAY = "2026-01-05"  # no file: 0 rows, below min_rows


def write_day(directory: Path, day: str, rows: int) -> Path:
    """The JSON-lines file of one day (`rows` rows spread over it), as segops' test/helpers/dataset.ts
    writes them."""
    directory.mkdir(parents=True, exist_ok=True)
    start = dt.datetime.fromisoformat(day).replace(tzinfo=dt.timezone.utc)
    lines = [
        json.dumps(
            {
                "ts": (start + dt.timedelta(seconds=i * 86_400 // rows)).isoformat().replace("+00:00", "Z"),
                "channel": f"#c{i % 5}",
                "page": f"p{(i * 7) % 11}",
                "added": i % 13 + 1,
            }
        )
        for i in range(rows)
    ]
    path = directory / f"events-{day}.json"
    path.write_text("\n".join(lines) + "\n")
    return path


def write_corrupt_day(directory: Path, day: str) -> Path:
    """A day whose second line is not JSON: Druid fails its task (max parse exceptions 0), every time."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"events-{day}.json"
    path.write_text(
        json.dumps({"ts": f"{day}T01:00:00Z", "channel": "#c1", "page": "p1", "added": 1})
        + "\nthis line is not json\n"
    )
    return path


def write_data(directory: Path) -> None:
    """One JSON-lines file per day."""
    for day, rows in GOOD_DAYS.items():
        write_day(directory, day, rows)
    write_corrupt_day(directory, CORRUPT_DAY)


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
if not AIRFLOW_3:
    # Airflow 2.10's DagRun refers to the FAB provider's user table; its models must be known to load one.
    import airflow.providers.fab.auth_manager.models  # noqa: F401


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
        response = self.client.get(f"/api/v1/jobs/{quote(job_id, safe='')}")
        response.raise_for_status()
        job: dict[str, Any] = response.json()
        return job

    def event_reasons(self, job_id: str) -> list[str]:
        """The reasons of the job's events (its audit trail), oldest first."""
        response = self.client.get(f"/api/v1/jobs/{quote(job_id, safe='')}/events", params={"limit": 1000})
        response.raise_for_status()
        return [str(e["reason"]) for e in response.json()["items"]]


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

    def rows(self, datasource: str) -> int:
        """The rows the datasource serves, counted by Druid SQL (the emulator's Broker)."""
        response = self.client.post(
            "/druid/v2/sql", json={"query": f'SELECT COUNT(*) AS n FROM "{datasource}"'}
        )
        response.raise_for_status()
        result: list[dict[str, Any]] = response.json()
        return int(result[0]["n"]) if result else 0


@pytest.fixture(scope="session")
def segops() -> Segops:
    return Segops()


@pytest.fixture(scope="session")
def sim() -> Sim:
    return Sim()


def query(db: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    """A read of an Airflow metadata DB (SQLite), as another process sees it. Written with Airflow 3's
    names; on Airflow 2.10 its asset tables are read under their names there (datasets)."""
    if not AIRFLOW_3:
        for three, two in (
            ("asset_event", "dataset_event"),
            ("asset_id", "dataset_id"),
            (" asset ", " dataset "),
        ):
            sql = sql.replace(three, two)
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30) as conn:
        return list(conn.execute(sql, args))


def lineage_events(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# dag.test() runs, as tests/test_dag_test.py and tests/test_source_version.py read them.


def run(dag: Any, data_day: str) -> Any:
    """One DAG run whose data interval is `data_day` (a manual run's interval is the day before it)."""
    logical = dt.datetime.fromisoformat(data_day).replace(tzinfo=UTC) + dt.timedelta(days=1)
    return dag_test(dag, logical)


def dag_test(dag: Any, logical: dt.datetime) -> Any:
    """`dag.test()` of the logical date (Airflow 2.10 calls it the execution date)."""
    if AIRFLOW_3:
        return dag.test(logical_date=logical)
    # Airflow 2.10's dag.test() does not write the DAG's assets and aliases to the database (its
    # dag-processor does): an alias event then fails to flush.
    dag.sync_to_db()
    return dag.test(execution_date=logical)


def xcom(dag_id: str, run_id: str, key: str, task_id: str = "ingest") -> Any:
    rows = query(
        DB,
        "select value from xcom where dag_id = ? and run_id = ? and task_id = ? and key = ?",
        dag_id,
        run_id,
        task_id,
        key,
    )
    assert len(rows) == 1, (dag_id, run_id, key, rows)
    return json.loads(rows[0][0])


def states(dag_run: Any) -> dict[str, tuple[str, int]]:
    return {ti.task_id: (str(ti.state), ti.try_number) for ti in dag_run.get_task_instances()}
