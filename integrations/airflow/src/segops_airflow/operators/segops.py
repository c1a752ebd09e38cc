"""Operators that run Druid ingestion through `segops serve`.

`SegopsIngestOperator` runs one partition (an interval, by default the DAG run's data interval) and
`SegopsBackfillOperator` a range, one partition per granularity bucket, in one task. Both:

1. create the job (`POST /api/v1/runs` / `/backfills`). The same inputs name the same job, so an Airflow
   retry, a cleared task or a rerun DAG run reattaches to the job instead of ingesting twice (segops pins
   the Druid task ids; nothing is submitted twice);
2. defer to `SegopsJobTrigger`, which long-polls the service from the triggerer (no worker slot is held
   while Druid works) — or, with `deferrable=False`, long-poll from the worker through the same API;
3. succeed when segops says the job is done (Druid SUCCESS, the data handed off and served, the version
   audit passed, the data gates met), pushing the Druid task ids, versions and a summary to XCom and an
   asset event for `druid://<host>/<datasource>`; or fail with segops' report (Druid's errorMsg or the data
   gate's reason, the row counters, the first parse errors) in the task log.

Each request carries the input's version (`source_version`, see `segops_airflow.source_version`): the same
version reattaches to what was ingested from it, another one ingests the partition again. A job answered
done from the same source changed nothing in Druid, and the task emits no asset event for it.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

from segops_airflow._compat import (
    AIRFLOW_3,
    AirflowException,
    AirflowFailException,
    AirflowTaskTimeout,
    Asset,
    AssetAlias,
    BaseOperator,
    conf,
)
from segops_airflow.assets.druid import druid_asset_uri, split_druid_uri
from segops_airflow.hooks.segops import (
    JsonDict,
    SegopsApiError,
    SegopsHook,
    job_ended,
)
from segops_airflow.source_version import resolve_source_version
from segops_airflow.template import InputName, Template, datasource_of, input_names, parse_template
from segops_airflow.triggers.segops import DEFER_GRACE, SegopsJobTrigger

if TYPE_CHECKING:
    from segops_airflow._compat import Context

#: The gates segops applies to every partition, by their Python and API names.
GATE_NAMES = {
    "min_rows": "minRows",
    "minRows": "minRows",
    "max_unparseable": "maxUnparseable",
    "maxUnparseable": "maxUnparseable",
}


#: What segops' outcome of a partition that ended without being done means (others are named as they are).
OUTCOMES = {
    "rolled-back": "the replace failed its data gates after Druid published it and was undone; the data "
    "live before is served again",
    "refused-empty": "its input yields no rows and would have emptied live data; nothing was submitted "
    "(allow_empty=True lets it)",
}
#: Outcomes the same input can only repeat: sending such a partition back to run would ingest the same
#: input again (a rolled-back replace would replace the live data a second time, then be undone again).
#: They run again when the input changes (a new source version) or, for an empty input, with allow_empty.
FINAL_ON_SAME_INPUT = frozenset(OUTCOMES)
#: The task state key that says an asset event is owed for a job (work started, not yet reported).
PENDING_EVENT_KEY = "segops_asset_event_owed"
#: The `next_method` with which Airflow resumes a deferred task only to fail it (a trigger timeout or error).
TRIGGER_FAIL = "__fail__"
#: How often a task that found its job running asks segops again once it ended (see `_ended`).
MAX_CONFIRMATIONS = 3


class SegopsJobFailed(AirflowException):
    """The segops job ended without every partition done; the message is segops' report.

    `outcomes` lists the segops outcomes of the partitions that are not done (e.g. `rolled-back`,
    `refused-empty`), the ones segops gave.
    """

    def __init__(self, message: str, job: JsonDict) -> None:
        super().__init__(message)
        self.job = job
        self.outcomes = [
            str(p["outcome"])
            for p in job.get("partitions") or []
            if p.get("state") != "done" and p.get("outcome")
        ]


class SegopsJobFailedOnInput(SegopsJobFailed, AirflowFailException):
    """The job failed in a way the same input can only repeat: a partition dead-lettered by segops' poison
    rule (it failed the same deterministic way `--poison-after` times), rolled back by a data gate or
    refused as empty. Airflow does not retry it (an `AirflowFailException`): segops' own attempts were the
    retries, so the input costs at most `--poison-after` Druid attempts. A changed input (a new file, a new
    `source_version`) runs again when the task is cleared."""


class SegopsRequestRefused(AirflowFailException):
    """segops refused the request (400/409/413/422: a field no retry can fix); the message names it."""


#: HTTP statuses of a refused request that a retry of the same request can only repeat.
TRANSIENT_STATUSES = frozenset({408, 425, 429})


def _deterministic(partition: Mapping[str, Any]) -> bool:
    """A partition that did not end done in a way the same input can only repeat."""
    return partition.get("state") == "dead" or partition.get("outcome") in FINAL_ON_SAME_INPUT


def _gates(gates: Mapping[str, Any] | None) -> JsonDict:
    out: JsonDict = {}
    for key, value in (gates or {}).items():
        if key not in GATE_NAMES:
            raise ValueError(f"unknown gate {key!r}; segops' gates are min_rows and max_unparseable")
        out[GATE_NAMES[key]] = value
    return out


def summarize(job: Mapping[str, Any]) -> JsonDict:
    """What goes to XCom: the job's identity, outcome and per-partition facts (JSON)."""
    parts = job.get("partitions") or []
    options = job.get("options") or {}
    return {
        "job_id": job.get("id"),
        "kind": job.get("kind"),
        "state": job.get("state"),
        "datasource": options.get("datasource"),
        "interval": options.get("range"),
        "counts": job.get("counts"),
        "totals": job.get("totals"),
        "druid_task_ids": [p["druidTaskId"] for p in parts if p.get("druidTaskId")],
        "versions": sorted({p["version"] for p in parts if p.get("version")}),
        "partitions": [
            {
                k: p.get(k)
                for k in (
                    "interval",
                    "state",
                    "attempts",
                    "druidTaskId",
                    "druidState",
                    "version",
                    "rows",
                    "segments",
                    "bytes",
                    "rowStats",
                    "error",
                    "outcome",
                )
            }
            for p in parts
        ],
    }


