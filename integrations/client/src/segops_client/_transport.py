"""The hand-written half: sending a generated operation's :class:`~segops_client._call.Call` over HTTP (bearer
token, timeouts, retries of idempotent calls), the service's problems as :class:`SegopsApiError`, and the
few things every caller needs on top of single calls (a job with all its partitions, the long-poll until a
job ends, a request whose partitions are busy)."""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import unquote

import httpx

from . import models
from ._call import Call, Reply
from ._operations import AsyncOperations, SyncOperations

__all__ = [
    "BUSY_PROBLEM",
    "MAX_WAIT",
    "PARTITION_PAGE",
    "RETRYABLE_STATUSES",
    "AsyncSegopsClient",
    "Backoff",
    "SegopsApiError",
    "SegopsClient",
    "job_ended",
    "problem_message",
]

#: Statuses worth asking again: the service (or a proxy) is restarting, draining or overloaded.
RETRYABLE_STATUSES = frozenset({408, 429, 502, 503, 504})
#: The longest long-poll the service accepts, in seconds.
MAX_WAIT = 300.0
#: Partitions asked for per page when a large job's answer does not show them all (the API's most).
PARTITION_PAGE = 10_000
#: The problem segops answers when partitions whose input changed are still running on the old input.
BUSY_PROBLEM = "/problems/partitions-busy"

Kind = Literal["run", "backfill"]


class SegopsApiError(Exception):
    """An answer of the service that is not a success (an RFC 9457 problem), or no answer at all.

    ``status`` is the HTTP status (None when the service did not answer); ``problem`` the problem's body
    (``type``, ``title``, ``detail``, ``errors`` naming each faulty field) when there was one.
    """

    def __init__(self, message: str, *, status: int | None = None, problem: Mapping[str, Any] | None = None):
        super().__init__(message)
        self.status = status
        self.problem: dict[str, Any] = dict(problem or {})

    @property
    def retryable(self) -> bool:
        """True for no answer (refused, reset, timed out) and for 408/429/502/503/504."""
        return self.status is None or self.status in RETRYABLE_STATUSES


def problem_message(method: str, path: str, status: int, body: Any) -> str:
    """``POST /api/v1/runs: 400 The request is invalid: interval: …; vars.x: …`` from a problem's body."""
    if not isinstance(body, Mapping):
        text = str(body).strip()[:500] if body not in (None, "") else ""
        return f"{method} {path}: HTTP {status}" + (f": {text}" if text else "")
    title = body.get("title") or body.get("type") or "error"
    parts = [f"{method} {path}: {status} {title}"]
    detail = body.get("detail")
    if detail and detail != title:
        parts.append(str(detail))
    errors = body.get("errors")
    if isinstance(errors, list) and errors:
        named = []
        for e in errors:
            if isinstance(e, Mapping):
                where = e.get("path") or ""
                named.append(f"{where}: {e.get('message')}" if where else str(e.get("message")))
        named = [n for n in named if n not in str(detail or "")]
        if named:
            parts.append("; ".join(named))
    return ": ".join(parts)


def job_ended(job: Mapping[str, Any]) -> bool:
    """A job (or its summary) whose partitions can no longer run: done or failed (a cancel ends failed)."""
    return job.get("state") in ("done", "failed")


