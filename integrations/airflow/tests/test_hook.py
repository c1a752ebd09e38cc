"""The hooks and the trigger against the running service (the `segops_default` connection comes from
AIRFLOW_CONN_SEGOPS_DEFAULT, set in conftest)."""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from types import SimpleNamespace
from typing import Any

import pytest
from segops_test_support import daily_template

from conftest import DATA_DIR, Segops, Sim
from segops_airflow._compat import AIRFLOW_3
from segops_airflow.hooks.segops import SegopsApiError, SegopsAsyncHook, SegopsHook
from segops_airflow.operators.segops import SegopsBackfillOperator, SegopsIngestOperator
from segops_airflow.template import InputName
from segops_airflow.triggers.segops import SegopsJobTrigger


def run_body(datasource: str, day: str, *, slow_seconds: float | None = None, **extra: Any) -> dict[str, Any]:
    start = dt.date.fromisoformat(day)
    return {
        "template": daily_template(datasource, slow_seconds=slow_seconds),
        "interval": f"{start}T00:00:00+00:00/{start + dt.timedelta(days=1)}T00:00:00+00:00",
        "vars": {"dataDir": str(DATA_DIR)},
        **extra,
    }


def collect(trigger: SegopsJobTrigger) -> list[dict[str, Any]]:
    async def go() -> list[dict[str, Any]]:
        return [event.payload async for event in trigger.run()]

    return asyncio.run(go())


def test_the_same_inputs_name_the_same_job_and_one_druid_submission(sim: Sim) -> None:
    hook = SegopsHook()
    first, created = hook.create("run", run_body("hook_same", "2026-01-01"))
    again, created_again = hook.create("run", run_body("hook_same", "2026-01-01"))
    assert (created, created_again) == (True, False)
    assert again["id"] == first["id"]
    job = hook.wait_until_ended(first["id"], timeout=60)
    assert job["state"] == "done"
    assert job["partitions"][0]["rows"] == 24
    submissions = sim.submissions("hook_same")
    assert [s["accepted"] for s in submissions] == [True]
    assert submissions[0]["id"] == job["partitions"][0]["druidTaskId"]


def test_invalid_requests_are_problems_naming_the_field() -> None:
    hook = SegopsHook()
    body = run_body("hook_bad", "2026-01-01")
    body["interval"] = "2026-01-02/2026-01-01"
    with pytest.raises(SegopsApiError) as raised:
        hook.create("run", body)
    assert raised.value.status == 400
    assert not raised.value.retryable
    assert "interval" in str(raised.value)
    assert raised.value.problem["errors"][0]["path"] == "interval"


def test_a_wrong_token_is_refused_and_never_echoed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "AIRFLOW_CONN_SEGOPS_WRONG",
        SegopsHook()
        .get_connection("segops_default")
        .get_uri()
        .replace(SegopsHook().settings.token or "", "nope-secret"),
    )
    hook = SegopsHook("segops_wrong")
    assert hook.settings.token == "nope-secret"
    with pytest.raises(SegopsApiError) as raised:
        hook.get_job("anything")
    assert raised.value.status == 401
    assert "nope-secret" not in str(raised.value)
    ok, message = hook.test_connection()
    assert not ok
    assert "401" in message
    assert SegopsHook().test_connection()[0]


def test_job_ids_are_path_segments() -> None:
    with pytest.raises(SegopsApiError) as raised:
        SegopsHook().get_job("run_x/20260101-20260102 no such job")
    assert raised.value.status == 404


def test_a_long_poll_answers_at_its_timeout_while_the_job_runs() -> None:
    hook = SegopsHook()
    job, _ = hook.create("run", run_body("hook_poll", "2026-01-02", slow_seconds=6))
    # Answered at its timeout, not at the job's end: the job is still open (no wall-clock bound needed).
    result = hook.wait(job["id"], timeout=0.5)
    assert result["ended"] is False
    assert result["job"]["state"] == "open"
    assert hook.wait_until_ended(job["id"], timeout=60, poll_timeout=2)["state"] == "done"