def _row_stats(stats: Mapping[str, Any] | None) -> str:
    if not stats:
        return "no row counters"
    return (
        f"processed {stats.get('processed')}, with errors {stats.get('processedWithError')}, "
        f"unparseable {stats.get('unparseable')}, thrown away {stats.get('thrownAway')}"
    )


def outcome_text(outcome: str | None) -> str:
    """`, outcome rolled-back (what it means)` for a partition's segops outcome, "" for none."""
    if not outcome:
        return ""
    meaning = OUTCOMES.get(outcome)
    return f", outcome {outcome}" + (f" ({meaning})" if meaning else "")


def failure_report(job: Mapping[str, Any]) -> list[str]:
    """One line per partition that is not done, each with segops' outcome and error, Druid's task and row
    counters."""
    lines = []
    for p in job.get("partitions") or []:
        if p.get("state") == "done":
            continue
        where = f"Druid task {p.get('druidTaskId')} ({p.get('druidState')})" if p.get("druidTaskId") else ""
        line = (
            f"partition {p.get('interval')}: {p.get('state')}{outcome_text(p.get('outcome'))} after "
            f"{p.get('attempts')} attempt(s){'; ' + where if where else ''}; "
            f"error: {p.get('error') or '(none recorded)'}; rows: {_row_stats(p.get('rowStats'))}"
        )
        errors = p.get("parseErrors") or []
        if errors:
            line += "; first parse errors: " + " | ".join(str(e) for e in errors[:3])
        lines.append(line)
    return lines


