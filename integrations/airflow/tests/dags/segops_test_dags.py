"""DAGs the dag.test() tests run (tests/test_dag_test.py, tests/test_source_version.py). Without
`druid_host` their druid:// assets are emitted at run time through an AssetAlias; with it (and in the
scheduler test's DAGs) the asset is a declared outlet."""

from __future__ import annotations

import datetime as dt
from typing import Any

from segops_test_support import (
    DAG,
    DAILY,
    DATA_DIR,
    SIM_HOST,
    START,
    CrashAfterCreate,
    CrashBeforeReporting,
    daily_template,
    source_version_of,
)

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


def _sourced(
    dag_id: str,
    datasource: str,
    *,
    druid_host: str | None = None,
    slow_seconds: float | None = None,
    **kwargs: Any,
) -> DAG:
    """One partition per run from its own data directory (DATA_DIR-<datasource>: Druid's local input
    source reads subdirectories too, so not under DATA_DIR), its source version
    rendered from the Airflow Variable `<datasource>_version` (a clear after the Variable changed is a
    rerun with a new version)."""
    with DAG(dag_id, schedule=DAILY, start_date=START, catchup=False, tags=["segops-test"]) as dag:
        SegopsIngestOperator(
            task_id="ingest",
            template=daily_template(datasource, slow_seconds=slow_seconds),
            vars={"dataDir": f"{DATA_DIR}-{datasource}"},
            source_version=source_version_of(f"{datasource}_version"),
            druid_host=druid_host,
            deferrable=True,
            defer_grace=0,  # dag.test() has no executor, so no stale executor event to wait out
            poll_timeout=30,
            **kwargs,
        )
    return dag


#: What the callable source version of segops_callable answers (a test sets it, as an upstream check would).
CALLABLE_VERSION = {"value": ""}


def _callable_version(context: Any, jinja_env: Any = None) -> str:
    """A source version computed at run time: Airflow calls a callable template field with the context."""
    assert context["dag_run"] is not None
    return CALLABLE_VERSION["value"]


with DAG(
    "segops_callable", schedule=DAILY, start_date=START, catchup=False, tags=["segops-test"]
) as callable_dag:
    SegopsIngestOperator(
        task_id="ingest",
        template=daily_template("af_callable"),
        vars={"dataDir": f"{DATA_DIR}-af_callable"},
        source_version=_callable_version,
        druid_host=SIM_HOST,
        deferrable=True,
        defer_grace=0,
        poll_timeout=30,
    )

# Source versions: a declared druid:// outlet, and the same through the run-time alias.
sourced = _sourced("segops_sourced", "af_sourced", druid_host=SIM_HOST)
sourced_alias = _sourced("segops_sourced_alias", "af_sourced_alias")
# A replace that fails its gate over live data is rolled back.
rolled = _sourced("segops_rolled", "af_rolled", druid_host=SIM_HOST, gates={"min_rows": 20})
# An input with no rows over live data is refused, unless allow_empty (another job: part of its identity).
emptied = _sourced("segops_emptied", "af_emptied", druid_host=SIM_HOST)
emptied_allowed = _sourced("segops_emptied_allowed", "af_emptied", druid_host=SIM_HOST, allow_empty=True)
# A new source version sent while the old one still runs at Druid (each Druid task runs 6 s).
confirm = _sourced("segops_confirm", "af_confirm", slow_seconds=6)

# Try 1 waits for its job, then dies before reporting it; try 2 finds the job done and owes its event.
with DAG("segops_owed", schedule=DAILY, start_date=START, catchup=False, tags=["segops-test"]) as owed:
    CrashBeforeReporting(
        task_id="ingest",
        template=daily_template("af_owed"),
        vars={"dataDir": DATA_DIR},
        druid_host=SIM_HOST,
        deferrable=False,
        poll_timeout=30,
        retries=1,
        retry_delay=dt.timedelta(0),
    )
