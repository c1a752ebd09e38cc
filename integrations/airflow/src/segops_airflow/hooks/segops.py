"""Hooks for the segops service API (`segops serve`, OpenAPI at `/openapi.json`).

The connection (type `segops`): host = the service URL (`http://segops.internal:7077`; or a bare host with
port and `schema` = `http`/`https`), password = the API token (sent as `Authorization: Bearer …`), extra
(JSON) for defaults:

- `druid_host`: the host used in `druid://<host>/<datasource>` asset URIs (default: the Overlord host the
  job's cluster has, as the service reports it)
- `vars`, `spec_version`, `prefix`, `min_rows`, `max_unparseable`: defaults for the operators' fields
- `request_timeout` (seconds, default 30), `poll_timeout` (long-poll seconds, ≤ 300, default 60),
  `verify` (true/false or a CA bundle path)
"""

from __future__ import annotations

import asyncio
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import httpx
from airflow.sdk import BaseHook
from airflow.sdk.exceptions import AirflowException

JsonDict = dict[str, Any]

#: Statuses worth asking again: the service (or a proxy) is restarting, draining or overloaded.
RETRYABLE_STATUSES = frozenset({408, 429, 502, 503, 504})
MAX_POLL_TIMEOUT = 300.0


#: The problem segops answers when partitions whose input changed are still running on the old input.
BUSY_PROBLEM = "/problems/partitions-busy"