def test_the_trigger_fires_when_the_job_ends_and_reports_refusals() -> None:
    hook = SegopsHook()
    job, _ = hook.create("run", run_body("hook_trigger", "2026-01-03", slow_seconds=2))
    events = collect(SegopsJobTrigger(job_id=job["id"], poll_timeout=1, echo={"confirm": True, "rounds": 1}))
    assert [(e["status"], e["state"], e["job_id"]) for e in events] == [("ended", "done", job["id"])]
    assert events[0]["counts"]["done"] == 1
    assert events[0]["echo"] == {"confirm": True, "rounds": 1}  # handed back to the resuming task
    # A job the service does not know: one error event, no endless retrying.
    events = collect(SegopsJobTrigger(job_id="no/such/job", poll_timeout=1))
    assert len(events) == 1
    assert events[0]["status"] == "error"
    assert "404" in events[0]["message"]
    # The trigger round-trips through serialize() as the triggerer re-creates it.
    path, kwargs = SegopsJobTrigger(
        job_id="j", segops_conn_id="c", poll_timeout=5, echo={"rounds": 2}
    ).serialize()
    assert path == "segops_airflow.triggers.segops.SegopsJobTrigger"
    assert kwargs["echo"] == {"rounds": 2}
    assert SegopsJobTrigger(**kwargs).serialize() == (path, kwargs)


def test_the_trigger_holds_an_early_event_until_not_before() -> None:
    hook = SegopsHook()
    job, _ = hook.create("run", run_body("hook_same", "2026-01-01"))
    hook.wait_until_ended(job["id"], timeout=60)
    started = time.time()
    events = collect(SegopsJobTrigger(job_id=job["id"], not_before=started + 1.5))
    assert [e["status"] for e in events] == ["ended"]
    assert time.time() - started >= 1.5  # the job had ended already; the event waited for not_before


def test_the_trigger_survives_a_service_that_does_not_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW_CONN_SEGOPS_DOWN", "segops://127.0.0.1:9")  # discard port: refused
    # One error event once its outage budget is spent (not an endless retry: collect() returned).
    events = collect(
        SegopsJobTrigger(job_id="j", segops_conn_id="segops_down", poll_timeout=1, outage_timeout=2)
    )
    assert len(events) == 1
    assert events[0]["status"] == "error"
    assert "has not answered" in events[0]["message"]


def test_killing_a_deferred_task_cancels_the_job_and_its_druid_task(segops: Segops, sim: Sim) -> None:
    hook = SegopsHook()
    job, _ = hook.create("run", run_body("hook_kill_trigger", "2026-01-01", slow_seconds=30))
    druid_id = _running_druid_task(hook, job["id"])
    asyncio.run(SegopsJobTrigger(job_id=job["id"]).on_kill())
    assert hook.wait_until_ended(job["id"], timeout=30)["canceled"] is True
    assert "failed" in sim.task_events(druid_id)  # Druid's shutdown: FAILED "Shutdown request from user"


def test_killing_a_waiting_task_cancels_the_job(sim: Sim) -> None:
    hook = SegopsHook()
    op = SegopsIngestOperator(task_id="kill", template=daily_template("hook_kill_op", slow_seconds=30))
    job, _ = hook.create("run", run_body("hook_kill_op", "2026-01-02", slow_seconds=30))
    druid_id = _running_druid_task(hook, job["id"])
    op.job_id = job["id"]
    op.on_kill()
    final = hook.wait_until_ended(job["id"], timeout=30)
    assert final["canceled"] is True
    assert final["partitions"][0]["error"].startswith("canceled")
    assert "failed" in sim.task_events(druid_id)


