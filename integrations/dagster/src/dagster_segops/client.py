"""A small client for the segops service (`segops serve`, OpenAPI 3.1 at ``GET /openapi.json``).

Only what the Dagster integration needs: start a run or a backfill (idempotent: the same inputs name the
same job), read a job, long-poll until it ends, cancel or retry it, and the version audit. Errors are the
service's RFC 9457 problem details, raised as :class:`SegopsApiError` with the status, title, detail and
the faulty fields.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import requests

__all__ = ["JobView", "SegopsApiError", "SegopsClient"]

JsonObject = dict[str, Any]

#: Statuses worth another try for the idempotent calls (every call here is: a repeated POST of the same
#: inputs names the same job).
_TRANSIENT = {502, 503, 504}
#: The longest long-poll the service accepts, in seconds.
MAX_WAIT_S = 300.0


#: The problem segops answers when partitions whose input changed are still running on the old input.
BUSY_PROBLEM = "/problems/partitions-busy"
#: Partitions asked for per page when a large job's answer does not show them all (the API's most).
PARTITION_PAGE = 10_000


class SegopsApiError(Exception):
    """The service refused a request, or could not be reached.

    ``status`` is the HTTP status (``None`` when the service did not answer); ``problem`` the RFC 9457
    body (``title``, ``detail``, ``errors`` naming each faulty field) when there was one.
    """

    def __init__(self, message: str, *, status: int | None = None, problem: JsonObject | None = None):
        super().__init__(message)
        self.status = status
        self.problem: JsonObject = problem or {}


@dataclass(frozen=True)
class JobView:
    """A job as ``GET /api/v1/jobs/{id}`` shows it, with the fields the integration reads typed."""

    raw: JsonObject
    #: True when the POST created it (201); False when the same inputs named an existing job (200).
    created: bool = field(default=False)

    @property
    def id(self) -> str:
        return str(self.raw["id"])

    @property
    def kind(self) -> str:
        return str(self.raw["kind"])

    @property
    def state(self) -> str:
        """``open``, ``done`` (every partition handed off and audited), ``failed`` or ``canceled``."""
        return str(self.raw["state"])

    @property
    def counts(self) -> Mapping[str, int]:
        return dict(self.raw.get("counts") or {})

    @property
    def partitions(self) -> list[JsonObject]:
        return list(self.raw.get("partitions") or [])

    @property
    def datasource(self) -> str | None:
        ds = (self.raw.get("options") or {}).get("datasource")
        return str(ds) if ds is not None else None

    @property
    def ended(self) -> bool:
        """No partition can run any more."""
        counts = self.counts
        return not any(counts.get(s, 0) for s in ("new", "running", "suspended"))


class SegopsClient:
    """HTTP client of one segops service.

    ``retries`` applies to connection errors and 502/503/504 answers: every call is idempotent (a POST of
    the same inputs is the same job; the service keeps no per-connection state), so trying again is safe.
    """

    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        request_timeout: float = 30.0,
        retries: int = 4,
        session: requests.Session | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.url = url.rstrip("/")
        self._token = token or None
        self._timeout = request_timeout
        self._retries = retries
        self._session = session or requests.Session()
        self._sleep = sleep

    # -- the API -----------------------------------------------------------------------------------------

    def create_run(self, body: Mapping[str, Any], idempotency_key: str | None = None) -> JobView:
        """``POST /api/v1/runs``: one partition over ``body["interval"]``."""
        return self._create("/api/v1/runs", body, idempotency_key)

    def create_backfill(self, body: Mapping[str, Any], idempotency_key: str | None = None) -> JobView:
        """``POST /api/v1/backfills``: one partition per granularity bucket of ``from``/``to``."""
        return self._create("/api/v1/backfills", body, idempotency_key)

    def get_job(self, job_id: str) -> JobView:
        return JobView(self._whole(self._request("GET", f"/api/v1/jobs/{_seg(job_id)}").json()))

    def wait(self, job_id: str, timeout_s: float) -> tuple[bool, JsonObject]:
        """One long-poll (at most 300 s): ``(ended, job summary)``."""
        timeout_s = max(0.0, min(timeout_s, MAX_WAIT_S))
        response = self._request(
            "GET",
            f"/api/v1/jobs/{_seg(job_id)}/wait",
            params={"timeout": f"{timeout_s:g}"},
            read_timeout=timeout_s + self._timeout,
        )
        body = response.json()
        return bool(body["ended"]), dict(body["job"])

    def wait_until_ended(
        self,
        job_id: str,
        *,
        timeout_s: float | None = None,
        poll_s: float = 60.0,
        on_progress: Callable[[JsonObject], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> tuple[bool, JobView]:
        """Long-polls until the job ends or ``timeout_s`` passes; ``(ended, job)`` with the full job."""
        deadline = None if timeout_s is None else clock() + timeout_s
        while True:
            left = poll_s if deadline is None else min(poll_s, deadline - clock())
            if left <= 0:
                return False, self.get_job(job_id)
            ended, summary = self.wait(job_id, left)
            if ended:
                return True, self.get_job(job_id)
            if on_progress is not None:
                on_progress(summary)

    def cancel(self, job_id: str, *, shutdown: bool = False, reason: str | None = None) -> JsonObject:
        body: JsonObject = {"shutdown": shutdown}
        if reason:
            body["reason"] = reason[:500]
        return dict(self._request("POST", f"/api/v1/jobs/{_seg(job_id)}/cancel", json=body).json())

    def retry(self, job_id: str) -> JsonObject:
        """Sends the job's failed and dead-lettered partitions back to run."""
        return dict(self._request("POST", f"/api/v1/jobs/{_seg(job_id)}/retry").json())

    def audit(self, datasource: str, interval: str, granularity: str | None = None) -> JsonObject:
        """``GET /api/v1/audit``: one live version per time chunk, every segment served."""
        params = {"datasource": datasource, "interval": interval}
        if granularity:
            params["granularity"] = granularity
        return dict(self._request("GET", "/api/v1/audit", params=params).json())

    def list_jobs(self, *, kind: str | None = None, state: str | None = None) -> Iterator[JsonObject]:
        """Every job (summaries), newest first, following the cursor."""
        params: dict[str, str] = {"limit": "500"}
        if kind:
            params["kind"] = kind
        if state:
            params["state"] = state
        while True:
            page = self._request("GET", "/api/v1/jobs", params=params).json()
            yield from page["items"]
            if not page.get("nextCursor"):
                return
            params["cursor"] = page["nextCursor"]

    # -- plumbing ----------------------------------------------------------------------------------------

    def _create(self, path: str, body: Mapping[str, Any], key: str | None) -> JobView:
        headers = {"Idempotency-Key": key} if key else None
        try:
            response = self._request("POST", path, json=dict(body), headers=headers)
        except SegopsApiError as error:
            # A partition whose input changed is running on the old input: the job is found running, as
            # when another run started it; asked again once it ended, the partition runs again.
            instance = error.problem.get("instance")
            if error.problem.get("type") == BUSY_PROBLEM and isinstance(instance, str):
                return JobView(self._whole(self._request("GET", instance).json()))
            raise
        return JobView(self._whole(response.json()), created=response.status_code == 201)

    def _whole(self, job: JsonObject) -> JsonObject:
        """The job with every partition: a large job's answer shows the first page, the rest are paged."""
        after = job.get("partitionsNext")
        path = f"/api/v1/jobs/{_seg(str(job.get('id')))}/partitions"
        while isinstance(after, str):
            page = self._request("GET", path, params={"after": after, "limit": str(PARTITION_PAGE)}).json()
            job["partitions"] = [*(job.get("partitions") or []), *page["items"]]
            after = page.get("next")
        job["partitionsNext"] = None
        return job

    def _request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        json: Any = None,
        headers: Mapping[str, str] | None = None,
        read_timeout: float | None = None,
    ) -> requests.Response:
        all_headers = {"Accept": "application/json", **(headers or {})}
        if self._token:
            all_headers["Authorization"] = f"Bearer {self._token}"
        url = self.url + path
        attempt = 0
        while True:
            attempt += 1
            try:
                response = self._session.request(
                    method,
                    url,
                    params=params,
                    json=json,
                    headers=all_headers,
                    timeout=(self._timeout, read_timeout or self._timeout),
                )
            except requests.RequestException as error:
                if attempt <= self._retries:
                    self._sleep(min(8.0, 0.25 * 2**attempt))
                    continue
                raise SegopsApiError(
                    f"segops at {self.url} did not answer {method} {path}: {error}"
                ) from error
            if response.status_code in _TRANSIENT and attempt <= self._retries:
                self._sleep(min(8.0, 0.25 * 2**attempt))
                continue
            if response.status_code >= 400:
                raise _problem_error(method, path, response)
            return response


def _seg(text: str) -> str:
    """A path segment: job ids hold '/' and other reserved characters."""
    return quote(text, safe="")


def _problem_error(method: str, path: str, response: requests.Response) -> SegopsApiError:
    problem: JsonObject = {}
    try:
        parsed = response.json()
        if isinstance(parsed, dict):
            problem = parsed
    except ValueError:
        pass
    title = problem.get("title") or response.reason or "error"
    detail = problem.get("detail") or response.text[:500]
    message = f"segops {method} {path}: {response.status_code} {title}: {detail}"
    errors = problem.get("errors")
    if isinstance(errors, list) and errors:
        fields = "; ".join(
            f"{e.get('path') or '(body)'}: {e.get('message')}" for e in errors if isinstance(e, dict)
        )
        if fields and fields not in message:
            message += f" ({fields})"
    return SegopsApiError(message, status=response.status_code, problem=problem)