class Backoff:
    """Capped exponential backoff across consecutive failures, bounded in total time (``budget`` seconds
    since the first failure of the run; then the last error is raised)."""

    def __init__(
        self,
        budget: float,
        base: float = 1.0,
        cap: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.budget, self.base, self.cap, self._clock = budget, base, cap, clock
        self.reset()

    def reset(self) -> None:
        self.failures = 0
        self.since: float | None = None

    def next_delay(self, error: Exception) -> float:
        now = self._clock()
        if self.since is None:
            self.since = now
        if now - self.since > self.budget:
            raise SegopsApiError(
                f"the segops service has not answered for {now - self.since:.0f} s (budget {self.budget:g} s): "
                f"{error}"
            ) from error
        delay = min(self.cap, self.base * float(2**self.failures))
        self.failures += 1
        return delay


@dataclass(frozen=True)
class _Settings:
    url: str
    #: Never shown: not in the repr, not in any message.
    token: str | None = field(repr=False)
    request_timeout: float
    retries: int
    verify: bool | str
    user_agent: str

    def headers(self) -> dict[str, str]:
        h = {"accept": "application/json", "user-agent": self.user_agent}
        if self.token:
            h["authorization"] = f"Bearer {self.token}"
        return h

    def tls(self) -> bool | ssl.SSLContext:
        """A CA bundle path as httpx wants it (a context), or on/off."""
        return ssl.create_default_context(cafile=self.verify) if isinstance(self.verify, str) else self.verify

    def timeout(self, call: Call) -> httpx.Timeout:
        t = self.request_timeout
        return httpx.Timeout(t, read=t + call.request_timeout) if call.request_timeout else httpx.Timeout(t)

    def request(self, call: Call) -> tuple[dict[str, str], dict[str, str], Any]:
        params = {k: _query_value(v) for k, v in call.query.items() if v is not None}
        headers = {k: v for k, v in call.headers.items() if v is not None}
        return params, headers, call.body

    def retry_delay(self, attempt: int) -> float | None:
        """Seconds before try ``attempt + 1``, or None when the tries are used up."""
        return min(8.0, 0.25 * 2**attempt) if attempt <= self.retries else None

    def reply(self, call: Call, response: httpx.Response) -> Reply:
        try:
            body: Any = response.json() if response.content else None
        except ValueError:
            body = response.text
        if response.status_code not in call.ok:
            raise SegopsApiError(
                problem_message(call.method, call.path, response.status_code, body),
                status=response.status_code,
                problem=body if isinstance(body, dict) else None,
            )
        return Reply(response.status_code, body)

    def unreachable(self, call: Call, error: Exception) -> SegopsApiError:
        return SegopsApiError(f"segops at {self.url} did not answer {call.method} {call.path}: {error!r}")


def _query_value(value: Any) -> str:
    """Numbers as JSON writes them (``60``, ``0.5``): the service reads a query number in that grammar."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        text = f"{max(0.0, value):.3f}".rstrip("0").rstrip(".") if value >= 0 else repr(value)
        return text or "0"
    return str(value)


def _settings(
    url: str, token: str | None, request_timeout: float, retries: int, verify: bool | str, user_agent: str
) -> _Settings:
    return _Settings(url.rstrip("/"), token or None, request_timeout, retries, verify, user_agent)


def _with_partitions(job: models.Job, page: models.PartitionPage) -> str | None:
    job["partitions"] = [*job["partitions"], *page["items"]]
    return page["next"]


class SegopsClient(SyncOperations):
    """Blocking client of one segops service; every generated operation is a method.

    ``retries`` applies to connection errors and 408/429/502/503/504 answers of every call: each is
    idempotent (a POST of the same inputs names the same job), so asking again is safe. The token is sent
    as ``Authorization: Bearer …`` and appears in no message or repr.
    """

    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        request_timeout: float = 30.0,
        retries: int = 0,
        verify: bool | str = True,
        user_agent: str = "segops-client",
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._s = _settings(url, token, request_timeout, retries, verify, user_agent)
        self._sleep = sleep
        self._http = httpx.Client(
            base_url=self._s.url, headers=self._s.headers(), verify=self._s.tls(), transport=transport
        )

    @property
    def url(self) -> str:
        return self._s.url

    def __repr__(self) -> str:
        return f"SegopsClient({self._s.url!r})"

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> SegopsClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _send(self, call: Call) -> Reply:
        params, headers, body = self._s.request(call)
        attempt = 0
        while True:
            attempt += 1
            try:
                response = self._http.request(
                    call.method,
                    call.path,
                    params=params,
                    headers=headers,
                    json=body,
                    timeout=self._s.timeout(call),
                )
            except httpx.HTTPError as error:
                delay = self._s.retry_delay(attempt)
                if delay is None:
                    raise self._s.unreachable(call, error) from error
                self._sleep(delay)
                continue
            status = response.status_code
            if status in RETRYABLE_STATUSES and status not in call.ok:
                delay = self._s.retry_delay(attempt)
                if delay is not None:
                    self._sleep(delay)
                    continue
            return self._s.reply(call, response)

    # What every caller needs on top of single calls.

    def whole_job(self, job: models.Job) -> models.Job:
        """The job with every partition: a large job's answer shows the first page; the rest are paged in."""
        after = job["partitionsNext"]
        while after is not None:
            after = _with_partitions(
                job, self.list_job_partitions(job["id"], after=after, limit=PARTITION_PAGE)
            )
        job["partitionsNext"] = None
        return job

    def get_whole_job(self, job_id: str) -> models.Job:
        return self.whole_job(self.get_job(job_id))

    def create(
        self,
        kind: Kind,
        body: models.RunRequest | models.BackfillRequest,
        *,
        idempotency_key: str | None = None,
    ) -> tuple[models.Job, bool]:
        """``POST /api/v1/runs`` or ``/backfills``: (the whole job, whether this call created it).

        The same inputs name the same job: a repeated call answers it again and submits nothing twice. A
        job whose changed partitions still run on the old input (409 ``partitions-busy``) is answered as
        found running; asked again once it ended, those partitions are planned anew.
        """
        try:
            if kind == "run":
                answer = self.create_run(_run(body), idempotency_key=idempotency_key)
            else:
                answer = self.create_backfill(_backfill(body), idempotency_key=idempotency_key)
        except SegopsApiError as error:
            busy = _busy_job(error)
            if busy is None:
                raise
            return self.get_whole_job(busy), False
        return self.whole_job(answer.body), answer.status == 201

    def plan(self, kind: Kind, body: models.RunRequest | models.BackfillRequest) -> models.Plan:
        """What the same request would create: the job id, partitions, rendered input sources, gates."""
        return self.plan_run(_run(body)) if kind == "run" else self.plan_backfill(_backfill(body))

    def gates(self, job_id: str) -> list[models.PartitionGates]:
        """segops' verdict on every partition's row counters under its job's gates."""
        page = self.list_job_gates(job_id, limit=PARTITION_PAGE)
        items = list(page["items"])
        while page["next"] is not None:
            page = self.list_job_gates(job_id, after=page["next"], limit=PARTITION_PAGE)
            items.extend(page["items"])
        return items

    def wait(self, job_id: str, timeout: float) -> models.WaitResult:
        """One long-poll: answers as soon as the job ends, or ``ended: false`` after ``timeout`` s (≤ 300)."""
        t = max(0.0, min(timeout, MAX_WAIT))
        return self.wait_for_job(job_id, timeout=t, request_timeout=t)

    def wait_until_ended(
        self,
        job_id: str,
        *,
        timeout: float | None = None,
        poll: float = 60.0,
        outage_timeout: float | None = 600.0,
        on_progress: Callable[[models.JobSummary], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> tuple[bool, models.Job]:
        """Long-polls until the job ends or ``timeout`` s pass: ``(ended, the whole job)``.

        While the service does not answer (a restart, a drain) it asks again with capped backoff for at
        most ``outage_timeout`` s in a row (None: the first such error is raised).
        """
        deadline = None if timeout is None else clock() + timeout
        backoff = Backoff(outage_timeout or 0.0, clock=clock)
        while True:
            left = None if deadline is None else deadline - clock()
            if left is not None and left <= 0:
                return False, self.get_whole_job(job_id)
            try:
                result = self.wait(job_id, poll if left is None else min(poll, left))
            except SegopsApiError as error:
                if outage_timeout is None or not error.retryable:
                    raise
                self._sleep(backoff.next_delay(error))
                continue
            backoff.reset()
            if on_progress is not None:
                on_progress(result["job"])
            if result["ended"]:
                return True, self.get_whole_job(job_id)


class AsyncSegopsClient(AsyncOperations):
    """The same client for an event loop (an Airflow trigger): every operation a coroutine. Use it as an
    ``async with`` block, or ``await client.aclose()``."""

    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        request_timeout: float = 30.0,
        retries: int = 0,
        verify: bool | str = True,
        user_agent: str = "segops-client",
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._s = _settings(url, token, request_timeout, retries, verify, user_agent)
        self._sleep = sleep
        self._http = httpx.AsyncClient(
            base_url=self._s.url, headers=self._s.headers(), verify=self._s.tls(), transport=transport
        )

    @property
    def url(self) -> str:
        return self._s.url

    def __repr__(self) -> str:
        return f"AsyncSegopsClient({self._s.url!r})"

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncSegopsClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def _send(self, call: Call) -> Reply:
        params, headers, body = self._s.request(call)
        attempt = 0
        while True:
            attempt += 1
            try:
                response = await self._http.request(
                    call.method,
                    call.path,
                    params=params,
                    headers=headers,
                    json=body,
                    timeout=self._s.timeout(call),
                )
            except httpx.HTTPError as error:
                delay = self._s.retry_delay(attempt)
                if delay is None:
                    raise self._s.unreachable(call, error) from error
                await self._sleep(delay)
                continue
            status = response.status_code
            if status in RETRYABLE_STATUSES and status not in call.ok:
                delay = self._s.retry_delay(attempt)
                if delay is not None:
                    await self._sleep(delay)
                    continue
            return self._s.reply(call, response)

    async def whole_job(self, job: models.Job) -> models.Job:
        """The job with every partition (see :meth:`SegopsClient.whole_job`)."""
        after = job["partitionsNext"]
        while after is not None:
            page = await self.list_job_partitions(job["id"], after=after, limit=PARTITION_PAGE)
            after = _with_partitions(job, page)
        job["partitionsNext"] = None
        return job

    async def get_whole_job(self, job_id: str) -> models.Job:
        return await self.whole_job(await self.get_job(job_id))

    async def wait(self, job_id: str, timeout: float) -> models.WaitResult:
        """One long-poll (see :meth:`SegopsClient.wait`)."""
        t = max(0.0, min(timeout, MAX_WAIT))
        return await self.wait_for_job(job_id, timeout=t, request_timeout=t)


def _run(body: models.RunRequest | models.BackfillRequest) -> models.RunRequest:
    if "interval" not in body:
        raise ValueError("a run's request names its interval")
    return body


def _backfill(body: models.RunRequest | models.BackfillRequest) -> models.BackfillRequest:
    if "from" not in body or "to" not in body:
        raise ValueError("a backfill's request names its range: from and to")
    return body


def _busy_job(error: SegopsApiError) -> str | None:
    """The job a 409 ``partitions-busy`` names, else None."""
    instance = error.problem.get("instance")
    if error.problem.get("type") != BUSY_PROBLEM or not isinstance(instance, str):
        return None
    prefix = "/api/v1/jobs/"
    if not instance.startswith(prefix):
        return None
    return unquote(instance[len(prefix) :])
