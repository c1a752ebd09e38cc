"""The trigger a deferred segops task waits in: it long-polls `GET /api/v1/jobs/{id}/wait` in the
triggerer's event loop, so no worker slot is held while Druid ingests."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

from airflow.triggers.base import BaseTrigger, TriggerEvent
from segops_client import Backoff

from segops_airflow.hooks.segops import MAX_POLL_TIMEOUT, SegopsApiError, SegopsAsyncHook

#: Seconds a deferred task waits at least before it resumes (the default of the operators' `defer_grace`).
#: Airflow 3.3's scheduler can fail a task that resumes while the executor's "success" event of the worker
#: that deferred it is still unprocessed (apache/airflow#71580, #72716: the resumed try is RUNNING, the
#: stale event reads as "state changed externally"). A job that ends within seconds of the deferral is
#: exactly that case; holding the trigger event back for a few seconds lets the scheduler drain it first.
DEFER_GRACE = 10.0


class SegopsJobTrigger(BaseTrigger):
    """Fires once the segops job ends (done, failed or canceled), or with `status: error` when the
    service refuses the wait (e.g. 404: no such job, 401: bad token) or has not answered for
    `outage_timeout` seconds in a row.

    :param job_id: the segops job.
    :param segops_conn_id: the `segops` connection.
    :param poll_timeout: seconds one long-poll may wait (≤ 300); the service answers at once when the job ends.
    :param outage_timeout: how long the service may be unreachable (restart, drain) before giving up.
    :param cancel_on_kill: when a user marks the deferred task failed/success or clears it, cancel the job.
    :param shutdown_on_kill: with `cancel_on_kill`, also shut the job's Druid tasks down.
    :param not_before: epoch seconds before which the event is held back (see `DEFER_GRACE`).
    :param echo: JSON the event carries back as `echo`: what the deferring task needs when it resumes
        (carried by the event rather than by `defer(kwargs=…)`, which `dag.test()` in Airflow 3.3 drops).
    """

    def __init__(
        self,
        job_id: str,
        segops_conn_id: str = SegopsAsyncHook.default_conn_name,
        poll_timeout: float = 60.0,
        outage_timeout: float = 600.0,
        cancel_on_kill: bool = True,
        shutdown_on_kill: bool = True,
        not_before: float | None = None,
        echo: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.job_id = job_id
        self.segops_conn_id = segops_conn_id
        self.poll_timeout = min(float(poll_timeout), MAX_POLL_TIMEOUT)
        self.outage_timeout = float(outage_timeout)
        self.cancel_on_kill = cancel_on_kill
        self.shutdown_on_kill = shutdown_on_kill
        self.not_before = not_before
        self.echo = dict(echo or {})

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (
            f"{type(self).__module__}.{type(self).__qualname__}",
            {
                "job_id": self.job_id,
                "segops_conn_id": self.segops_conn_id,
                "poll_timeout": self.poll_timeout,
                "outage_timeout": self.outage_timeout,
                "cancel_on_kill": self.cancel_on_kill,
                "shutdown_on_kill": self.shutdown_on_kill,
                "not_before": self.not_before,
                "echo": self.echo,
            },
        )

    def _hook(self) -> SegopsAsyncHook:
        return SegopsAsyncHook(segops_conn_id=self.segops_conn_id)

    async def run(self) -> AsyncIterator[TriggerEvent]:
        hook = self._hook()
        backoff = Backoff(self.outage_timeout)
        last_counts: Any = None
        while True:
            try:
                result = await hook.wait(self.job_id, self.poll_timeout)
            except SegopsApiError as error:
                if error.retryable:
                    try:
                        self.log.warning("segops did not answer (%s); asking again", error)
                        await asyncio.sleep(backoff.next_delay(error))
                        continue
                    except SegopsApiError as gave_up:
                        error = gave_up
                yield TriggerEvent(
                    {"status": "error", "job_id": self.job_id, "message": str(error), "echo": self.echo}
                )
                return
            backoff.reset()
            job = result.get("job") or {}
            counts = job.get("counts")
            if counts != last_counts:
                self.log.info("segops job %s: %s %s", self.job_id, job.get("state"), counts)
                last_counts = counts
            if result.get("ended"):
                hold = (self.not_before or 0) - time.time()
                if hold > 0:
                    # apache/airflow#72716: a task resumed too soon after deferring can be failed by the
                    # scheduler's stale "success" event of the deferring worker; give that event time.
                    self.log.info("segops job %s ended; resuming the task in %.1f s", self.job_id, hold)
                    await asyncio.sleep(hold)
                yield TriggerEvent(
                    {
                        "status": "ended",
                        "job_id": self.job_id,
                        "state": job.get("state"),
                        "counts": counts,
                        "echo": self.echo,
                    }
                )
                return

    async def on_kill(self) -> None:
        """Airflow ≥ 3.3 calls this when a user acts on the deferred task: marks it failed or succeeded, or
        clears it. Only the first two end the task instance; a clear starts a new try, which reattaches to
        the same job (usually before this runs), so the job is canceled only when the try this trigger
        waits for still owns the task instance, i.e. it ended by the user's hand."""
        if not self.cancel_on_kill:
            return
        owner = _owner(self)
        state = await _task_state(self)
        if state is not None and state not in ENDED_BY_USER:
            self.log.info(
                "the deferred task %s was cleared (now %s): segops job %s is left running for the new try, "
                "which reattaches to it; nothing canceled",
                owner,
                state,
                self.job_id,
            )
            return
        result = await self._hook().cancel(
            self.job_id,
            shutdown=self.shutdown_on_kill,
            reason=f"the deferred Airflow task {owner} was marked {state or 'ended'} by a user",
        )
        self.log.info("canceled segops job %s: %s", self.job_id, result)


#: Task instance states a user's "mark failed" / "mark success" leaves; any other state after an on_kill
#: means the task instance was cleared and a new try owns it.
ENDED_BY_USER = frozenset({"failed", "success", "skipped", "removed", "upstream_failed"})


def _owner(trigger: BaseTrigger) -> str:
    """`<dag>/<task>/<run>/<map index>/<try>` of the try this trigger waits for (`?` when unknown)."""
    ti = getattr(trigger, "task_instance", None)
    parts = ("dag_id", "task_id", "run_id", "map_index", "try_number")
    return "/".join(str(getattr(ti, p, "?")) for p in parts)


async def _task_state(trigger: BaseTrigger) -> str | None:
    """The task instance's state now, asked of Airflow (None when it cannot be asked: then the kill is
    taken as the user's, as before this check existed)."""
    ti = getattr(trigger, "task_instance", None)
    if ti is None:
        return None
    try:
        from airflow.sdk.execution_time.task_runner import RuntimeTaskInstance
        from asgiref.sync import sync_to_async

        states = await sync_to_async(RuntimeTaskInstance.get_task_states)(
            dag_id=ti.dag_id,
            task_ids=[ti.task_id],
            run_ids=[ti.run_id],
            map_index=ti.map_index if ti.map_index >= 0 else None,
        )
    except Exception as error:  # a refinement: never let it keep a user's kill from canceling
        trigger.log.warning("could not read the state of task %s: %s", _owner(trigger), error)
        return None
    key = ti.task_id if ti.map_index < 0 else f"{ti.task_id}_{ti.map_index}"
    state = (states.get(ti.run_id) or {}).get(key)
    return str(getattr(state, "value", state)) if state is not None else "none"