class _SegopsJobOperator(BaseOperator):
    """What runs and backfills share: create the job, wait (deferred or not), report."""

    kind: ClassVar[str]
    ui_color = "#29b6f6"
    template_fields: Sequence[str] = (
        "vars",
        "spec_version",
        "source_version",
        "prefix",
        "idempotency_key",
        "template_name",
    )

    def __init__(
        self,
        *,
        template: Template,
        vars: Mapping[str, Any] | None = None,
        spec_version: str | None = None,
        source_version: str | None = None,
        allow_empty: bool = False,
        gates: Mapping[str, Any] | None = None,
        prefix: str | None = None,
        template_name: str | None = None,
        new: bool = False,
        idempotency_key: str | None = None,
        retry_failed: bool = True,
        segops_conn_id: str = SegopsHook.default_conn_name,
        deferrable: bool = conf.getboolean("operators", "default_deferrable", fallback=False),
        poll_timeout: float = 60.0,
        wait_timeout: float | None = None,
        outage_timeout: float = 600.0,
        defer_grace: float = DEFER_GRACE,
        cancel_on_kill: bool = True,
        shutdown_on_kill: bool = True,
        cancel_on_timeout: bool = False,
        datasource: str | None = None,
        druid_host: str | None = None,
        asset_alias: str | None = None,
        **kwargs: Any,
    ) -> None:
        if not isinstance(template, (Mapping, str)) or not template:
            raise ValueError("template must be the template object or its JSON/YAML/SQL text")
        self.template = template
        self.datasource = datasource or datasource_of(template)
        self.druid_host_override = druid_host
        outlets = list(kwargs.pop("outlets", None) or [])
        if druid_host and self.datasource and _druid_outlet(outlets, self.datasource) is None:
            # Declared at parse time: the dag-processor registers the asset (and downstream DAGs can
            # schedule on it) before any task emits an event for it.
            outlets.append(Asset(uri=druid_asset_uri(druid_host, self.datasource)))
        alias = asset_alias or f"segops:{self.datasource or 'druid'}"
        if (self.datasource is None or _druid_outlet(outlets, self.datasource) is None) and not any(
            isinstance(o, AssetAlias) and o.name == alias for o in outlets
        ):
            # The datasource or the host is known only at run time: the event goes through an alias.
            outlets.append(AssetAlias(name=alias))
        super().__init__(outlets=outlets, **kwargs)
        self.vars = dict(vars or {})
        self.spec_version = spec_version
        self.source_version = source_version
        self.allow_empty = allow_empty
        self.gates = _gates(gates)
        self.prefix = prefix
        self.template_name = template_name
        self.new = new
        self.idempotency_key = idempotency_key
        self.retry_failed = retry_failed
        self.segops_conn_id = segops_conn_id
        self.deferrable = deferrable
        self.poll_timeout = poll_timeout
        self.wait_timeout = wait_timeout
        self.outage_timeout = outage_timeout
        self.defer_grace = defer_grace
        self.cancel_on_kill = cancel_on_kill
        self.shutdown_on_kill = shutdown_on_kill
        self.cancel_on_timeout = cancel_on_timeout
        self.asset_alias = alias
        self.job_id: str | None = None
        self._job: JsonDict | None = None
        #: The source version this try sends (resolved from `source_version` and the context in execute).
        self._source_version: str | None = None
        #: Set when this try's `execution_timeout` passed: the job is left running (see `on_kill`).
        self._timed_out = False

    @cached_property
    def hook(self) -> SegopsHook:
        return SegopsHook(segops_conn_id=self.segops_conn_id)

    # The request.

    def _range_fields(self) -> JsonDict:
        raise NotImplementedError

    def request_body(self, context: Context | None = None) -> JsonDict:
        """The run/backfill request: this task's fields over the connection's defaults. With `context`, the
        source version is resolved first (`source_version` as rendered, else the default)."""
        if context is not None:
            self._source_version = resolve_source_version(self.source_version, context)
        defaults = self.hook.settings.defaults
        body: JsonDict = {"template": self.template, **self._range_fields()}
        variables = {**(defaults.get("vars") or {}), **self.vars}
        if variables:
            body["vars"] = {str(k): str(v) for k, v in variables.items()}
        spec_version = self.spec_version or defaults.get("spec_version")
        if spec_version:
            body["specVersion"] = str(spec_version)
        prefix = self.prefix or defaults.get("prefix")
        if prefix:
            body["prefix"] = prefix
        for api, key in (("minRows", "min_rows"), ("maxUnparseable", "max_unparseable")):
            value = self.gates.get(api, defaults.get(key))
            if value is not None:
                body[api] = value
        if self.template_name:
            body["templateName"] = self.template_name
        if self.new:
            body["new"] = True
        if self._source_version:
            body["sourceVersion"] = self._source_version
        if self.allow_empty:
            body["allowEmpty"] = True
        return body

    def _key(self, context: Context) -> str | None:
        if self.idempotency_key:
            return self.idempotency_key
        if not self.new:
            return None  # the inputs are the identity: no key needed
        # `new` ingests again under new task ids, once per task instance: retries find that job again.
        ti = context["ti"]
        return f"airflow/{ti.dag_id}/{ti.run_id}/{ti.task_id}/{ti.map_index}"

    # Execution.

    def execute(self, context: Context) -> Any:
        try:
            return self._execute(context)
        except AirflowTaskTimeout:
            # execution_timeout passed anywhere in this try (Airflow calls on_kill next): once the job
            # exists, it is left running for the next try unless cancel_on_timeout.
            if self.job_id and not self._timed_out:
                self._timed_out = True
                self._on_timeout(self.job_id)
            self._timed_out = True
            raise

    def _execute(self, context: Context) -> Any:
        try:
            body = self.request_body(context)
        except ValueError as error:
            raise SegopsRequestRefused(str(error)) from error  # the DAG's fault: no retry fixes it
        owed = _owed_job(context, self.log)
        try:
            job, created = self.hook.create(self.kind, body, idempotency_key=self._key(context))
        except SegopsApiError as error:
            if (
                error.status is not None
                and 400 <= error.status < 500
                and error.status not in TRANSIENT_STATUSES
            ):
                raise SegopsRequestRefused(f"segops refused the request (not retried): {error}") from error
            raise
        self.job_id = job_id = str(job["id"])
        context["ti"].xcom_push(key="job_id", value=job_id)
        source = (
            f"source version {self._source_version}" if self._source_version else "no source version given"
        )
        if created:
            self.log.info(
                "segops job %s created (%d partition(s); %s)",
                job_id,
                len(job.get("partitions") or []),
                source,
            )
        elif not job_ended(job):
            self.log.info(
                "segops job %s already exists and runs (created %s): same inputs, same job — reattached to "
                "the Druid work in flight, nothing submitted again (%s)",
                job_id,
                job.get("createdAt"),
                source,
            )
        else:
            self.log.info(
                "segops job %s already exists and ended %s (created %s): same inputs, same job (%s)",
                job_id,
                job.get("state"),
                job.get("createdAt"),
                source,
            )
            if job.get("state") != "done" and (self.retry_failed or job.get("canceled")):
                job = self._retry(job)
        for p in job.get("partitions") or []:
            self.log.info(
                "  %s: %s%s",
                p.get("interval"),
                p.get("state"),
                f" (Druid task {p['druidTaskId']})" if p.get("druidTaskId") else "",
            )
        if job_ended(job):
            fresh = created or owed == job_id
            if job.get("state") == "done" and not fresh:
                self.log.info(
                    "segops job %s was already done from the same source (%s): nothing submitted, the data in "
                    "Druid is unchanged, so no asset event is emitted",
                    job_id,
                    source,
                )
            elif job.get("state") == "done":
                self.log.info(
                    "segops job %s is done: an earlier try of this task instance started it and did not "
                    "report it, so its asset event is emitted now",
                    job_id,
                )
            return self._finish(context, job, fresh=fresh)
        # The job runs now for this task (created, planned anew for a changed source, sent back to run, or
        # found running): its asset event is owed until this task instance reports it, even by a later try.
        _set_owed(context, job_id, self.log)
        return self._wait(
            context, job_id, confirm=not created and not self.new, rounds=0, deadline=self._deadline(context)
        )

    def _deadline(self, context: Context) -> float | None:
        """Epoch seconds when this try's `execution_timeout` passes (from the try's start), if it has one.
        Airflow enforces `execution_timeout` in the worker only; the deferred wait is bounded by it here."""
        if self.execution_timeout is None:
            return None
        start = getattr(context["ti"], "start_date", None)
        began = start.timestamp() if isinstance(start, dt.datetime) else time.time()
        return began + self.execution_timeout.total_seconds()

    def _retry(self, job: JsonDict) -> JsonDict:
        """Sends an ended job's failed partitions back to run, except those that would only end the same way
        on the same input: dead-lettered by segops' poison rule (its attempts were the retries), rolled back
        or refused as empty — a job canceled by hand is sent back whole. A changed input needs no sending
        back: segops plans it anew by itself."""
        job_id = str(job["id"])
        if job.get("partitionsNext"):
            job = self.hook.get_job(job_id)  # every partition, for a job of more than a page
        failed = [p for p in job.get("partitions") or [] if p.get("state") != "done"]
        final = [p for p in failed if _deterministic(p)]
        if failed and len(final) == len(failed) and not job.get("canceled"):
            self.log.warning(
                "segops job %s ended %s and is not sent back to run: its partitions ended %s, which the same "
                "input (same source version) can only repeat. Fix the input (a changed local or http file "
                "is a new version by itself) or give it a new source_version, then clear the task; "
                "allow_empty=True empties an interval on purpose; `segops retry %s` forces another attempt",
                job_id,
                job.get("state"),
                ", ".join(sorted({str(p.get("outcome") or p.get("state")) for p in final})),
                job_id,
            )
            return job
        only: list[str] | None = None
        if final and not job.get("canceled"):
            only = [str(p["task"]) for p in failed if not _deterministic(p)]
            self.log.info(
                "segops job %s: %d partition(s) left as they ended (%s), which the same input can only repeat: %s",
                job_id,
                len(final),
                ", ".join(sorted({str(p.get("outcome") or p.get("state")) for p in final})),
                ", ".join(str(p.get("interval")) for p in final[:10]) + (" …" if len(final) > 10 else ""),
            )
        sent = self.hook.retry(job_id, only).get("sent") or []
        self.log.info(
            "segops job %s had ended %s%s: sent %d partition(s) back to run (new Druid attempts)",
            job_id,
            job.get("state"),
            " (canceled)" if job.get("canceled") else "",
            len(sent),
        )
        return self.hook.get_job(job_id) if sent else job

    def _wait(
        self, context: Context, job_id: str, *, confirm: bool, rounds: int, deadline: float | None = None
    ) -> Any:
        limits = [t for t in (self.wait_timeout, None if deadline is None else deadline - time.time()) if t]
        timeout = max(0.0, min(limits)) if limits else None
        if self.deferrable:
            self.log.info(
                "deferring: the triggerer long-polls segops until job %s ends%s",
                job_id,
                f" (at most {timeout:.0f} s)" if timeout is not None else "",
            )
            self.defer(
                trigger=SegopsJobTrigger(
                    job_id=job_id,
                    segops_conn_id=self.segops_conn_id,
                    poll_timeout=self.poll_timeout,
                    outage_timeout=self.outage_timeout,
                    cancel_on_kill=self.cancel_on_kill,
                    shutdown_on_kill=self.shutdown_on_kill,
                    not_before=time.time() + self.defer_grace if self.defer_grace > 0 else None,
                    echo={"confirm": confirm, "rounds": rounds, "deadline": deadline},
                ),
                method_name="execute_complete",
                # Airflow does not apply execution_timeout to a deferred task: the trigger's timeout does.
                timeout=dt.timedelta(seconds=timeout) if timeout is not None else None,
            )
        try:
            final = self.hook.wait_until_ended(
                job_id,
                timeout=self.wait_timeout,
                poll_timeout=self.poll_timeout,
                outage_timeout=self.outage_timeout,
                on_progress=lambda j: self.log.info(
                    "segops job %s: %s %s", job_id, j.get("state"), j.get("counts")
                ),
            )
        except AirflowTaskTimeout:
            if not self._timed_out:
                self._timed_out = True
                self._on_timeout(job_id)
            raise
        return self._ended(context, final, confirm=confirm, rounds=rounds, deadline=deadline)

    def _on_timeout(self, job_id: str) -> None:
        """This try's `execution_timeout` passed while the job runs: leave the Druid work for the next try
        to reattach to, unless `cancel_on_timeout`."""
        if self.cancel_on_timeout:
            result = self.hook.cancel(
                job_id, shutdown=self.shutdown_on_kill, reason="the Airflow task's execution_timeout passed"
            )
            self.log.warning(
                "execution_timeout passed: canceled segops job %s (cancel_on_timeout=True): %s",
                job_id,
                result,
            )
            return
        self.log.warning(
            "execution_timeout passed while segops job %s runs: the job and its Druid tasks keep running "
            "(cancel_on_timeout=False); the next try (retries) or a clear reattaches to it, nothing is "
            "submitted again. Cancel it with `segops cancel %s` if it is not wanted",
            job_id,
            job_id,
        )

    def resume_execution(self, next_method: str, next_kwargs: dict[str, Any] | None, context: Context) -> Any:
        if next_method == TRIGGER_FAIL and "timeout" in str((next_kwargs or {}).get("error", "")).lower():
            # The deferred wait outlived its timeout (execution_timeout or wait_timeout): Airflow stopped the
            # trigger, not the job (it calls no on_kill for a timeout). Airflow then fails the try.
            job_id = context["ti"].xcom_pull(task_ids=self.task_id, key="job_id")
            if job_id:
                self._on_timeout(str(job_id))
        return super().resume_execution(next_method, next_kwargs, context)

    def execute_complete(self, context: Context, event: Mapping[str, Any]) -> Any:
        self.job_id = job_id = str(event.get("job_id"))
        if event.get("status") != "ended":
            raise SegopsApiError(
                f"waiting for segops job {job_id} failed: {event.get('message')}; the job was not canceled and "
                "may still run (a retry of the task reattaches to it)"
            )
        self._source_version = resolve_source_version(self.source_version, context)
        echo = event.get("echo") or {}
        deadline = echo.get("deadline")
        return self._ended(
            context,
            self.hook.get_job(job_id),
            confirm=bool(echo.get("confirm")),
            rounds=int(echo.get("rounds") or 0),
            deadline=float(deadline) if deadline is not None else None,
        )

    def _ended(
        self, context: Context, job: JsonDict, *, confirm: bool, rounds: int, deadline: float | None = None
    ) -> Any:
        """The job this task waited for ended. When the task had found it running, it may have been
        running from another source version: segops leaves a partition that runs alone when a request with
        another version arrives (409 `partitions-busy`, which the hook reads as the job found running). Ask
        again with this task's inputs: a partition whose source differs is planned anew now, and waited for.
        """
        if confirm and rounds < MAX_CONFIRMATIONS:
            again, _ = self.hook.create(
                self.kind, self.request_body(context), idempotency_key=self._key(context)
            )
            if not job_ended(again):
                self.log.warning(
                    "segops job %s was already running when this task found it, and ended %s; asked again "
                    "with this task's inputs (%s), segops planned partitions anew: waiting for them",
                    job["id"],
                    job.get("state"),
                    f"source version {self._source_version}" if self._source_version else "no source version",
                )
                return self._wait(
                    context, str(again["id"]), confirm=True, rounds=rounds + 1, deadline=deadline
                )
        return self._finish(context, job, fresh=True)

    def _finish(self, context: Context, job: JsonDict, *, fresh: bool) -> JsonDict:
        """Reports the ended job. `fresh`: this task instance ran (or waited for) the work, so a done job's
        data is new in Druid and its asset event is emitted; otherwise the job was done from the same
        source before, nothing changed, and no event is emitted."""
        self._job = job
        summary = summarize(job)
        summary["source_version"] = self._source_version
        summary["unchanged"] = not fresh
        ti = context["ti"]
        ti.xcom_push(key="druid_task_ids", value=summary["druid_task_ids"])
        ti.xcom_push(key="versions", value=summary["versions"])
        if len(summary["versions"]) == 1:
            ti.xcom_push(key="version", value=summary["versions"][0])
        totals = job.get("totals") or {}
        if job.get("state") != "done":
            report = failure_report(job)
            self.log.error(
                "segops job %s ended %s%s: %s",
                job["id"],
                job.get("state"),
                " (canceled)" if job.get("canceled") else "",
                job.get("counts"),
            )
            for line in report:
                self.log.error("%s", line)
            failed = [p for p in job.get("partitions") or [] if p.get("state") != "done"]
            outcomes = sorted({str(p["outcome"]) for p in failed if p.get("outcome")})
            # Every partition ended the way the same input can only repeat: Airflow's retries would only
            # cost Druid attempts (and, with retry_failed, poison-after more each).
            final = bool(failed) and all(_deterministic(p) for p in failed) and not job.get("canceled")
            if final:
                self.log.error(
                    "not retried by Airflow: the same input can only end the same way; fix the input (or give "
                    "it a new source_version) and clear the task"
                )
            raise (SegopsJobFailedOnInput if final else SegopsJobFailed)(
                f"segops job {job['id']} {job.get('state')}: {len(failed)} of "
                f"{len(job.get('partitions') or [])} partition(s) not done"
                + (f" (outcome {', '.join(outcomes)})" if outcomes else "")
                + "; "
                + (report[0] if report else "no partition report"),
                job,
            )
        self.log.info(
            "segops job %s done and audited: %s rows, %s segments, %s bytes; versions %s; Druid tasks %s",
            job["id"],
            totals.get("rows"),
            totals.get("segments"),
            totals.get("bytes"),
            ", ".join(summary["versions"]),
            ", ".join(summary["druid_task_ids"]),
        )
        self._emit_asset_event(context, job, summary, fresh=fresh)
        _clear_owed(context, self.log)
        return summary

    # Assets and lineage.

    def druid_host(self, job: Mapping[str, Any]) -> str | None:
        """The host in `druid://` URIs: this task's `druid_host`, the connection's, else the job's Overlord."""
        host = self.druid_host_override or self.hook.settings.druid_host
        if host:
            return host
        cluster = (job.get("options") or {}).get("cluster") or {}
        return cluster.get("overlord") or cluster.get("coordinator") or cluster.get("broker")

    def druid_asset(self, job: Mapping[str, Any]) -> Asset | None:
        """The datasource's asset: a declared `druid://` outlet for it, else one named from the job."""
        datasource = (job.get("options") or {}).get("datasource") or self.datasource
        if not datasource:
            return None
        declared = _druid_outlet(self.outlets, str(datasource))
        if declared is not None:
            return declared
        host = self.druid_host(job)
        return Asset(uri=druid_asset_uri(host, str(datasource))) if host else None

    def _emit_asset_event(self, context: Context, job: JsonDict, summary: JsonDict, *, fresh: bool) -> None:
        asset = self.druid_asset(job)
        if asset is None:
            self.log.warning("no asset event: the job names no datasource or Druid host")
            return
        declared = any(o is asset for o in self.outlets)
        if not fresh:
            if declared:
                # Airflow emits an event for every declared outlet of a task that succeeds: the outlet is
                # withdrawn for this try, as the task updated nothing (the DAG keeps declaring it).
                self.outlets = [o for o in self.outlets if o is not asset]
            self.log.info("no asset event for %s: the data in Druid did not change", asset.uri)
            return
        extra = {
            "segops_job_id": summary["job_id"],
            "interval": summary["interval"],
            "versions": summary["versions"],
            "druid_task_ids": summary["druid_task_ids"],
            "rows": (job.get("totals") or {}).get("rows"),
            "source_version": self._source_version,
        }
        events = context["outlet_events"]
        if declared:
            events[asset].extra.update(extra)  # a declared outlet: Airflow emits its event on success
        elif any(isinstance(o, AssetAlias) and o.name == self.asset_alias for o in self.outlets):
            # Airflow 2.10 hashes an alias event's extra (frozenset of its items): lists go as tuples
            # (stored as JSON, they read back as lists all the same).
            hashable: Any = {k: tuple(v) if isinstance(v, list) else v for k, v in extra.items()}
            events[AssetAlias(name=self.asset_alias)].add(asset, extra=extra if AIRFLOW_3 else hashable)
        else:
            self.log.warning(
                "no asset event: neither %s nor the alias %s is an outlet", asset.uri, self.asset_alias
            )
            return
        self.log.info("asset event for %s", asset.uri)

    def _lineage_inputs(self, intervals: Sequence[str], druid_namespace: str | None) -> list[InputName]:
        """The datasets the partitions over `intervals` read: their input sources as segops renders them
        (the request planned again by the service, nothing stored), sorted, deduplicated."""
        try:
            plan = self.hook.plan(self.kind, self.request_body())
        except SegopsApiError as error:
            self.log.warning("no lineage inputs: segops could not plan the request again: %s", error)
            return []
        wanted = set(intervals)
        names: set[InputName] = set()
        for p in plan["partitions"]:
            if p["interval"] in wanted:
                for source in p["inputSources"]:
                    names.update(input_names(source, druid_namespace))
        return sorted(names)

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> Any:
        """Inputs: the spec's input sources of every partition; output: the datasource with its interval,
        version and row counts (OpenLineage provider ≥ 2)."""
        from airflow.providers.common.compat.openlineage.facet import OutputStatisticsOutputDatasetFacet
        from airflow.providers.openlineage.extractors import OperatorLineage
        from openlineage.client.event_v2 import InputDataset, OutputDataset
        from openlineage.client.generated.base_subset_dataset import (
            OutputSubsetOutputDatasetFacet,
            Partition,
            PartitionSubsetCondition,
        )
        from openlineage.client.generated.dataset_version_dataset import DatasetVersionDatasetFacet

        job = self._job
        if not job:
            return OperatorLineage()
        options = job.get("options") or {}
        asset = self.druid_asset(job)
        namespace = asset.uri.rsplit("/", 1)[0] if asset else None
        parts = job.get("partitions") or []
        inputs = [
            InputDataset(namespace=n.namespace, name=n.name)
            for n in self._lineage_inputs([p["interval"] for p in parts], namespace)
        ]
        outputs = []
        if asset is not None and namespace is not None:
            done = [p for p in parts if p.get("state") == "done"]
            versions = sorted({p["version"] for p in done if p.get("version")})
            output_facets: dict[str, Any] = {
                "outputStatistics": OutputStatisticsOutputDatasetFacet(
                    rowCount=sum(p.get("rows") or 0 for p in done),
                    size=sum(p.get("bytes") or 0 for p in done),
                ),
                "subset": OutputSubsetOutputDatasetFacet(
                    outputCondition=PartitionSubsetCondition(
                        partitions=[
                            Partition(dimensions={"__time": p["interval"]}, identifier=p.get("version"))
                            for p in done
                        ]
                    )
                ),
            }
            facets: dict[str, Any] = {}
            if len(versions) == 1:
                facets["version"] = DatasetVersionDatasetFacet(datasetVersion=versions[0])
            outputs.append(
                OutputDataset(
                    namespace=namespace,
                    name=str(options.get("datasource")),
                    facets=facets,
                    outputFacets=output_facets,
                )
            )
        return OperatorLineage(
            inputs=inputs,
            outputs=outputs,
            run_facets={"segops": _segops_run_facet(job)},
        )

    def get_openlineage_facets_on_failure(self, task_instance: Any) -> Any:
        return self.get_openlineage_facets_on_complete(task_instance)

    def on_kill(self) -> None:
        """The task was killed while waiting in the worker: cancel the segops job (and its Druid tasks) —
        but not after an `execution_timeout` (Airflow calls `on_kill` then too), which `_on_timeout` handled."""
        if self._timed_out:
            return
        if self.job_id and self.cancel_on_kill:
            result = self.hook.cancel(
                self.job_id, shutdown=self.shutdown_on_kill, reason="the Airflow task was killed"
            )
            self.log.info("canceled segops job %s: %s", self.job_id, result)


