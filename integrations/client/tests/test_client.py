"""The hand-written transport under the generated operations, against httpx's mock transport: what goes
on the wire (paths, query numbers, the token), retries of idempotent calls, problems as errors, paging,
the busy answer, and the async twin. The integrations' suites run the same client against a real
`segops serve`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from segops_client import (
    AsyncSegopsClient,
    Backoff,
    SegopsApiError,
    SegopsClient,
    models,
    problem_message,
)

TOKEN = "s3cret-token-never-shown"
Handler = Callable[[httpx.Request], httpx.Response]


def job(job_id: str = "run_x/1", *, partitions: int = 1, next_: str | None = None) -> dict[str, Any]:
    return {
        "id": job_id,
        "kind": "run",
        "state": "done",
        "canceled": False,
        "createdAt": "2026-01-01T00:00:00.000Z",
        "updatedAt": "2026-01-01T00:00:00.000Z",
        "counts": {"new": 0, "running": 0, "suspended": 0, "done": partitions, "failed": 0, "dead": 0},
        "options": {},
        "partitions": [partition(f"{job_id}/p{i}") for i in range(partitions)],
        "partitionCount": partitions,
        "partitionsNext": next_,
        "totals": {"rows": 0, "segments": 0, "bytes": 0},
        "exitCode": 0,
    }


def partition(task: str) -> dict[str, Any]:
    return {
        "task": task,
        "kind": "ingest",
        "state": "done",
        "attempts": 1,
        "interval": "2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z",
        "step": "done",
        "druidTaskId": None,
        "druidState": None,
        "version": None,
        "rows": 1,
        "segments": 1,
        "bytes": 1,
        "rowStats": None,
        "parseErrors": [],
        "error": None,
    }


def client(handler: Handler, **kwargs: Any) -> tuple[SegopsClient, list[float]]:
    slept: list[float] = []
    c = SegopsClient(
        "http://segops.test:7077/",
        TOKEN,
        transport=httpx.MockTransport(handler),
        sleep=slept.append,
        **kwargs,
    )
    return c, slept


def test_an_operation_sends_the_token_and_quotes_ids_as_one_segment() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=job())

    c, _ = client(handler)
    got = c.get_job("run_x/1")
    assert got["id"] == "run_x/1"
    assert seen[0].url.raw_path == b"/api/v1/jobs/run_x%2F1"
    assert seen[0].headers["authorization"] == f"Bearer {TOKEN}"
    assert TOKEN not in repr(c)


def test_query_numbers_are_written_as_json_numbers_and_a_long_poll_extends_the_read_timeout() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        summary = {k: v for k, v in job().items() if k in models.JobSummary.__annotations__}
        return httpx.Response(200, json={"ended": False, "job": summary})

    c, _ = client(handler, request_timeout=5.0)
    for t in (0.5, 1000, 30, 29.9999, 0, -1, 299.1234):
        c.wait("j", t)
    # The service reads `timeout` with JSON's number grammar: no "30." and no exponent.
    assert [r.url.params["timeout"] for r in seen] == ["0.5", "300", "30", "30", "0", "0", "299.123"]
    assert seen[1].extensions["timeout"]["read"] == 305.0  # the long-poll's own length on top
    assert seen[1].extensions["timeout"]["connect"] == 5.0


def test_idempotent_calls_are_retried_on_unavailable_and_connection_errors_then_fail_with_the_cause() -> None:
    answers = [httpx.Response(503, json={"title": "Unavailable", "status": 503}), None]

    def handler(request: httpx.Request) -> httpx.Response:
        if answers:
            answer = answers.pop(0)
            if answer is None:
                raise httpx.ConnectError("connection refused (injected)")
            return answer
        return httpx.Response(200, json=job())

    c, slept = client(handler, retries=2)
    assert c.get_job("j")["id"] == "run_x/1"
    assert slept == [0.5, 1.0]

    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused (injected)")

    c, slept = client(down, retries=0)
    with pytest.raises(SegopsApiError) as raised:
        c.get_job("j")
    assert raised.value.status is None and raised.value.retryable
    assert "did not answer GET /api/v1/jobs/j" in str(raised.value)
    assert "connection refused" in str(raised.value)
    assert TOKEN not in str(raised.value)
    assert slept == []


def test_a_problem_is_an_error_naming_the_fields_and_is_not_retried() -> None:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        return httpx.Response(
            400,
            json={
                "type": "/problems/invalid-request",
                "title": "The request is invalid",
                "status": 400,
                "detail": "the body does not match the schema",
                "errors": [{"in": "body", "path": "minRows", "message": "must be >= 0"}],
            },
            headers={"content-type": "application/problem+json"},
        )

    c, _ = client(handler, retries=3)
    with pytest.raises(SegopsApiError) as raised:
        c.create_run({"template": "{}", "interval": "2026-01-01/2026-01-02", "minRows": -1})
    assert calls == 1
    assert raised.value.status == 400 and not raised.value.retryable
    assert str(raised.value) == (
        "POST /api/v1/runs: 400 The request is invalid: the body does not match the schema: "
        "minRows: must be >= 0"
    )
    assert raised.value.problem["errors"][0]["path"] == "minRows"


def test_problem_messages() -> None:
    assert (
        problem_message("GET", "/x", 502, "<html>bad gateway</html>")
        == "GET /x: HTTP 502: <html>bad gateway</html>"
    )
    assert problem_message("GET", "/x", 500, "") == "GET /x: HTTP 500"


def test_a_large_job_is_read_whole_a_page_at_a_time() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path.endswith("/partitions"):
            n = int(request.url.params["after"][-1]) + 1
            return httpx.Response(
                200, json={"items": [partition(f"run_x/1/p{n}")], "next": None if n == 2 else f"run_x/1/p{n}"}
            )
        return httpx.Response(200, json=job(partitions=1, next_="run_x/1/p0"))

    c, _ = client(handler)
    whole = c.get_whole_job("run_x/1")
    assert [p["task"] for p in whole["partitions"]] == ["run_x/1/p0", "run_x/1/p1", "run_x/1/p2"]
    assert whole["partitionsNext"] is None
    assert seen[1].url.params["limit"] == "10000"


def test_create_says_whether_it_created_and_answers_a_busy_job_as_found_running() -> None:
    busy = {
        "type": "/problems/partitions-busy",
        "title": "Partitions are busy",
        "status": 409,
        "instance": "/api/v1/jobs/run_x%2F1",
    }
    answers = iter(
        [
            httpx.Response(201, json=job()),
            httpx.Response(200, json=job()),
            httpx.Response(409, json=busy),
            httpx.Response(200, json=job()),
        ]
    )
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return next(answers)

    c, _ = client(handler)
    body: models.RunRequest = {"template": "{}", "interval": "2026-01-01/2026-01-02"}
    assert c.create("run", body, idempotency_key="k1")[1] is True
    assert seen[0].headers["idempotency-key"] == "k1"
    assert json.loads(seen[0].content) == body
    assert c.create("run", body)[1] is False
    assert "idempotency-key" not in seen[1].headers
    found, created = c.create("run", body)
    assert (found["id"], created) == ("run_x/1", False)
    assert seen[-1].method == "GET" and seen[-1].url.raw_path == b"/api/v1/jobs/run_x%2F1"
    with pytest.raises(ValueError, match="from and to"):
        c.create("backfill", body)


def test_waiting_rides_out_an_outage_within_its_budget() -> None:
    now = [0.0]
    answers: list[httpx.Response | None] = [None, None, httpx.Response(200, json={"ended": True, "job": {}})]

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/wait"):
            answer = answers.pop(0)
            if answer is None:
                raise httpx.ReadError("reset (injected)")
            return answer
        return httpx.Response(200, json=job())

    c, slept = client(handler)
    progress: list[Any] = []
    ended, whole = c.wait_until_ended(
        "j", outage_timeout=600, on_progress=progress.append, clock=lambda: now[0]
    )
    assert ended and whole["id"] == "run_x/1"
    assert slept == [1.0, 2.0] and progress == [{}]

    backoff = Backoff(10, clock=lambda: now[0])
    error = SegopsApiError("down")
    assert backoff.next_delay(error) == 1.0
    now[0] = 11.0
    with pytest.raises(SegopsApiError, match="has not answered for 11 s"):
        backoff.next_delay(error)


def test_the_async_client_does_the_same() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path.endswith("/partitions"):
            return httpx.Response(200, json={"items": [partition("run_x/1/p1")], "next": None})
        if request.url.path.endswith("/cancel"):
            return httpx.Response(200, json={"flagged": 1, "shutdown": ["t"]})
        if len(seen) == 1:
            return httpx.Response(503, text="draining")
        return httpx.Response(200, json=job(next_="run_x/1/p0"))

    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    async def main() -> tuple[models.Job, models.CancelResult]:
        async with AsyncSegopsClient(
            "http://segops.test:7077",
            TOKEN,
            retries=1,
            transport=httpx.MockTransport(handler),
            sleep=sleep,
        ) as c:
            return await c.get_whole_job("run_x/1"), await c.cancel_job("run_x/1", body={"shutdown": True})

    whole, cancelled = asyncio.run(main())
    assert [p["task"] for p in whole["partitions"]] == ["run_x/1/p0", "run_x/1/p1"]
    assert cancelled == {"flagged": 1, "shutdown": ["t"]}
    assert slept == [0.5]
    assert json.loads(seen[-1].content) == {"shutdown": True}
    assert all(r.headers["authorization"] == f"Bearer {TOKEN}" for r in seen)
