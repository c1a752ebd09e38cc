"""DAGs run with `dag.test()` (Airflow runs the trigger in-process): three logical dates, a rerun, a forced
retry after the run was created, and a failing partition. Assertions use the emulator's submission log,
the metadata DB, XCom and the OpenLineage file transport."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from conftest import (
    DATA_DIR,
    DB,
    ROWS_PER_DAY,
    UTC,
    WORK,
    Segops,
    Sim,
    dag_test,
    lineage_events,
    query,
    run,
    states,
    xcom,
)


@pytest.fixture(scope="module")
def dags(migrated_db: Path) -> Any:
    import segops_test_dags

    return segops_test_dags


def test_three_logical_dates(dags: Any, sim: Sim, segops: Segops) -> None:
    runs = {day: run(dags.daily, day) for day in ROWS_PER_DAY}
    for day, dag_run in runs.items():
        assert str(dag_run.state) == "success", day
        assert states(dag_run) == {"ingest": ("success", 1), "confirm": ("success", 1)}

    # One Druid submission per partition, each accepted once, and XCom names exactly those tasks.
    submissions = sim.submissions("af_daily")
    assert len(submissions) == 3
    assert all(s["accepted"] for s in submissions)
    by_day: dict[str, dict[str, Any]] = {}
    for day, dag_run in runs.items():
        task_ids = xcom("segops_daily", dag_run.run_id, "druid_task_ids")
        summary = xcom("segops_daily", dag_run.run_id, "return_value")
        assert len(task_ids) == 1
        assert task_ids == summary["druid_task_ids"]
        assert xcom("segops_daily", dag_run.run_id, "version") == summary["versions"][0]
        assert summary["interval"].startswith(f"{day}T00:00:00.000Z/")
        assert summary["totals"]["rows"] == ROWS_PER_DAY[day]
        job = segops.job(xcom("segops_daily", dag_run.run_id, "job_id"))
        assert job["state"] == "done"
        assert job["partitions"][0]["druidTaskId"] == task_ids[0]
        # The sensor waited on the same job and returned its summary.
        assert xcom("segops_daily", dag_run.run_id, "return_value", task_id="confirm")["job_id"] == job["id"]
        by_day[day] = summary
    assert sorted(s["id"] for s in submissions) == sorted(s["druid_task_ids"][0] for s in by_day.values())

    # An asset event per run for druid://<emulator>/af_daily, through the provider's alias.
    uri = f"druid://{sim.host}/af_daily"
    events = query(
        DB,
        "select e.extra, e.source_task_id from asset_event e join asset a on a.id = e.asset_id where a.uri = ?",
        uri,
    )
    assert len(events) == 3
    extras = sorted((json.loads(extra) for extra, _ in events), key=lambda e: e["interval"])
    assert [e["interval"][:10] for e in extras] == list(ROWS_PER_DAY)
    assert [e["rows"] for e in extras] == list(ROWS_PER_DAY.values())
    assert {task for _, task in events} == {"ingest"}

    # OpenLineage COMPLETE events: the day's file in, the datasource out with its interval and row count.
    complete = [
        e
        for e in lineage_events(WORK / "lineage-dagtest.jsonl")
        if e["eventType"] == "COMPLETE" and e["job"]["name"] == "segops_daily.ingest"
    ]
    assert len(complete) == 3
    for event in sorted(
        complete,
        key=lambda e: e["outputs"][0]["outputFacets"]["subset"]["outputCondition"]["partitions"][0][
            "dimensions"
        ]["__time"],
    ):
        (out,) = event["outputs"]
        interval = out["outputFacets"]["subset"]["outputCondition"]["partitions"][0]["dimensions"]["__time"]
        day = interval[:10]
        assert [(i["namespace"], i["name"]) for i in event["inputs"]] == [
            ("file", f"{DATA_DIR}/events-{day}.json")
        ]
        assert (out["namespace"], out["name"]) == (f"druid://{sim.host}", "af_daily")
        assert out["outputFacets"]["outputStatistics"]["rowCount"] == ROWS_PER_DAY[day]
        assert out["facets"]["version"]["datasetVersion"] == by_day[day]["versions"][0]
        facet = event["run"]["facets"]["segops"]
        assert facet["jobId"] == by_day[day]["job_id"]
        assert facet["partitions"][0]["druidTaskId"] == by_day[day]["druid_task_ids"][0]


def test_a_rerun_reattaches_without_a_second_submission(
    dags: Any, sim: Sim, capfd: pytest.CaptureFixture[str]
) -> None:
    before = sim.submissions("af_daily")
    assert before, "runs after test_three_logical_dates"
    dag_run = run(dags.daily, "2026-01-02")
    assert str(dag_run.state) == "success"
    assert sim.submissions("af_daily") == before
    assert "already exists" in capfd.readouterr().out
    summary = xcom("segops_daily", dag_run.run_id, "return_value")
    assert summary["druid_task_ids"][0] in {s["id"] for s in before}


def test_a_retry_after_the_run_was_created_reattaches(
    dags: Any, sim: Sim, segops: Segops, capfd: pytest.CaptureFixture[str]
) -> None:
    dag_run = run(dags.retry, "2026-01-01")
    out = capfd.readouterr().out
    assert str(dag_run.state) == "success"
    assert states(dag_run) == {"ingest": ("success", 2)}  # try 1 crashed, try 2 succeeded
    assert "simulated crash after creating segops job" in out
    assert "created=True" in out
    assert "already exists" in out
    assert "reattached" in out
    submissions = sim.submissions("af_retry")
    assert [s["accepted"] for s in submissions] == [True]  # one Druid task, across both tries
    job = segops.job(xcom("segops_retry", dag_run.run_id, "job_id"))
    assert job["state"] == "done"
    assert job["partitions"][0]["druidTaskId"] == submissions[0]["id"]
    assert job["partitions"][0]["attempts"] == 1


def test_a_failing_partition_fails_the_task_with_druids_error(
    dags: Any, sim: Sim, capfd: pytest.CaptureFixture[str]
) -> None:
    dag_run = run(dags.corrupt, "2026-01-04")
    out = capfd.readouterr().out
    assert str(dag_run.state) == "failed"
    assert states(dag_run) == {"ingest": ("failed", 1)}
    # segops' report in the task log: Druid's errorMsg, the row counters, the parse error.
    assert "SegopsJobFailed" in out
    assert "FAILED: Max parse exceptions[0] exceeded" in out
    assert "rows: processed 1, with errors 0, unparseable 1, thrown away 0" in out
    assert "Unable to parse row [this line is not json]" in out
    task_ids = xcom("segops_corrupt", dag_run.run_id, "druid_task_ids")
    attempts = sim.submissions("af_corrupt")
    assert task_ids == [attempts[-1]["id"]]
    assert len(attempts) == 3  # segops' own retries (poison after 3 identical failures), then dead-lettered

    assert "SegopsJobFailedOnInput" in out  # Airflow's retries would only repeat it: not retried

    # Running it again on the same input does not send the dead-lettered partition back to run: segops'
    # poison-after attempts were its retries, and the same file can only fail the same way again.
    dag_run = run(dags.corrupt, "2026-01-04")
    out = capfd.readouterr().out
    assert str(dag_run.state) == "failed"
    assert "is not sent back to run" in out
    assert "Max parse exceptions[0] exceeded" in out
    assert sim.submissions("af_corrupt") == attempts


def test_a_backfill_runs_a_range_in_one_task(dags: Any, sim: Sim) -> None:
    dag_run = dag_test(dags.backfill, dt.datetime(2026, 1, 10, tzinfo=UTC))
    assert str(dag_run.state) == "success"
    summary = xcom("segops_backfill", dag_run.run_id, "return_value")
    assert summary["kind"] == "backfill"
    assert summary["interval"] == "2026-01-01T00:00:00.000Z/2026-01-04T00:00:00.000Z"
    assert [p["interval"][:10] for p in summary["partitions"]] == list(ROWS_PER_DAY)
    assert [p["rows"] for p in summary["partitions"]] == list(ROWS_PER_DAY.values())
    submissions = sim.submissions("af_backfill")
    assert sorted(s["id"] for s in submissions) == sorted(
        xcom("segops_backfill", dag_run.run_id, "druid_task_ids")
    )
    assert len(xcom("segops_backfill", dag_run.run_id, "versions")) == 3
    (event,) = [
        e
        for e in lineage_events(WORK / "lineage-dagtest.jsonl")
        if e["eventType"] == "COMPLETE" and e["job"]["name"] == "segops_backfill.ingest"
    ]
    assert [i["name"] for i in event["inputs"]] == [f"{DATA_DIR}/events-{day}.json" for day in ROWS_PER_DAY]
    (out,) = event["outputs"]
    assert out["outputFacets"]["outputStatistics"]["rowCount"] == sum(ROWS_PER_DAY.values())
    partitions = out["outputFacets"]["subset"]["outputCondition"]["partitions"]
    assert [p["dimensions"]["__time"][:10] for p in partitions] == list(ROWS_PER_DAY)
    assert "version" not in out["facets"]  # three chunks, three versions: no single dataset version