def _druid_outlet(outlets: Sequence[Any], datasource: str) -> Asset | None:
    """The declared `druid://…/<datasource>` asset among `outlets`, if any (any host)."""
    for outlet in outlets:
        if isinstance(outlet, Asset) and outlet.uri.startswith("druid://"):
            try:
                if split_druid_uri(outlet.uri)[1] == datasource:
                    return outlet
            except ValueError:
                continue
    return None


def _owed_job(context: Context, log: Any) -> str | None:
    """The job an earlier try of this task instance started and did not report (its asset event is owed).

    Kept in Airflow's task state (`context["task_state_store"]`, scoped to the task instance across its
    tries and clears); unreadable state is treated as none owed."""
    store = context.get("task_state_store")
    if store is None:
        return None
    try:
        value = store.get(PENDING_EVENT_KEY)
    except Exception as error:  # the state store is a refinement: never fail the task over it
        log.warning("could not read the task state %s: %s", PENDING_EVENT_KEY, error)
        return None
    return str(value["job_id"]) if isinstance(value, dict) and value.get("job_id") else None


def _set_owed(context: Context, job_id: str, log: Any) -> None:
    store = context.get("task_state_store")
    if store is None:
        return
    try:
        store.set(PENDING_EVENT_KEY, {"job_id": job_id})
    except Exception as error:
        log.warning("could not write the task state %s: %s", PENDING_EVENT_KEY, error)


