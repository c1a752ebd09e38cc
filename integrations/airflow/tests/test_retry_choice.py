"""Which partitions a task's retry sends back to run when its job had failed: those the same input could end
otherwise (a handoff that timed out, a partition dropped from the dead letters by hand), never those it can only
repeat (dead-lettered by segops' poison rule, rolled back, refused as empty) — except all of them after a cancel
by hand. The hook is a recorder here: what is asserted is the operator's choice, sent as segops' retry body."""

from __future__ import annotations

from typing import Any

from segops_airflow.operators.segops import SegopsBackfillOperator


class RecordingHook:
    def __init__(self, whole: dict[str, Any] | None = None) -> None:
        self.retried: list[tuple[str, list[str] | None]] = []
        self.whole = whole

    def retry(self, job_id: str, partitions: list[str] | None = None) -> dict[str, Any]:
        self.retried.append((job_id, partitions))
        return {"jobId": job_id, "sent": partitions or []}

    def get_job(self, job_id: str) -> dict[str, Any]:
        # The whole job when the test gives one; else the job as it reads after a retry (not asserted on).
        return self.whole if self.whole is not None else {"id": job_id, "state": "open", "partitions": []}


def operator(hook: RecordingHook) -> SegopsBackfillOperator:
    op = SegopsBackfillOperator(
        task_id="backfill", template={"type": "index_parallel"}, start="2026-01-01", end="2026-01-05"
    )
    op.__dict__["hook"] = hook  # the cached_property's slot
    return op


def part(day: int, state: str, outcome: str | None = None) -> dict[str, Any]:
    interval = f"2026-01-0{day}T00:00:00.000Z/2026-01-0{day + 1}T00:00:00.000Z"
    return {"task": f"j1/2026010{day}", "interval": interval, "state": state, "outcome": outcome}


def job(*partitions: dict[str, Any], canceled: bool = False, more: bool = False) -> dict[str, Any]:
    return {
        "id": "j1",
        "state": "failed",
        "canceled": canceled,
        "partitions": list(partitions),
        "partitionsNext": "j1/20260104" if more else None,
    }


def test_mixed_failures_send_back_only_what_can_end_otherwise() -> None:
    hook = RecordingHook()
    operator(hook)._retry(
        job(part(1, "done"), part(2, "dead"), part(3, "failed"), part(4, "failed", "rolled-back"))
    )
    assert hook.retried == [("j1", ["j1/20260103"])]


def test_nothing_is_sent_back_when_every_failure_can_only_repeat() -> None:
    hook = RecordingHook()
    operator(hook)._retry(job(part(1, "dead"), part(2, "failed", "refused-empty")))
    assert hook.retried == []


def test_a_job_without_final_failures_is_sent_back_whole() -> None:
    hook = RecordingHook()
    operator(hook)._retry(job(part(1, "done"), part(2, "failed")))
    assert hook.retried == [("j1", None)]


def test_a_canceled_job_is_sent_back_whole() -> None:
    hook = RecordingHook()
    operator(hook)._retry(job(part(1, "dead"), part(2, "failed"), canceled=True))
    assert hook.retried == [("j1", None)]


def test_a_job_of_more_than_a_page_is_read_whole_first() -> None:
    whole = job(part(1, "dead"), part(2, "failed"), part(3, "dead"), part(4, "failed"))
    hook = RecordingHook(whole)
    operator(hook)._retry(job(part(1, "dead"), part(2, "failed"), more=True))
    assert hook.retried == [("j1", ["j1/20260102", "j1/20260104"])]