def _trigger_of_try(job_id: str, state: str, monkeypatch: pytest.MonkeyPatch) -> SegopsJobTrigger:
    """A trigger as the triggerer runs it (its task instance set), Airflow answering `state` for it."""
    from airflow.sdk.execution_time.task_runner import RuntimeTaskInstance

    def states(**query: Any) -> dict[str, Any]:
        assert query["task_ids"] == ["ingest"]
        return {"run-1": {"ingest": state}}

    monkeypatch.setattr(RuntimeTaskInstance, "get_task_states", staticmethod(states))
    trigger = SegopsJobTrigger(job_id=job_id)
    trigger.task_instance = SimpleNamespace(  # type: ignore[assignment]
        dag_id="d", task_id="ingest", run_id="run-1", map_index=-1, try_number=1
    )
    return trigger


ON_KILL_OF_TRIGGERS = pytest.mark.skipif(
    not AIRFLOW_3,
    reason="Airflow 2.10 calls no trigger's on_kill: a deferred task's kill cancels nothing there",
)


@ON_KILL_OF_TRIGGERS
def test_a_cleared_deferred_task_leaves_the_job_to_its_new_try(
    sim: Sim, monkeypatch: pytest.MonkeyPatch
) -> None:
    hook = SegopsHook()
    job, _ = hook.create("run", run_body("hook_kill_cleared", "2026-01-03", slow_seconds=3))
    druid_id = _running_druid_task(hook, job["id"])
    # Cleared: Airflow has the task instance scheduled for its next try, which reattaches to the job.
    asyncio.run(_trigger_of_try(job["id"], "scheduled", monkeypatch).on_kill())
    final = hook.wait_until_ended(job["id"], timeout=60)
    assert (final["state"], final["canceled"]) == ("done", False)
    assert "failed" not in sim.task_events(druid_id)


@ON_KILL_OF_TRIGGERS
def test_a_deferred_task_marked_failed_cancels_its_job(sim: Sim, monkeypatch: pytest.MonkeyPatch) -> None:
    hook = SegopsHook()
    job, _ = hook.create("run", run_body("hook_kill_marked", "2026-01-03", slow_seconds=30))
    druid_id = _running_druid_task(hook, job["id"])
    asyncio.run(_trigger_of_try(job["id"], "failed", monkeypatch).on_kill())
    final = hook.wait_until_ended(job["id"], timeout=30)
    assert final["canceled"] is True
    assert "d/ingest/run-1/-1/1 was marked failed" in final["partitions"][0]["error"]
    assert "failed" in sim.task_events(druid_id)


def test_a_task_killed_by_its_execution_timeout_leaves_the_job_running(sim: Sim) -> None:
    hook = SegopsHook()
    op = SegopsIngestOperator(task_id="timeout", template=daily_template("hook_timeout_op", slow_seconds=3))
    job, _ = hook.create("run", run_body("hook_timeout_op", "2026-01-02", slow_seconds=3))
    druid_id = _running_druid_task(hook, job["id"])
    op.job_id = job["id"]
    op._timed_out = True  # what _wait sets when Airflow's execution_timeout interrupts it
    op.on_kill()  # Airflow calls it after the timeout, too
    final = hook.wait_until_ended(job["id"], timeout=60)
    assert (final["state"], final["canceled"]) == ("done", False)
    assert "failed" not in sim.task_events(druid_id)


def test_the_async_hook_reads_what_the_sync_hook_reads() -> None:
    hook = SegopsHook()
    job, _ = hook.create("run", run_body("hook_same", "2026-01-01"))
    assert asyncio.run(SegopsAsyncHook().get_job(job["id"]))["id"] == hook.get_job(job["id"])["id"]