def _clear_owed(context: Context, log: Any) -> None:
    store = context.get("task_state_store")
    if store is None:
        return
    try:
        store.delete(PENDING_EVENT_KEY)
    except Exception as error:
        log.warning("could not delete the task state %s: %s", PENDING_EVENT_KEY, error)


def _segops_run_facet(job: Mapping[str, Any]) -> Any:
    """A custom run facet with what segops knows about the run: job, Druid tasks, row counters."""
    import attr
    from airflow.providers.common.compat.openlineage.facet import RunFacet

    @attr.define
    class SegopsRunFacet(RunFacet):
        jobId: str
        state: str
        partitions: list[dict[str, Any]]

        @staticmethod
        def _get_schema() -> str:
            return "https://segops.invalid/spec/facets/1-0-0/SegopsRunFacet.json#/$defs/SegopsRunFacet"

    summary = summarize(job)
    return SegopsRunFacet(
        jobId=str(job.get("id")),
        state=str(job.get("state")),
        partitions=[
            {
                "interval": p["interval"],
                "state": p["state"],
                "druidTaskId": p["druidTaskId"],
                "version": p["version"],
                "rows": p["rows"],
                "rowStats": p["rowStats"],
                "error": p["error"],
            }
            for p in summary["partitions"]
        ],
    )


