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
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

from airflow.sdk import Asset, AssetAlias, BaseOperator, conf
from airflow.sdk.exceptions import AirflowException

from segops_airflow.assets.druid import druid_asset_uri, split_druid_uri
from segops_airflow.hooks.segops import (
    JsonDict,
    SegopsApiError,
    SegopsHook,
    job_ended,
)
from segops_airflow.template import Template, datasource_of, parse_template, partition_inputs
from segops_airflow.triggers.segops import DEFER_GRACE, SegopsJobTrigger

if TYPE_CHECKING:
    from airflow.sdk import Context

#: The gates segops applies to every partition, by their Python and API names.
GATE_NAMES = {
    "min_rows": "minRows",
    "minRows": "minRows",
    "max_unparseable": "maxUnparseable",
    "maxUnparseable": "maxUnparseable",
}


class SegopsJobFailed(AirflowException):
    """The segops job ended without every partition done; the message is segops' report."""

    def __init__(self, message: str, job: JsonDict) -> None:
        super().__init__(message)
        self.job = job


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


def failure_report(job: Mapping[str, Any]) -> list[str]:
    """One line per partition that is not done, each with segops' error, Druid's task and row counters."""
    lines = []
    for p in job.get("partitions") or []:
        if p.get("state") == "done":
            continue
        where = f"Druid task {p.get('druidTaskId')} ({p.get('druidState')})" if p.get("druidTaskId") else ""
        line = (
            f"partition {p.get('interval')}: {p.get('state')} after {p.get('attempts')} attempt(s)"
            f"{'; ' + where if where else ''}; error: {p.get('error') or '(none recorded)'}; "
            f"rows: {_row_stats(p.get('rowStats'))}"
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
        self.asset_alias = alias
        self.job_id: str | None = None
        self._job: JsonDict | None = None

    @cached_property
    def hook(self) -> SegopsHook:
        return SegopsHook(segops_conn_id=self.segops_conn_id)

    # The request.

    def _range_fields(self) -> JsonDict:
        raise NotImplementedError

    def request_body(self) -> JsonDict:
        """The run/backfill request: this task's fields over the connection's defaults."""
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
        body = self.request_body()
        job, created = self.hook.create(self.kind, body, idempotency_key=self._key(context))
        self.job_id = job_id = str(job["id"])
        context["ti"].xcom_push(key="job_id", value=job_id)
        if created:
            self.log.info("segops job %s created (%d partition(s))", job_id, len(job.get("partitions") or []))
        else:
            self.log.info(
                "segops job %s already exists (created %s, %s): same inputs, same job — reattached; "
                "no Druid task is submitted twice",
                job_id,
                job.get("createdAt"),
                job.get("state"),
            )
            if job_ended(job) and job.get("state") != "done" and (self.retry_failed or job.get("canceled")):
                sent = self.hook.retry(job_id).get("sent") or []
                self.log.info(
                    "segops job %s had ended %s%s: sent %d partition(s) back to run",
                    job_id,
                    job.get("state"),
                    " (canceled)" if job.get("canceled") else "",
                    len(sent),
                )
                if sent:
                    job = self.hook.get_job(job_id)
        for p in job.get("partitions") or []:
            self.log.info(
                "  %s: %s%s",
                p.get("interval"),
                p.get("state"),
                f" (Druid task {p['druidTaskId']})" if p.get("druidTaskId") else "",
            )
        if job_ended(job):
            return self._finish(context, job)
        if self.deferrable:
            self.log.info("deferring: the triggerer long-polls segops until job %s ends", job_id)
            self.defer(
                trigger=SegopsJobTrigger(
                    job_id=job_id,
                    segops_conn_id=self.segops_conn_id,
                    poll_timeout=self.poll_timeout,
                    outage_timeout=self.outage_timeout,
                    cancel_on_kill=self.cancel_on_kill,
                    shutdown_on_kill=self.shutdown_on_kill,
                    not_before=time.time() + self.defer_grace if self.defer_grace > 0 else None,
                ),
                method_name="execute_complete",
                timeout=dt.timedelta(seconds=self.wait_timeout) if self.wait_timeout else None,
            )
        final = self.hook.wait_until_ended(
            job_id,
            timeout=self.wait_timeout,
            poll_timeout=self.poll_timeout,
            outage_timeout=self.outage_timeout,
            on_progress=lambda j: self.log.info(
                "segops job %s: %s %s", job_id, j.get("state"), j.get("counts")
            ),
        )
        return self._finish(context, final)

    def execute_complete(self, context: Context, event: Mapping[str, Any]) -> Any:
        self.job_id = job_id = str(event.get("job_id"))
        if event.get("status") != "ended":
            raise SegopsApiError(f"waiting for segops job {job_id} failed: {event.get('message')}")
        return self._finish(context, self.hook.get_job(job_id))

    def _finish(self, context: Context, job: JsonDict) -> JsonDict:
        self._job = job
        summary = summarize(job)
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
            raise SegopsJobFailed(
                f"segops job {job['id']} {job.get('state')}: {len(failed)} of "
                f"{len(job.get('partitions') or [])} partition(s) not done; "
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
        self._emit_asset_event(context, job, summary)
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

    def _emit_asset_event(self, context: Context, job: JsonDict, summary: JsonDict) -> None:
        asset = self.druid_asset(job)
        if asset is None:
            self.log.warning("no asset event: the job names no datasource or Druid host")
            return
        extra = {
            "segops_job_id": summary["job_id"],
            "interval": summary["interval"],
            "versions": summary["versions"],
            "druid_task_ids": summary["druid_task_ids"],
            "rows": (job.get("totals") or {}).get("rows"),
        }
        events = context["outlet_events"]
        if any(o is asset for o in self.outlets):
            events[asset].extra.update(extra)  # a declared outlet: Airflow emits its event on success
        elif any(isinstance(o, AssetAlias) and o.name == self.asset_alias for o in self.outlets):
            events[AssetAlias(name=self.asset_alias)].add(asset, extra=extra)
        else:
            self.log.warning(
                "no asset event: neither %s nor the alias %s is an outlet", asset.uri, self.asset_alias
            )
            return
        self.log.info("asset event for %s", asset.uri)

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
            for n in partition_inputs(
                self.template, [p["interval"] for p in parts], options.get("vars") or {}, namespace
            )
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
        """The task was killed while waiting in the worker: cancel the segops job (and its Druid tasks)."""
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
    :param gates: `{"min_rows": N, "max_unparseable": N or "P%"}`.
    :param new: ingest again under new task ids once per task instance (a retry finds that job again).
    :param retry_failed: when the job these inputs name had already failed (or was canceled), send its
        failed partitions back to run instead of failing again at once.
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