class SegopsApiError(AirflowException):
    """An answer of the segops service that is not a success (an RFC 9457 problem), or no answer at all."""

    def __init__(self, message: str, *, status: int | None = None, problem: JsonDict | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.problem = problem or {}

    @property
    def retryable(self) -> bool:
        """True for no answer (connection refused, reset, timeout) and for 408/429/502/503/504."""
        return self.status is None or self.status in RETRYABLE_STATUSES


def problem_message(method: str, path: str, status: int, body: Any) -> str:
    """`POST /api/v1/runs: 400 invalid request: interval: …; vars.x: …` from a problem+json body."""
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


def quote_id(job_id: str) -> str:
    """Job ids are path segments (they contain `/` for partitions): percent-encode everything."""
    return urllib.parse.quote(job_id, safe="")


#: Partitions asked for per page when a large job's answer does not show them all (the API's most).
PARTITION_PAGE = 10_000


def partitions_path(job: Mapping[str, Any]) -> str:
    """Where the partitions a job's answer leaves out are read, a page at a time."""
    return f"/api/v1/jobs/{quote_id(str(job['id']))}/partitions"


def job_ended(job: Mapping[str, Any]) -> bool:
    """A job (or job summary) whose partitions can no longer run: done or failed (a cancel ends failed)."""
    return job.get("state") in ("done", "failed")


@dataclass(frozen=True)
class SegopsSettings:
    """What a connection says: where the service is, its token, and defaults from the extras."""

    base_url: str
    token: str | None
    druid_host: str | None = None
    request_timeout: float = 30.0
    poll_timeout: float = 60.0
    verify: bool | str = True
    defaults: JsonDict = field(default_factory=dict)

    @classmethod
    def from_connection(cls, conn: Any) -> SegopsSettings:
        host = (conn.host or "").strip()
        if not host:
            raise AirflowException(
                f"segops connection {conn.conn_id!r} has no host: set it to the service URL, "
                "e.g. http://segops.internal:7077"
            )
        if "://" in host:
            base = host.rstrip("/")
            if conn.port and urllib.parse.urlsplit(base).port is None:
                parts = urllib.parse.urlsplit(base)
                base = urllib.parse.urlunsplit(parts._replace(netloc=f"{parts.netloc}:{conn.port}"))
        else:
            scheme = (conn.schema or "http").strip() or "http"
            base = f"{scheme}://{host}" + (f":{conn.port}" if conn.port else "")
        extra = conn.extra_dejson or {}
        verify: bool | str = extra.get("verify", True)
        if isinstance(verify, str) and verify.lower() in ("true", "false"):
            verify = verify.lower() == "true"
        defaults = {
            k: extra[k]
            for k in ("vars", "spec_version", "prefix", "min_rows", "max_unparseable")
            if extra.get(k) not in (None, "")
        }
        return cls(
            base_url=base,
            token=conn.password or None,
            druid_host=extra.get("druid_host") or None,
            request_timeout=float(extra.get("request_timeout", 30)),
            poll_timeout=min(float(extra.get("poll_timeout", 60)), MAX_POLL_TIMEOUT),
            verify=verify,
            defaults=defaults,
        )

    def headers(self) -> dict[str, str]:
        h = {"accept": "application/json", "user-agent": "airflow-provider-segops"}
        if self.token:
            h["authorization"] = f"Bearer {self.token}"
        return h


def _decode(method: str, path: str, response: httpx.Response) -> JsonDict:
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text
    if response.status_code >= 400:
        raise SegopsApiError(
            problem_message(method, path, response.status_code, body),
            status=response.status_code,
            problem=body if isinstance(body, dict) else None,
        )
    if not isinstance(body, dict):
        raise SegopsApiError(f"{method} {path}: expected a JSON object, got {str(body)[:200]!r}")
    return body


def _unreachable(method: str, path: str, base: str, error: Exception) -> SegopsApiError:
    return SegopsApiError(f"{method} {path}: the segops service at {base} did not answer: {error!r}")


class SegopsHook(BaseHook):
    """Synchronous client of `segops serve` (creating work, reading jobs, long-polling, cancel, retry)."""

    conn_name_attr = "segops_conn_id"
    default_conn_name = "segops_default"
    conn_type = "segops"
    hook_name = "segops"

    def __init__(self, segops_conn_id: str = default_conn_name, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.segops_conn_id = segops_conn_id

    @classmethod
    def get_ui_field_behaviour(cls) -> dict[str, Any]:
        return {
            "hidden_fields": ["login"],
            "relabeling": {
                "host": "Service URL",
                "password": "API token",
                "schema": "Scheme (bare host only)",
            },
            "placeholders": {
                "host": "http://segops.internal:7077",
                "password": "the token segops serve reads from --api-token-file",
                "extra": '{"druid_host": "router.druid.internal:8888", "vars": {"dataDir": "/data"}}',
            },
        }

    @cached_property
    def settings(self) -> SegopsSettings:
        return SegopsSettings.from_connection(self.get_connection(self.segops_conn_id))

    def get_conn(self) -> httpx.Client:
        s = self.settings
        return httpx.Client(
            base_url=s.base_url, headers=s.headers(), timeout=s.request_timeout, verify=s.verify
        )

    @cached_property
    def _client(self) -> httpx.Client:
        return self.get_conn()

    def _call(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        read_timeout: float | None = None,
    ) -> tuple[int, JsonDict]:
        timeout = (
            httpx.Timeout(self.settings.request_timeout, read=read_timeout)
            if read_timeout
            else httpx.USE_CLIENT_DEFAULT
        )
        try:
            response = self._client.request(
                method, path, json=json, params=params, headers=dict(headers or {}), timeout=timeout
            )
        except httpx.HTTPError as error:
            raise _unreachable(method, path, self.settings.base_url, error) from error
        return response.status_code, _decode(method, path, response)

    # The API, route by route.

    def create(
        self, kind: str, body: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> tuple[JsonDict, bool]:
        """`POST /api/v1/runs` (kind "run") or `/api/v1/backfills`: (the job, whether it was created now).

        The same inputs name the same job: a repeated call answers 200 with that job, and nothing is
        submitted to Druid twice.
        """
        if kind not in ("run", "backfill"):
            raise ValueError(f"kind must be 'run' or 'backfill', got {kind!r}")
        path = "/api/v1/runs" if kind == "run" else "/api/v1/backfills"
        headers = {"idempotency-key": idempotency_key} if idempotency_key else None
        try:
            status, job = self._call("POST", path, json=dict(body), headers=headers)
        except SegopsApiError as error:
            # A partition whose input changed is running on the old input: the job is found running, as
            # when it was started by another try; asked again once it ended, the partition runs again.
            instance = error.problem.get("instance")
            if error.problem.get("type") == BUSY_PROBLEM and isinstance(instance, str):
                return self._whole(self._call("GET", instance)[1]), False
            raise
        return self._whole(job), status == 201

    def get_job(self, job_id: str) -> JsonDict:
        return self._whole(self._call("GET", f"/api/v1/jobs/{quote_id(job_id)}")[1])

    def _whole(self, job: JsonDict) -> JsonDict:
        """The job with every partition: a large job's answer shows the first page, the rest are paged."""
        after = job.get("partitionsNext")
        while isinstance(after, str):
            params = {"after": after, "limit": PARTITION_PAGE}
            page = self._call("GET", partitions_path(job), params=params)[1]
            job["partitions"] = [*(job.get("partitions") or []), *page["items"]]
            after = page.get("next")
        job["partitionsNext"] = None
        return job

    def wait(self, job_id: str, timeout: float | None = None) -> JsonDict:
        """One long-poll: `{ended, job}` as soon as the job ends, or `ended: false` after `timeout` s."""
        t = min(self.settings.poll_timeout if timeout is None else timeout, MAX_POLL_TIMEOUT)
        return self._call(
            "GET",
            f"/api/v1/jobs/{quote_id(job_id)}/wait",
            params={"timeout": _seconds(t)},
            read_timeout=t + self.settings.request_timeout,
        )[1]

    def wait_until_ended(
        self,
        job_id: str,
        *,
        timeout: float | None = None,
        poll_timeout: float | None = None,
        outage_timeout: float = 600.0,
        on_progress: Callable[[JsonDict], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> JsonDict:
        """Long-polls until the job ends (then returns the full job) or `timeout` s pass (then raises).

        While the service does not answer (a restart, a SIGTERM drain) it asks again with capped backoff,
        for at most `outage_timeout` s in a row.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        backoff = _Backoff(outage_timeout)
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise SegopsApiError(f"segops job {job_id} did not end within {timeout:g} s")
            poll = self.settings.poll_timeout if poll_timeout is None else poll_timeout
            try:
                result = self.wait(job_id, poll if left is None else min(poll, left))
            except SegopsApiError as error:
                if not error.retryable:
                    raise
                sleep(backoff.next_delay(error))
                continue
            backoff.reset()
            if on_progress is not None:
                on_progress(result["job"])
            if result.get("ended"):
                return self.get_job(job_id)

    def cancel(self, job_id: str, *, shutdown: bool = False, reason: str | None = None) -> JsonDict:
        body: JsonDict = {"shutdown": shutdown}
        if reason:
            body["reason"] = reason[:500]
        return self._call("POST", f"/api/v1/jobs/{quote_id(job_id)}/cancel", json=body)[1]

    def retry(self, job_id: str) -> JsonDict:
        """Sends the job's failed, canceled and dead-lettered partitions back to run."""
        return self._call("POST", f"/api/v1/jobs/{quote_id(job_id)}/retry")[1]

    def test_connection(self) -> tuple[bool, str]:
        """Airflow's "Test" button: the service is ready (ledger and Druid answer) and the token works."""
        try:
            _, ready = self._call("GET", "/readyz")
            self._call("GET", "/api/v1/jobs", params={"limit": 1})
        except SegopsApiError as error:
            return False, str(error)
        if not ready.get("ready"):
            return False, f"segops at {self.settings.base_url} is not ready: {ready}"
        return True, f"segops at {self.settings.base_url} is ready"


class SegopsAsyncHook(BaseHook):
    """The asynchronous half, for triggers: reads and long-polls without blocking the triggerer's loop."""

    conn_name_attr = "segops_conn_id"
    default_conn_name = "segops_default"
    conn_type = "segops"
    hook_name = "segops (async)"

    def __init__(self, segops_conn_id: str = default_conn_name, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.segops_conn_id = segops_conn_id
        self._settings: SegopsSettings | None = None

    async def get_settings(self) -> SegopsSettings:
        if self._settings is None:
            self._settings = SegopsSettings.from_connection(await self.aget_connection(self.segops_conn_id))
        return self._settings

    async def _call(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
        read_timeout: float | None = None,
    ) -> JsonDict:
        s = await self.get_settings()
        timeout = httpx.Timeout(s.request_timeout, read=read_timeout or s.request_timeout)
        try:
            async with httpx.AsyncClient(
                base_url=s.base_url, headers=s.headers(), timeout=timeout, verify=s.verify
            ) as client:
                response = await client.request(method, path, json=json, params=params)
        except httpx.HTTPError as error:
            raise _unreachable(method, path, s.base_url, error) from error
        return _decode(method, path, response)

    async def get_job(self, job_id: str) -> JsonDict:
        job = await self._call("GET", f"/api/v1/jobs/{quote_id(job_id)}")
        after = job.get("partitionsNext")
        while isinstance(after, str):
            params = {"after": after, "limit": PARTITION_PAGE}
            page = await self._call("GET", partitions_path(job), params=params)
            job["partitions"] = [*(job.get("partitions") or []), *page["items"]]
            after = page.get("next")
        job["partitionsNext"] = None
        return job

    async def wait(self, job_id: str, timeout: float | None = None) -> JsonDict:
        s = await self.get_settings()
        t = min(s.poll_timeout if timeout is None else timeout, MAX_POLL_TIMEOUT)
        return await self._call(
            "GET",
            f"/api/v1/jobs/{quote_id(job_id)}/wait",
            params={"timeout": _seconds(t)},
            read_timeout=t + s.request_timeout,
        )

    async def cancel(self, job_id: str, *, shutdown: bool = False, reason: str | None = None) -> JsonDict:
        body: JsonDict = {"shutdown": shutdown}
        if reason:
            body["reason"] = reason[:500]
        return await self._call("POST", f"/api/v1/jobs/{quote_id(job_id)}/cancel", json=body)


def _seconds(t: float) -> str:
    """The wait route reads a JSON number: `60`, `0.5`."""
    text = f"{max(0.0, t):.3f}".rstrip("0").rstrip(".")
    return text or "0"


class _Backoff:
    """Capped exponential backoff across consecutive failures, bounded in total time."""

    def __init__(self, budget: float, base: float = 1.0, cap: float = 30.0) -> None:
        self.budget, self.base, self.cap = budget, base, cap
        self.reset()

    def reset(self) -> None:
        self.failures = 0
        self.since: float | None = None

    def next_delay(self, error: Exception) -> float:
        now = time.monotonic()
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

    async def asleep(self, error: Exception) -> None:
        await asyncio.sleep(self.next_delay(error))