class SegopsIngestOperator(_SegopsJobOperator):
    """One segops partition over `interval` (default: the DAG run's data interval).

    :param template: the segops template — an `index_parallel` spec (object, or JSON/YAML text) or SQL
        text — with segops placeholders (`{{start:yyyy-MM-dd}}`, `{{var.NAME}}`…). Not rendered by Jinja
        (its `{{…}}` are segops'); pass Airflow values through `vars`.
    :param interval: ISO-8601 `START/END` (Jinja-templated).
    :param vars: template variables (`{{var.NAME}}`), Jinja-templated values.
    :param spec_version: bump to force new Druid task ids for an unchanged spec.
    :param source_version: the version of the input (Jinja-templated), e.g. an upstream run id, an asset
        event's id or a file's ETag, sent as segops' `sourceVersion`. The same version again reattaches to
        what was ingested from it (nothing is submitted, no asset event is emitted); another version
        ingests the partition again under a new Druid task id. Default (None): when the DAG run was
        triggered by asset events, a digest of the events it consumed
        (`segops_airflow.source_version.asset_events_version`); otherwise none is sent and segops
        fingerprints the inputs it can see (local files, http). A value that renders blank sends none.
    :param allow_empty: let a partition whose input yields no rows replace the live data (segops refuses
        it otherwise: outcome `refused-empty`). Part of the job's identity.
    :param gates: `{"min_rows": N, "max_unparseable": N or "P%"}`.
    :param new: ingest again under new task ids once per task instance (a retry finds that job again).
    :param retry_failed: when the job these inputs name had already failed (or was canceled), send its
        failed partitions back to run instead of failing again at once — unless every one of them ended
        `rolled-back` or `refused-empty`, which the same input can only repeat.
    :param deferrable: wait in the triggerer (default: `[operators] default_deferrable`).
    :param poll_timeout: seconds of one long-poll (≤ 300).
    :param wait_timeout: fail when the job has not ended after this many seconds (None: no limit).
    :param defer_grace: a deferred task resumes no sooner than this many seconds after deferring (default
        10): works around an Airflow 3.3 scheduler race that fails tasks resuming right after they deferred
        (apache/airflow#72716); 0 turns it off.
    :param cancel_on_kill / shutdown_on_kill: what a killed task does to the segops job and its Druid tasks.
    :param datasource: the datasource, when the template does not state it literally.
    :param druid_host: the Druid host for the `druid://<host>/<datasource>` asset. With it (and a datasource
        the template states), the asset is a declared outlet, registered when the DAG is parsed — the
        recommended setup. Without it the host comes from the connection's `druid_host` extra or the job's
        Overlord at run time, and the event goes through an `AssetAlias`. A `druid://` asset for the
        datasource in `outlets` is used as it is.
    :param asset_alias: the alias for run-time asset events (default `segops:<datasource>`).
    """

    kind = "run"
    template_fields: Sequence[str] = (*_SegopsJobOperator.template_fields, "interval")

    def __init__(
        self,
        *,
        template: Template,
        interval: str = "{{ data_interval_start | ts }}/{{ data_interval_end | ts }}",
        **kwargs: Any,
    ) -> None:
        super().__init__(template=template, **kwargs)
        self.interval = interval

    def _range_fields(self) -> JsonDict:
        start, sep, end = self.interval.partition("/")
        if sep and start.strip() and start.strip() == end.strip():
            raise ValueError(
                f"interval {self.interval!r} is empty. The DAG run's data interval has no length: Airflow 3 "
                "reads a cron `schedule` as CronTriggerTimetable (data_interval_start == data_interval_end); "
                'use schedule=CronDataIntervalTimetable("@daily", timezone="UTC") (or DeltaDataIntervalTimetable) '
                "(or set [scheduler] create_cron_data_intervals = True) for one segops partition per DAG run, "
                "or pass `interval` explicitly"
            )
        return {"interval": self.interval}


