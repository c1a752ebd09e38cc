"""DAGs the dag.test() tests run (tests/test_dag_test.py). Their druid:// assets are emitted at run time
through an AssetAlias (no `druid_host` given), the scheduler test's DAGs declare theirs."""

from __future__ import annotations

import datetime as dt

from airflow.sdk import DAG
from segops_test_support import DAILY, DATA_DIR, START, CrashAfterCreate, daily_template

from segops_airflow.operators.segops import SegopsBackfillOperator, SegopsIngestOperator
from segops_airflow.sensors.segops import SegopsSensor

# One partition per DAG run (the data interval), deferred to the trigger; a deferrable sensor after it.
with DAG("segops_daily", schedule=DAILY, start_date=START, catchup=False, tags=["segops-test"]) as daily:
    ingest = SegopsIngestOperator(
        task_id="ingest",
        template=daily_template("af_daily"),
        vars={"dataDir": DATA_DIR},
        gates={"min_rows": 1},
        deferrable=True,
        defer_grace=0,  # dag.test() has no executor, so no stale executor event to wait out
        poll_timeout=30,
    )
    ingest >> SegopsSensor(
        task_id="confirm",
        job_id="{{ ti.xcom_pull(task_ids='ingest', key='job_id') }}",
        deferrable=True,
        defer_grace=0,  # dag.test() has no executor, so no stale executor event to wait out
    )

# The first try creates the run and crashes; the retry must reattach (the Druid task runs 3 s).
with DAG("segops_retry", schedule=DAILY, start_date=START, catchup=False, tags=["segops-test"]) as retry:
    CrashAfterCreate(
        task_id="ingest",
        template=daily_template("af_retry", slow_seconds=3),
        vars={"dataDir": DATA_DIR},
        deferrable=True,
        defer_grace=0,  # dag.test() has no executor, so no stale executor event to wait out
        retries=1,
        retry_delay=dt.timedelta(0),
    )

# A corrupt day: Druid FAILs the task (max parse exceptions); waited for in the worker (not deferred).
with DAG("segops_corrupt", schedule=DAILY, start_date=START, catchup=False, tags=["segops-test"]) as corrupt:
    SegopsIngestOperator(
        task_id="ingest",
        template=daily_template("af_corrupt"),
        vars={"dataDir": DATA_DIR},
        deferrable=False,
        poll_timeout=30,
    )

# A range in one task: one segops backfill, one partition per day.
with DAG("segops_backfill", schedule=None, start_date=START, catchup=False, tags=["segops-test"]) as backfill:
    SegopsBackfillOperator(
        task_id="ingest",
        template=daily_template("af_backfill"),
        start="2026-01-01",
        end="2026-01-04",
        vars={"dataDir": DATA_DIR},
        deferrable=True,
        defer_grace=0,  # dag.test() has no executor, so no stale executor event to wait out
    )
