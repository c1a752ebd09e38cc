"""Shared by the test DAG folders (on PYTHONPATH): the template and the test data's location."""

from __future__ import annotations

import datetime as dt
import os
import urllib.parse
from typing import TYPE_CHECKING, Any

from segops_airflow._compat import AIRFLOW_3, Context
from segops_airflow.operators.segops import SegopsIngestOperator

# The DAG-writing names, from where the Airflow the tests run on has them (3: the Task SDK; 2.10: datasets).
if AIRFLOW_3 or TYPE_CHECKING:
    from airflow.sdk import DAG, Asset, CronDataIntervalTimetable
else:
    from airflow import DAG
    from airflow.datasets import Dataset as Asset
    from airflow.timetables.interval import CronDataIntervalTimetable

__all__ = ["DAG", "Asset", "CronDataIntervalTimetable"]

DATA_DIR = os.environ.get("SEGOPS_TEST_DATA_DIR", "/nonexistent/segops-test-data")
START = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
#: host:port of the Druid emulator (test.sh exports its URL): the host of the declared druid:// assets.
SIM_HOST = urllib.parse.urlsplit(os.environ.get("SEGOPS_TEST_SIM_URL", "http://127.0.0.1:1")).netloc

# Airflow 3 reads a cron string as CronTriggerTimetable, whose runs have an empty data interval: one
# segops partition per DAG run needs the data-interval timetable.
DAILY = CronDataIntervalTimetable("@daily", timezone="UTC")

#: Real milliseconds of one slow Druid task at the emulator's time scale (test.sh: --time-scale 100).
SIM_TIME_SCALE = 100


def daily_template(datasource: str, *, slow_seconds: float | None = None) -> dict[str, Any]:
    """An index_parallel template reading one JSON-lines file per day, like segops' test/helpers/dataset.ts.

    `slow_seconds` makes the emulator run the Druid task that long (real seconds): its `simDurationMs`
    task-context key, in emulated milliseconds.
    """
    template: dict[str, Any] = {
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
                "granularitySpec": {"segmentGranularity": "day", "queryGranularity": "none", "rollup": False},
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
    if slow_seconds:
        template["context"] = {"simDurationMs": int(slow_seconds * 1000 * SIM_TIME_SCALE)}
    return template


def produce() -> None:
    """A task whose success is its outlets' asset events (an upstream producer)."""


def source_version_of(variable: str) -> str:
    """A `source_version` template reading an Airflow Variable (blank when unset: none is sent)."""
    return "{{ var.value.get('" + variable + "', '') }}"


class CrashAfterCreate(SegopsIngestOperator):
    """Creates the segops run, then dies on its first try — as a worker lost right after submitting."""

    def execute(self, context: Context) -> Any:
        if context["ti"].try_number == 1:
            job, created = self.hook.create(self.kind, self.request_body(context))
            raise RuntimeError(f"simulated crash after creating segops job {job['id']} (created={created})")
        return super().execute(context)


class CrashBeforeReporting(SegopsIngestOperator):
    """Waits for its job to end, then dies on its first try before reporting it — as a worker lost after
    the data landed, before the task succeeded."""

    def _finish(self, context: Context, job: dict[str, Any], *, fresh: bool) -> dict[str, Any]:
        if context["ti"].try_number == 1:
            raise RuntimeError(f"simulated crash after segops job {job['id']} ended {job.get('state')}")
        return super()._finish(context, job, fresh=fresh)