class SegopsBackfillOperator(_SegopsJobOperator):
    """A segops backfill of [`start`, `end`): one partition per `granularity` bucket (default: the spec's
    segmentGranularity), all in one task; segops admits partitions by Druid's free worker slots.
    Takes the parameters of `SegopsIngestOperator`, with `start`/`end`/`granularity` instead of `interval`.
    """

    kind = "backfill"
    template_fields: Sequence[str] = (*_SegopsJobOperator.template_fields, "start", "end", "granularity")

    def __init__(
        self,
        *,
        template: Template,
        start: str = "{{ data_interval_start | ts }}",
        end: str = "{{ data_interval_end | ts }}",
        granularity: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(template=template, **kwargs)
        self.start = start
        self.end = end
        self.granularity = granularity

    def _range_fields(self) -> JsonDict:
        if self.start.strip() == self.end.strip():
            raise ValueError(
                f"start and end are both {self.start!r}: the DAG run's data interval is empty (a cron "
                "schedule is CronTriggerTimetable in Airflow 3; use CronDataIntervalTimetable) — pass start/end"
            )
        fields: JsonDict = {"from": self.start, "to": self.end}
        if self.granularity:
            fields["granularity"] = self.granularity
        return fields


__all__ = [
    "SegopsBackfillOperator",
    "SegopsIngestOperator",
    "SegopsJobFailed",
    "failure_report",
    "parse_template",
    "summarize",
]
