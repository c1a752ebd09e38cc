"""DAGs the real scheduler, dag-processor and triggerer run (tests/test_scheduler.py). Each declares its
druid:// asset (`druid_host`), so the dag-processor registers it before any task emits an event."""

from __future__ import annotations

import datetime as dt

from airflow.sdk import DAG
from segops_test_support import DAILY, DATA_DIR, SIM_HOST, CrashAfterCreate, daily_template

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
