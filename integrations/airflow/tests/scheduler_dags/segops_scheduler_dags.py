"""DAGs the real scheduler, dag-processor and triggerer run (tests/test_scheduler.py). Each declares its
druid:// asset (`druid_host`), so the dag-processor registers it before any task emits an event."""

from __future__ import annotations

import datetime as dt

from airflow.providers.standard.operators.python import PythonOperator
from segops_test_support import (
    DAG,
    DAILY,
    DATA_DIR,
    SIM_HOST,
    START,
    Asset,
    CrashAfterCreate,
    daily_template,
    produce,
    source_version_of,
)

from segops_airflow._compat import AIRFLOW_3
from segops_airflow.operators.segops import SegopsIngestOperator

UTC = dt.timezone.utc

# Three DAG runs (catchup), one partition each; the emulator keeps every Druid task RUNNING for 8 s, so
# the tasks are seen `deferred` while Druid works.
with DAG(
    "segops_slow",
    schedule=DAILY,
    start_date=dt.datetime(2026, 2, 1, tzinfo=UTC),
    end_date=dt.datetime(2026, 2, 3, tzinfo=UTC),
    catchup=True,
    max_active_runs=3,
    tags=["segops-test"],
):
    SegopsIngestOperator(
        task_id="ingest",
        template=daily_template("af_slow", slow_seconds=8),
        vars={"dataDir": DATA_DIR},
        druid_host=SIM_HOST,
        deferrable=True,
        poll_timeout=20,
    )

# One run over a day whose input file is missing: Druid succeeds with 0 rows, segops' min-rows gate fails it.
with DAG(
    "segops_gate",
    schedule=DAILY,
    start_date=dt.datetime(2026, 1, 5, tzinfo=UTC),
    end_date=dt.datetime(2026, 1, 5, tzinfo=UTC),
    catchup=True,
    tags=["segops-test"],
):
    SegopsIngestOperator(
        task_id="ingest",
        template=daily_template("af_gate"),
        vars={"dataDir": DATA_DIR},
        gates={"min_rows": 1},
        druid_host=SIM_HOST,
        deferrable=True,
        poll_timeout=20,
    )

# A retry through the scheduler: try 1 creates the run and crashes, try 2 (a new worker process) reattaches.
with DAG(
    "segops_sched_retry",
    schedule=DAILY,
    start_date=dt.datetime(2026, 3, 1, tzinfo=UTC),
    end_date=dt.datetime(2026, 3, 1, tzinfo=UTC),
    catchup=True,
    tags=["segops-test"],
):
    CrashAfterCreate(
        task_id="ingest",
        template=daily_template("af_sched_retry", slow_seconds=4),
        vars={"dataDir": DATA_DIR},
        druid_host=SIM_HOST,
        deferrable=True,
        retries=1,
        retry_delay=dt.timedelta(0),
    )

# A day whose source version is an Airflow Variable: the test clears the task (`airflow tasks clear`) with
# the same version (it reattaches) and after changing it (it ingests again).
with DAG(
    "segops_cleared",
    schedule=DAILY,
    start_date=dt.datetime(2026, 3, 5, tzinfo=UTC),
    end_date=dt.datetime(2026, 3, 5, tzinfo=UTC),
    catchup=True,
    tags=["segops-test"],
):
    SegopsIngestOperator(
        task_id="ingest",
        template=daily_template("af_cleared"),
        vars={"dataDir": f"{DATA_DIR}-af_cleared"},
        source_version=source_version_of("af_cleared_version"),
        druid_host=SIM_HOST,
        deferrable=True,
        poll_timeout=20,
    )

# An upstream asset and a DAG scheduled on it: the consumer's default source version is the digest of the
# asset event that triggered its run.
# (Airflow 2.10's datasets have a URI only.)
UPSTREAM = (
    Asset(name="segops_test_upstream", uri="file:///segops-test/upstream")
    if AIRFLOW_3
    else Asset(uri="file:///segops-test/upstream")
)
with DAG(
    "segops_upstream",
    schedule=DAILY,
    start_date=dt.datetime(2026, 3, 6, tzinfo=UTC),
    end_date=dt.datetime(2026, 3, 6, tzinfo=UTC),
    catchup=True,
    tags=["segops-test"],
):
    PythonOperator(task_id="produce", python_callable=produce, outlets=[UPSTREAM])

with DAG(
    "segops_consumer",
    schedule=[UPSTREAM],
    start_date=dt.datetime(2026, 3, 6, tzinfo=UTC),
    catchup=False,
    tags=["segops-test"],
):
    SegopsIngestOperator(
        task_id="ingest",
        template=daily_template("af_consumer"),
        interval="2026-03-06T00:00:00+00:00/2026-03-07T00:00:00+00:00",
        vars={"dataDir": f"{DATA_DIR}-af_consumer"},
        druid_host=SIM_HOST,
        deferrable=True,
        poll_timeout=20,
    )

# Cleared while deferred: the test triggers a run, clears the task while its Druid task runs, and the new try
# reattaches; the old try's trigger must not cancel the job (its on_kill comes after the clear).
with DAG("segops_clear_deferred", schedule=None, start_date=START, catchup=False, tags=["segops-test"]):
    SegopsIngestOperator(
        task_id="ingest",
        # Long enough for `airflow tasks clear` (a new Python process) to act on a loaded machine.
        template=daily_template("af_clear_deferred", slow_seconds=40),
        interval="2026-03-10T00:00:00+00:00/2026-03-11T00:00:00+00:00",
        vars={"dataDir": f"{DATA_DIR}-af_clear_deferred"},
        druid_host=SIM_HOST,
        deferrable=True,
        poll_timeout=20,
    )

# execution_timeout shorter than the Druid task, in the triggerer and in the worker: each try times out, the
# job keeps running, a later try reattaches and finds it done. One Druid submission, none shut down.
for name, deferrable in (("segops_timeout_deferred", True), ("segops_timeout_worker", False)):
    with DAG(
        name,
        schedule=DAILY,
        start_date=dt.datetime(2026, 3, 12, tzinfo=UTC),
        end_date=dt.datetime(2026, 3, 12, tzinfo=UTC),
        catchup=True,
        tags=["segops-test"],
    ):
        SegopsIngestOperator(
            task_id="ingest",
            template=daily_template(f"af_{name.removeprefix('segops_')}", slow_seconds=14),
            vars={"dataDir": f"{DATA_DIR}-af_timeout"},
            druid_host=SIM_HOST,
            deferrable=deferrable,
            defer_grace=2,
            poll_timeout=5,
            execution_timeout=dt.timedelta(seconds=6),
            retries=6,
            retry_delay=dt.timedelta(0),
        )

# A corrupt day with Airflow retries: segops' poison rule dead-letters it after its own attempts and the
# task fails without Airflow's retries. The test then fixes the file and clears the task (ingested once),
# and clears it again unchanged (nothing submitted).
with DAG(
    "segops_poison",
    schedule=DAILY,
    start_date=dt.datetime(2026, 3, 14, tzinfo=UTC),
    end_date=dt.datetime(2026, 3, 14, tzinfo=UTC),
    catchup=True,
    tags=["segops-test"],
):
    SegopsIngestOperator(
        task_id="ingest",
        template=daily_template("af_poison"),
        vars={"dataDir": f"{DATA_DIR}-af_poison"},
        druid_host=SIM_HOST,
        deferrable=True,
        poll_timeout=20,
        retries=2,
        retry_delay=dt.timedelta(0),
    )
