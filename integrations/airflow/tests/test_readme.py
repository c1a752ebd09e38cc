"""The README's example DAG file as a reader saves it: beside a template named as the example names it, loaded
by Airflow's DagBag (no import error; the two DAGs, their tasks and the declared druid:// asset as the README
describes them), then its daily DAG run with dag.test() for one day against the emulator. The only edits are
the data directory (`/data/wikipedia` is the test's) and the template's content (the README leaves it to the
reader). Airflow 3 only: the example imports Airflow 3's task SDK (`airflow.sdk`), as the README says."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import AIRFLOW_3, DATA_DIR, ROWS_PER_DAY, WORK, Sim, run, states

pytestmark = pytest.mark.skipif(not AIRFLOW_3, reason="the README's example imports Airflow 3's airflow.sdk")

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
DATASOURCE = "af_readme"


def example_source() -> str:
    """The README's example DAG file: its one Python block that defines the daily and the backfill DAG."""
    found: list[str] = [
        body
        for lang, body in BLOCK.findall(README.read_text())
        if lang == "python" and '"wikipedia_daily"' in body and "SegopsBackfillOperator(" in body
    ]
    assert len(found) == 1, f"{len(found)} example DAG blocks in the README"
    return found[0]


@pytest.fixture(scope="module")
def example(migrated_db: Path) -> Any:
    from airflow.dag_processing.dagbag import DagBag, sync_bag_to_db
    from segops_test_support import daily_template

    folder = WORK / "readme-dags"
    folder.mkdir(parents=True, exist_ok=True)
    source = example_source()
    # The data directory is the one edit: it appears once per DAG, and nowhere else.
    assert source.count('"/data/wikipedia"') == 2
    (folder / "readme_example.py").write_text(source.replace('"/data/wikipedia"', json.dumps(str(DATA_DIR))))
    (folder / "wikipedia-daily.json").write_text(json.dumps(daily_template(DATASOURCE)))
    bag = DagBag(dag_folder=str(folder))
    # As the dag-processor would: dag.test() runs a DAG Airflow has serialized (the file is outside the
    # DAGs folder the tests' Airflow is configured with).
    sync_bag_to_db(bag, "dags-folder", None)
    return bag


def test_the_example_loads_as_the_readme_describes(example: Any) -> None:
    assert example.import_errors == {}
    assert set(example.dag_ids) == {"wikipedia_daily", "wikipedia_backfill_2025"}
    daily = example.get_dag("wikipedia_daily")
    assert {t.task_id for t in daily.tasks} == {"ingest", "confirm"}
    assert daily.get_task("confirm").upstream_task_ids == {"ingest"}
    # `druid_host` declares the datasource's asset when the DAG is parsed.
    uris = [getattr(o, "uri", None) for o in daily.get_task("ingest").outlets]
    assert f"druid://router.druid.internal:8888/{DATASOURCE}" in uris
    backfill = example.get_dag("wikipedia_backfill_2025")
    assert [t.task_id for t in backfill.tasks] == ["backfill"]
    assert backfill.get_task("backfill").granularity == "day"


def test_the_daily_dag_runs_a_day_to_done(example: Any, sim: Sim) -> None:
    day = "2026-01-02"
    dag_run = run(example.get_dag("wikipedia_daily"), day)
    assert str(dag_run.state) == "success"
    assert states(dag_run) == {"ingest": ("success", 1), "confirm": ("success", 1)}
    submissions = sim.submissions(DATASOURCE)
    assert len(submissions) == 1
    assert submissions[0]["accepted"]
    assert sim.rows(DATASOURCE) == ROWS_PER_DAY[day]
