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

import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal, cast

from segops_client import (
    MAX_WAIT,
    AsyncSegopsClient,
    SegopsApiError,
    SegopsClient,
    job_ended,
    models,
    problem_message,
)

from segops_airflow._compat import AirflowException, BaseHook, aget_connection

__all__ = [
    "MAX_POLL_TIMEOUT",
    "JsonDict",
    "SegopsApiError",
    "SegopsAsyncHook",
    "SegopsHook",
    "SegopsSettings",
    "job_ended",
    "problem_message",
]

#: The operators keep the service's JSON as plain dicts (XCom-ready); segops' client types it inside.
JsonDict = dict[str, Any]
Kind = Literal["run", "backfill"]

MAX_POLL_TIMEOUT = MAX_WAIT
USER_AGENT = "airflow-provider-segops"
#: The most partitions one retry request may name (the service's limit).
RETRY_CHUNK = 1000


@dataclass(frozen=True)
class SegopsSettings:
    """What a connection says: where the service is, its token, and defaults from the extras."""

    base_url: str
    #: The API token: never in a repr or a message.
    token: str | None = field(repr=False)
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
        extra = _extras(conn.extra_dejson or {})
        verify: bool | str = extra.get("verify", True)
        if isinstance(verify, str) and verify.strip().lower() in ("true", "false", ""):
            verify = verify.strip().lower() != "false"
        defaults = {
            k: extra[k]
            for k in ("vars", "spec_version", "prefix", "min_rows", "max_unparseable")
            if extra.get(k) not in (None, "")
        }
        return cls(
            base_url=base,
            token=conn.password or None,
            druid_host=extra.get("druid_host") or None,
            request_timeout=_seconds(extra, "request_timeout", 30.0, conn.conn_id),
            poll_timeout=min(_seconds(extra, "poll_timeout", 60.0, conn.conn_id), MAX_POLL_TIMEOUT),
            verify=verify,
            defaults=defaults,
        )

    def client(self) -> SegopsClient:
        """segops' client for this connection: no retries of its own (a failed call fails the task, and
        Airflow's retries reattach), the long-poll's outages ridden out by `wait_until_ended`."""
        return SegopsClient(
            self.base_url,
            self.token,
            request_timeout=self.request_timeout,
            verify=self.verify,
            user_agent=USER_AGENT,
        )

    def async_client(self) -> AsyncSegopsClient:
        return AsyncSegopsClient(
            self.base_url,
            self.token,
            request_timeout=self.request_timeout,
            verify=self.verify,
            user_agent=USER_AGENT,
        )


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
        """The connection form for Airflow < 3.2 (later versions read the provider info's declaration)."""
        from segops_airflow.get_provider_info import UI_FIELD_BEHAVIOUR

        return {
            "hidden_fields": list(UI_FIELD_BEHAVIOUR["hidden-fields"]),
            "relabeling": dict(UI_FIELD_BEHAVIOUR["relabeling"]),
            "placeholders": dict(UI_FIELD_BEHAVIOUR["placeholders"]),
        }

    @cached_property
    def settings(self) -> SegopsSettings:
        return SegopsSettings.from_connection(self.get_connection(self.segops_conn_id))

    def get_conn(self) -> SegopsClient:
        return self.settings.client()

    @cached_property
    def _client(self) -> SegopsClient:
        return self.get_conn()

    # The API, route by route, through segops' client.

    def create(
        self, kind: str, body: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> tuple[JsonDict, bool]:
        """`POST /api/v1/runs` (kind "run") or `/api/v1/backfills`: (the whole job, whether it was created now).

        The same inputs name the same job: a repeated call answers 200 with that job, and nothing is
        submitted to Druid twice. A job whose changed partitions still run on the old input is answered as
        found running (the client reads segops' 409 `partitions-busy` so).
        """
        job, created = self._client.create(_kind(kind), _request(body), idempotency_key=idempotency_key)
        return _json(job), created

    def plan(self, kind: str, body: Mapping[str, Any]) -> JsonDict:
        """What the same request would create, nothing stored: the job id, each partition's interval and
        its input sources as segops renders them, the gates."""
        return _json(self._client.plan(_kind(kind), _request(body)))

    def get_job(self, job_id: str) -> JsonDict:
        """The job with every partition (a large job's are read a page at a time)."""
        return _json(self._client.get_whole_job(job_id))

    def wait(self, job_id: str, timeout: float | None = None) -> JsonDict:
        """One long-poll: `{ended, job}` as soon as the job ends, or `ended: false` after `timeout` s."""
        t = self.settings.poll_timeout if timeout is None else timeout
        return _json(self._client.wait(job_id, t))

    def wait_until_ended(
        self,
        job_id: str,
        *,
        timeout: float | None = None,
        poll_timeout: float | None = None,
        outage_timeout: float = 600.0,
        on_progress: Callable[[JsonDict], None] | None = None,
    ) -> JsonDict:
        """Long-polls until the job ends (then returns the whole job) or `timeout` s pass (then raises).

        While the service does not answer (a restart, a SIGTERM drain) it asks again with capped backoff,
        for at most `outage_timeout` s in a row.
        """
        ended, job = self._client.wait_until_ended(
            job_id,
            timeout=timeout,
            poll=self.settings.poll_timeout if poll_timeout is None else poll_timeout,
            outage_timeout=outage_timeout,
            on_progress=(lambda summary: on_progress(_json(summary))) if on_progress else None,
        )
        if not ended:
            raise SegopsApiError(
                f"segops job {job_id} did not end within {timeout:g} s; it keeps running (a retry of the task "
                "reattaches to it; `segops cancel` stops it)"
            )
        return _json(job)

    def cancel(self, job_id: str, *, shutdown: bool = False, reason: str | None = None) -> JsonDict:
        return _json(self._client.cancel_job(job_id, body=_cancel_body(shutdown, reason)))

    def retry(self, job_id: str, partitions: Sequence[str] | None = None) -> JsonDict:
        """Sends the job's failed, canceled and dead-lettered partitions back to run, or only `partitions`
        (partition ids, each failed or dead-lettered; segops sends none of a request back unless it can send
        all, and takes at most 1,000 a request)."""
        if partitions is None:
            return _json(self._client.retry_job(job_id))
        sent: list[str] = []
        for start in range(0, len(partitions), RETRY_CHUNK):
            chunk = list(partitions[start : start + RETRY_CHUNK])
            sent.extend(self._client.retry_job(job_id, body={"partitions": chunk})["sent"])
        return {"jobId": job_id, "sent": sent}

    def test_connection(self) -> tuple[bool, str]:
        """Airflow's "Test" button: the service is ready (ledger and Druid answer) and the token works."""
        try:
            ready = self._client.ready().body
            self._client.list_jobs(limit=1)
        except SegopsApiError as error:
            return False, str(error)
        if not ready["ready"]:
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
            self._settings = SegopsSettings.from_connection(await aget_connection(self, self.segops_conn_id))
        return self._settings

    async def get_job(self, job_id: str) -> JsonDict:
        async with (await self.get_settings()).async_client() as client:
            return _json(await client.get_whole_job(job_id))

    async def wait(self, job_id: str, timeout: float | None = None) -> JsonDict:
        s = await self.get_settings()
        async with s.async_client() as client:
            return _json(await client.wait(job_id, s.poll_timeout if timeout is None else timeout))

    async def cancel(self, job_id: str, *, shutdown: bool = False, reason: str | None = None) -> JsonDict:
        async with (await self.get_settings()).async_client() as client:
            return _json(await client.cancel_job(job_id, body=_cancel_body(shutdown, reason)))


#: The prefix a connection form's extra fields may carry in the extra (`extra__segops__druid_host`).
FORM_PREFIX = "extra__segops__"


def _extras(extra: Mapping[str, Any]) -> JsonDict:
    """The extra with the form's prefixed keys read as plain ones (a plain key wins); blank values dropped."""
    out: JsonDict = {}
    for key, value in extra.items():
        if value in (None, ""):
            continue
        plain = key.removeprefix(FORM_PREFIX)
        if plain not in out or key == plain:
            out[plain] = value
    return out


def _seconds(extra: Mapping[str, Any], key: str, default: float, conn_id: str | None) -> float:
    value = extra.get(key, default)
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = -1.0
    if seconds <= 0:
        raise AirflowException(
            f"segops connection {conn_id!r}: extra {key} must be a positive number of seconds, got {value!r}"
        )
    return seconds


def _kind(kind: str) -> Kind:
    if kind not in ("run", "backfill"):
        raise ValueError(f"kind must be 'run' or 'backfill', got {kind!r}")
    return cast(Kind, kind)


def _request(body: Mapping[str, Any]) -> models.RunRequest | models.BackfillRequest:
    # The operators build the body from their fields; the service checks it as it checks every request.
    return cast("models.RunRequest | models.BackfillRequest", dict(body))


def _cancel_body(shutdown: bool, reason: str | None) -> models.CancelRequest:
    body: models.CancelRequest = {"shutdown": shutdown}
    if reason:
        body["reason"] = reason[:500]
    return body


def _json(value: Mapping[str, Any]) -> JsonDict:
    return cast(JsonDict, value)