def _running_druid_task(hook: SegopsHook, job_id: str) -> str:
    """The Druid task id once segops reports the partition RUNNING at Druid."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        part = hook.get_job(job_id)["partitions"][0]
        if part["druidState"] == "RUNNING":
            return str(part["druidTaskId"])
        hook.wait(job_id, timeout=0.2)  # a bounded long-poll instead of a sleep
    raise AssertionError(f"job {job_id} never ran at Druid")


class _TI:
    dag_id, run_id, task_id, map_index = "dag", "manual__1", "ingest", -1


def test_new_ingests_again_once_per_task_instance(sim: Sim) -> None:
    """`new=True`: the task instance is the Idempotency-Key, so its retries find the same new job."""
    op = SegopsIngestOperator(
        task_id="ingest",
        template=daily_template("hook_new"),
        interval="2026-01-03T00:00:00+00:00/2026-01-04T00:00:00+00:00",
        vars={"dataDir": str(DATA_DIR)},
        gates={"min_rows": 1},
        new=True,
    )
    body = op.request_body()
    assert (body["new"], body["minRows"], body["vars"]) == (True, 1, {"dataDir": str(DATA_DIR)})
    key = op._key({"ti": _TI()})  # type: ignore[typeddict-item]
    assert key == "airflow/dag/manual__1/ingest/-1"
    hook = SegopsHook()
    first, created = hook.create("run", body, idempotency_key=key)
    retried, created_again = hook.create("run", body, idempotency_key=key)
    assert (created, created_again, retried["id"]) == (True, False, first["id"])
    assert hook.wait_until_ended(first["id"], timeout=60)["state"] == "done"
    # Another task instance (another DAG run) ingests again, under new Druid task ids.
    other, created_other = hook.create("run", body, idempotency_key=key + "-other-run")
    assert created_other
    assert other["id"] != first["id"]
    assert hook.wait_until_ended(other["id"], timeout=60)["state"] == "done"
    ids = [s["id"] for s in sim.submissions("hook_new")]
    assert len(ids) == 2
    assert len(set(ids)) == 2


def test_a_large_jobs_partitions_are_read_page_by_page() -> None:
    hook = SegopsHook()
    days = 1_234
    start = dt.date(1990, 1, 1)
    body = {
        "template": daily_template("hook_pages"),
        "from": start.isoformat(),
        "to": (start + dt.timedelta(days=days)).isoformat(),
        "vars": {"dataDir": str(DATA_DIR)},
    }
    job, created = hook.create("backfill", body)
    hook.cancel(job["id"], reason="only its partitions are read here")
    assert created
    # The service shows the first 1,000; the hook reads the rest and hands over the whole job.
    for got in (job, hook.get_job(job["id"]), asyncio.run(SegopsAsyncHook().get_job(job["id"]))):
        assert got["partitionCount"] == days
        assert got["partitionsNext"] is None
        intervals = [p["interval"] for p in got["partitions"]]
        assert len(intervals) == days
        assert intervals == sorted(set(intervals))
        assert intervals[-1].startswith(f"{start + dt.timedelta(days=days - 1)}T00:00:00")


def test_lineage_inputs_are_the_input_sources_segops_renders_for_each_partition() -> None:
    template = daily_template("hook_lineage")
    template["spec"]["ioConfig"]["inputSource"] = {
        "type": "combining",
        "delegates": [
            {"type": "local", "baseDir": "{{var.dir}}", "filter": "events-{{start:yyyy-MM-dd}}.json"},
            {"type": "s3", "prefixes": ["s3://bucket/{{start:yyyy/MM/dd}}/"]},
        ],
    }
    op = SegopsBackfillOperator(
        task_id="lineage", template=template, start="2026-01-01", end="2026-01-04", vars={"dir": "/data"}
    )
    # The service plans the request again (nothing stored) and names what each partition reads.
    names = op._lineage_inputs(
        [
            "2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z",
            "2026-01-02T00:00:00.000Z/2026-01-03T00:00:00.000Z",
        ],
        "druid://router:8888",
    )
    assert names == [
        InputName("file", "/data/events-2026-01-01.json"),
        InputName("file", "/data/events-2026-01-02.json"),
        InputName("s3://bucket", "2026/01/01/"),
        InputName("s3://bucket", "2026/01/02/"),
    ]
    assert not [j for j in SegopsHook()._client.list_jobs(limit=500)["items"] if "hook_lineage" in j["id"]]
