"""Which partitions a materialisation sends back to run when the job its inputs name had failed
(`retry_failed`, on by default): those the same input could end otherwise (a handoff that timed out, a
partition dropped from the dead letters by hand), never those it can only repeat (dead-lettered by segops'
poison rule, rolled back, refused as empty). The client is a recorder here: what is asserted is the choice,
sent as segops' retry body."""

from __future__ import annotations

from typing import Any, cast

from dagster_segops.asset import JobView, _send_back


class Log:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def info(self, message: str) -> None:
        self.lines.append(message)

    warning = info


class Context:
    def __init__(self) -> None:
        self.log = Log()


class RecordingClient:
    def __init__(self, whole: dict[str, Any] | None = None) -> None:
        self.retried: list[Any] = []
        self.whole = whole

    def retry_job(self, job_id: str, *, body: Any = None) -> dict[str, Any]:
        self.retried.append(body)
        return {"jobId": job_id, "sent": (body or {}).get("partitions", ["…"])}

    def get_whole_job(self, job_id: str) -> dict[str, Any]:
        assert self.whole is not None, f"{job_id} was not expected to be read again"
        return self.whole


def part(day: int, state: str, outcome: str | None = None) -> dict[str, Any]:
    return {"task": f"j1/2026010{day}", "interval": f"2026-01-0{day}", "state": state, "outcome": outcome}


def job(*partitions: dict[str, Any], more: bool = False) -> JobView:
    raw = {
        "id": "j1",
        "state": "failed",
        "partitions": list(partitions),
        "partitionsNext": "x" if more else None,
    }
    return JobView(cast(Any, raw))


def send_back(view: JobView, client: RecordingClient) -> Context:
    context = Context()
    _send_back(cast(Any, context), cast(Any, client), view)
    return context


def test_mixed_failures_send_back_only_what_can_end_otherwise() -> None:
    client = RecordingClient()
    context = send_back(
        job(part(1, "done"), part(2, "dead"), part(3, "failed"), part(4, "failed", "rolled-back")), client
    )
    assert client.retried == [{"partitions": ["j1/20260103"]}]
    assert "2 left as they ended (dead, rolled-back)" in context.log.lines[-1]


def test_nothing_is_sent_back_when_every_failure_can_only_repeat() -> None:
    client = RecordingClient()
    context = send_back(job(part(1, "dead"), part(2, "failed", "refused-empty")), client)
    assert client.retried == []
    assert "is not sent back to run" in context.log.lines[-1]


def test_a_job_without_final_failures_is_sent_back_whole() -> None:
    client = RecordingClient()
    send_back(job(part(1, "done"), part(2, "failed")), client)
    assert client.retried == [None]


def test_a_job_of_more_than_a_page_is_read_whole_first() -> None:
    whole = {"partitions": [part(1, "dead"), part(2, "failed"), part(3, "dead"), part(4, "failed")]}
    client = RecordingClient(whole)
    send_back(job(part(1, "dead"), part(2, "failed"), more=True), client)
    assert client.retried == [{"partitions": ["j1/20260102", "j1/20260104"]}]
