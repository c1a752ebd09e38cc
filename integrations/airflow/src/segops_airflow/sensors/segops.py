"""`SegopsSensor`: waits until a segops job (created by anyone: another DAG, `segops backfill`, curl) ends."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

from segops_airflow._compat import BaseSensorOperator, PokeReturnValue, conf
from segops_airflow.hooks.segops import JsonDict, SegopsApiError, SegopsHook, job_ended
from segops_airflow.operators.segops import SegopsJobFailed, failure_report, summarize
from segops_airflow.triggers.segops import DEFER_GRACE, SegopsJobTrigger

if TYPE_CHECKING:
    from segops_airflow._compat import Context


class SegopsSensor(BaseSensorOperator):
    """Succeeds when the segops job `job_id` is done (every partition handed off and audited); fails with
    segops' report when it ended otherwise (unless `fail_on_failure=False`: then it succeeds and returns
    the summary). Deferrable: the wait runs in the triggerer through the service's long-poll.

    :param job_id: the job (Jinja-templated, e.g. `{{ ti.xcom_pull(task_ids='ingest', key='job_id') }}`).
    """

    template_fields: Sequence[str] = ("job_id",)
    ui_color = "#81d4fa"

    def __init__(
        self,
        *,
        job_id: str,
        segops_conn_id: str = SegopsHook.default_conn_name,
        deferrable: bool = conf.getboolean("operators", "default_deferrable", fallback=False),
        poll_timeout: float = 60.0,
        outage_timeout: float = 600.0,
        defer_grace: float = DEFER_GRACE,
        fail_on_failure: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.job_id = job_id
        self.segops_conn_id = segops_conn_id
        self.deferrable = deferrable
        self.poll_timeout = poll_timeout
        self.outage_timeout = outage_timeout
        self.defer_grace = defer_grace
        self.fail_on_failure = fail_on_failure

    @cached_property
    def hook(self) -> SegopsHook:
        return SegopsHook(segops_conn_id=self.segops_conn_id)

    def _result(self, job: JsonDict) -> JsonDict:
        summary = summarize(job)
        if job.get("state") != "done" and self.fail_on_failure:
            report = failure_report(job)
            for line in report:
                self.log.error("%s", line)
            raise SegopsJobFailed(
                f"segops job {job['id']} {job.get('state')}: " + (report[0] if report else "not done"), job
            )
        return summary

    def poke(self, context: Context) -> PokeReturnValue | bool:
        job = self.hook.get_job(self.job_id)
        self.log.info("segops job %s: %s %s", self.job_id, job.get("state"), job.get("counts"))
        if not job_ended(job):
            return False
        return PokeReturnValue(is_done=True, xcom_value=self._result(job))

    def execute(self, context: Context) -> Any:
        if not self.deferrable:
            return super().execute(context)
        job = self.hook.get_job(self.job_id)
        if job_ended(job):
            return self._result(job)
        self.defer(
            trigger=SegopsJobTrigger(
                job_id=self.job_id,
                segops_conn_id=self.segops_conn_id,
                poll_timeout=self.poll_timeout,
                outage_timeout=self.outage_timeout,
                cancel_on_kill=False,  # the sensor does not own the job
                not_before=time.time() + self.defer_grace if self.defer_grace > 0 else None,
            ),
            method_name="execute_complete",
            timeout=dt.timedelta(seconds=self.timeout) if self.timeout else None,
        )

    def execute_complete(self, context: Context, event: Mapping[str, Any]) -> Any:
        if event.get("status") != "ended":
            raise SegopsApiError(f"waiting for segops job {self.job_id} failed: {event.get('message')}")
        return self._result(self.hook.get_job(self.job_id))
