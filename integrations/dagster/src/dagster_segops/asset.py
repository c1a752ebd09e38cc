"""A factory for partitioned Dagster assets materialised by segops.

Materialising a partition key runs one segops run over the key's time window; a run over a range of keys
(Dagster's single-run backfill policy) is one segops backfill, one segops partition per key. segops names
the job after its inputs, so a retry, a re-execution or a re-materialisation of the same key reattaches to
the same job and Druid is not asked to ingest twice. Each request carries the version of the input (the
`source_version` run config, or by default a digest of the upstream assets' data versions): the same
version reattaches to what was ingested from it, another one ingests the partition again. The asset's
blocking checks report segops' answers per partition key: handoff (done: SUCCESS and served), one live
version per time chunk (the audit, read when the check runs) and the row-quality gate (segops' verdict on
Druid's row counters under the job's gates, read from the service).
"""

import hashlib
import json
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, cast
from urllib.parse import quote

from dagster import (
    AssetCheckEvaluation,
    AssetCheckKey,
    AssetCheckResult,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetExecutionContext,
    AssetKey,
    AssetMaterialization,
    AssetsDefinition,
    BackfillPolicy,
    BetaWarning,
    Config,
    DagsterInvariantViolationError,
    DataVersion,
    Failure,
    MaterializeResult,
    MetadataValue,
    Output,
    PreviewWarning,
    TimeWindowPartitionsDefinition,
    asset,
)
from dagster._core.definitions.data_version import DATA_VERSION_TAG
from pydantic import Field
from segops_client import SegopsApiError, SegopsClient, models

from ._compat import PARTITIONED_CHECKS
from .granularity import GranularityMismatch, granularity_for_windows

__all__ = [
    "CHECK_HANDOFF",
    "CHECK_LIVE_VERSION",
    "CHECK_ROW_QUALITY",
    "JobView",
    "SegopsAssetConfig",
    "segops_partitioned_asset",
    "upstream_source_version",
]

#: Handoff: every partition of the window is done (Druid SUCCESS, the version served over its interval).
CHECK_HANDOFF = "segops_handoff"
#: The version audit: exactly one live version per time chunk of the window, the one segops published.
CHECK_LIVE_VERSION = "segops_one_live_version"
#: The row-quality gate: segops' verdict on Druid's row counters under the job's gates.
CHECK_ROW_QUALITY = "segops_row_quality"

Window = tuple[datetime, datetime]

#: What segops' outcome of a partition that ended without being done means (others are named as they are).
OUTCOMES = {
    "rolled-back": "the replace failed its data gates after Druid published it and was undone; the data "
    "live before is served again",
    "refused-empty": "its input yields no rows and would have emptied live data; nothing was submitted "
    "(allow_empty lets it)",
}
#: Outcomes the same input can only repeat: `retry_failed` does not send such partitions back to run (a
#: rolled-back replace would replace the live data again before being undone again).
FINAL_ON_SAME_INPUT = frozenset(OUTCOMES)
#: segops' limit on a source version's length.
MAX_SOURCE_VERSION = 200
#: The prefix of the default source version (a digest of the upstream data versions).
UPSTREAM_PREFIX = "dagster-upstream:"
#: How often a step that found its job running asks segops again once it ended (see `_await`).
MAX_CONFIRMATIONS = 3
#: The most partitions one retry request may name (the service's limit).
RETRY_CHUNK = 1000


class SegopsAssetConfig(Config):
    """Run configuration of a segops asset (all optional)."""

    retry_failed: bool = Field(
        default=True,
        description=(
            "When the job these inputs name has failed (e.g. a Druid task ran out of resources), send "
            "its failed partitions back to run: materialising a failed partition again is asking for it to "
            "run again (as the Airflow provider does by default). Partitions the same input can only end the "
            "same way (dead-lettered by segops' poison rule, rolled-back, refused-empty) stay as they ended; "
            "a changed input is planned anew by segops by itself. false: fail at once with the job's reasons"
        ),
    )
    new: bool = Field(
        default=False,
        description=(
            "Ingest again under new Druid task ids although the same inputs were ingested before (segops' "
            "`new`); a retry of the same Dagster run still reattaches (the run id is the Idempotency-Key)"
        ),
    )
    source_version: str | None = Field(
        default=None,
        description=(
            "The version of the input for this materialisation (an upstream run id, a file's ETag, ...), "
            "sent as segops' `sourceVersion`: the same version reattaches to what was ingested from it, "
            "another one ingests the partitions again. Default: a digest of the upstream assets' data "
            "versions for the partitions (and the asset's code version), when Dagster has any; otherwise "
            "none, and segops fingerprints the inputs it can see (local files, http)"
        ),
    )
    allow_empty: bool = Field(
        default=False,
        description=(
            "Let a partition whose input yields no rows replace the live data (segops refuses it otherwise, "
            "outcome `refused-empty`); a different segops job from the one without it"
        ),
    )


@dataclass(frozen=True)
class JobView:
    """A job as the service answers it (every partition read), with the fields the asset reads."""

    raw: models.Job
    #: True when the request created it (201); False when the same inputs named an existing job (200).
    created: bool = field(default=False)

    @property
    def id(self) -> str:
        return self.raw["id"]

    @property
    def kind(self) -> str:
        return self.raw["kind"]

    @property
    def state(self) -> str:
        """``open``, ``done`` (every partition handed off and audited) or ``failed``."""
        return self.raw["state"]

    @property
    def counts(self) -> Mapping[str, int]:
        # Every value of StateCounts is an int; mypy reads a TypedDict's values as object.
        return cast(Mapping[str, int], self.raw["counts"])

    @property
    def partitions(self) -> list[dict[str, Any]]:
        return [dict(p) for p in self.raw["partitions"]]

    @property
    def datasource(self) -> str | None:
        ds = self.raw["options"].get("datasource")
        return str(ds) if ds is not None else None

    @property
    def ended(self) -> bool:
        """No partition can run any more."""
        counts = self.counts
        return not any(counts.get(s, 0) for s in ("new", "running", "suspended"))


def segops_partitioned_asset(
    *,
    name: str,
    template: Mapping[str, Any] | str,
    partitions_def: TimeWindowPartitionsDefinition,
    vars: Mapping[str, str] | None = None,
    spec_version: str | None = None,
    prefix: str | None = None,
    max_unparseable: int | str | None = None,
    min_rows: int | None = None,
    poison_after: int | None = None,
    max_concurrency: int | None = None,
    template_name: str | None = None,
    allow_empty: bool = False,
    backfill_policy: BackfillPolicy | None = None,
    backfill_granularity: str | None = None,
    wait_timeout_s: float | None = 6 * 3600.0,
    poll_s: float = 60.0,
    resource_key: str = "segops",
    source_version: Callable[[AssetExecutionContext], str | None] | None = None,
    key_prefix: str | Sequence[str] | None = None,
    description: str | None = None,
    **asset_kwargs: Any,
) -> AssetsDefinition:
    """A partitioned asset whose partition keys are ingested into Druid by segops.

    Args:
        name: The asset's name (with ``key_prefix``, its key).
        template: The segops template: an ``index_parallel`` spec with placeholders (``{{interval}}``,
            ``{{start:yyyy-MM-dd}}``, ``{{var.NAME}}``), as a dict or JSON/YAML text. Its
            ``segmentGranularity`` should bucket time as ``partitions_def`` does (segops refuses a window
            that is not aligned to it).
        partitions_def: Any time-window partitions (daily, hourly, weekly, monthly, a cron schedule), in
            any time zone.
        vars: Template variables (``{{var.NAME}}``).
        spec_version: Bump to force new Druid task ids for an unchanged template.
        prefix: Druid task id prefix (segops' default ``segops``).
        max_unparseable: Rows with a parse error a partition may have: a count, or a percentage like
            ``"0.5%"`` (segops' default 0).
        min_rows: Fewest rows a partition must ingest (an empty day then fails).
        poison_after: Dead-letter a partition after this many same-class failures (segops' default 3).
        max_concurrency: Partitions of one backfill in flight at once.
        template_name: Shown in segops' reports (default ``dagster:<asset key>``).
        allow_empty: Let a partition whose input yields no rows replace the live data (segops refuses it
            otherwise: outcome ``refused-empty``). The run config's ``allow_empty`` sets it for one run.
        backfill_policy: Default ``BackfillPolicy.single_run()``: a backfill of many keys is one Dagster
            run and one segops backfill. ``BackfillPolicy.multi_run(n)`` works too (runs of up to ``n``
            keys, each one segops backfill).
        backfill_granularity: The segops granularity for a run of several keys; default: derived from
            the partition windows (and proven to reproduce them before anything is created).
        wait_timeout_s: Longest wait for the job to end; then the step fails and a retry reattaches.
            ``None``: no limit.
        poll_s: Length of each long-poll of the service (at most 300).
        resource_key: The :class:`~dagster_segops.SegopsResource`'s key.
        source_version: The version of the input for a step, asked of this callable with the step's
            context (``context.partition_keys``, ``context.instance``, the run's tags, ...): an object
            store's ETags, a table's snapshot id. None or blank: none. The run config's ``source_version``
            wins over it; it wins over the default (`upstream_source_version`).
        **asset_kwargs: Passed to ``@asset`` (``group_name``, ``deps``, ``pool``, ``owners``, ``tags``,
            ``retry_policy``, ...).
    """
    source_version_fn = source_version
    if not isinstance(partitions_def, TimeWindowPartitionsDefinition):
        raise TypeError("segops_partitioned_asset needs time-window partitions (daily, hourly, a cron, ...)")
    if isinstance(key_prefix, str):
        key_prefix = [key_prefix]
    asset_key = AssetKey([*(key_prefix or []), name])
    base_body: dict[str, Any] = {
        "template": dict(template) if isinstance(template, Mapping) else template,
        "templateName": template_name or f"dagster:{asset_key.to_user_string()}",
    }
    optional = {
        "vars": dict(vars) if vars else None,
        "specVersion": spec_version,
        "prefix": prefix,
        "maxUnparseable": max_unparseable,
        "minRows": min_rows,
        "poisonAfter": poison_after,
        "maxConcurrency": max_concurrency,
    }
    base_body.update({k: v for k, v in optional.items() if v is not None})
    check_specs = [
        _check_spec(check_name, asset_key, text, partitions_def)
        for check_name, text in (
            (CHECK_HANDOFF, "segops handed the partition off: Druid SUCCESS and the version served"),
            (
                CHECK_LIVE_VERSION,
                "The version audit: one live version per time chunk, the one segops published",
            ),
            (CHECK_ROW_QUALITY, "Druid's row counters within max_unparseable and min_rows"),
        )
    ]
    kinds = set(asset_kwargs.pop("kinds", None) or {"druid"})

    def _segops_asset(context: AssetExecutionContext, config: SegopsAssetConfig) -> Iterator[Any]:
        client: SegopsClient = getattr(context.resources, resource_key).get_client()
        keys = list(context.partition_keys)
        windows = [_window(partitions_def, k) for k in keys]
        source_version = _source_version(context, config, source_version_fn)
        body = dict(base_body)
        if source_version:
            body["sourceVersion"] = source_version
        if allow_empty or config.allow_empty:
            body["allowEmpty"] = True
        request = _start(context, client, body, keys, windows, partitions_def, backfill_granularity, config)
        job = request.job
        unchanged = not job.created and job.ended and job.state == "done"
        if unchanged:
            context.log.info(
                f"segops job {job.id} was already done from the same source "
                f"({_source_text(source_version)}): nothing submitted; the materialisation reports the data "
                "already in Druid, under the same data version"
            )
        by_key = _partitions_by_key(client, job, keys, windows)
        job = _await(context, client, request, config, wait_timeout_s, poll_s)
        by_key = {k: _find(job, p["task"]) for k, p in by_key.items()}
        verdicts = _verdicts(client, job, keys, windows, by_key)
        metadata = {k: _partition_metadata(client, job, by_key[k]) for k in keys}
        for m in metadata.values():
            m["unchanged"] = unchanged
            if source_version:
                m["source_version"] = source_version

        if job.state != "done":
            done = [k for k in keys if by_key[k].get("state") == "done"]
            if len(keys) > 1:
                # A range runs in one step: the keys that are done are materialised now, each with its
                # own data version, so they count as materialised (and their downstream may run) although
                # the step fails for the others.
                for k in done:
                    yield AssetMaterialization(
                        asset_key=asset_key,
                        partition=k,
                        metadata=metadata[k],
                        tags={DATA_VERSION_TAG: _druid_data_version([by_key[k]]).value},
                    )
                if done:
                    context.log.info(
                        f"segops job {job.id}: {len(done)} of {len(keys)} partition(s) done and materialised "
                        f"({_keys_text(done)}); the step fails for the others"
                    )
            yield from _check_events(context, asset_key, keys, verdicts, single=len(keys) == 1)
            raise Failure(
                description=_failure_text(
                    job,
                    keys,
                    by_key,
                    found_failed=request.job.state == "failed",
                    retry_failed=config.retry_failed,
                ),
                metadata={
                    "segops_job_id": job.id,
                    "segops_job_state": job.state,
                    "failed_partitions": [k for k in keys if by_key[k].get("state") != "done"],
                    "outcomes": sorted(
                        {
                            str(by_key[k]["outcome"])
                            for k in keys
                            if by_key[k].get("state") != "done" and by_key[k].get("outcome")
                        }
                    ),
                    **({"source_version": source_version} if source_version else {}),
                },
                # The same inputs name the same ended job: a retry would fail the same way. Fix the input
                # and materialise again with `retry_failed: true`, or `segops retry JOB`.
                allow_retries=False,
            )

        # The data version is what Druid serves (segops' version and Druid task per partition): a
        # reattachment keeps it, so the assets downstream are not made stale by a change that did not happen.
        data_version = _druid_data_version([by_key[k] for k in keys])
        if len(keys) == 1:
            yield MaterializeResult(
                metadata=metadata[keys[0]],
                check_results=[_check_result(asset_key, name, verdicts[name][keys[0]]) for name in verdicts],
                data_version=data_version,
            )
            return
        for k in keys:
            context.add_asset_metadata(metadata[k], partition_key=k)
        yield MaterializeResult(metadata=_job_metadata(client, job), data_version=data_version)
        yield from _check_events(context, asset_key, keys, verdicts, single=False)

    with warnings.catch_warnings():
        # `backfill_policy` is marked beta in Dagster; the single-run policy is what makes a range one segops
        # backfill, and the suite runs on the oldest and newest Dagster supported, so a change shows there.
        warnings.filterwarnings("ignore", category=BetaWarning, message=r"Parameter `backfill_policy`")
        decorate = asset(
            name=name,
            key_prefix=list(key_prefix) if key_prefix else None,
            partitions_def=partitions_def,
            backfill_policy=backfill_policy if backfill_policy is not None else BackfillPolicy.single_run(),
            check_specs=check_specs,
            required_resource_keys={resource_key},
            description=description or f"Ingested into Druid by segops ({base_body['templateName']})",
            kinds=kinds,
            **asset_kwargs,
        )
        assets_def: AssetsDefinition = decorate(_segops_asset)
    return assets_def


def _check_spec(
    check_name: str, asset_key: AssetKey, description: str, partitions_def: TimeWindowPartitionsDefinition
) -> AssetCheckSpec:
    """A blocking check of the asset: one result per partition key where Dagster has partitioned checks
    (1.12+), one per step before."""
    if not PARTITIONED_CHECKS:
        return AssetCheckSpec(check_name, asset=asset_key, blocking=True, description=description)
    with warnings.catch_warnings():
        # Partitioned checks are marked preview in Dagster 1.12 and 1.13, and printed a PreviewWarning on
        # every command. They are what makes a check belong to its key (a range's bad day fails its own
        # checks, not the good days'); the suite runs on the Dagster versions the package allows.
        warnings.filterwarnings("ignore", category=PreviewWarning, message=r"Specifying a partitions_def")
        return AssetCheckSpec(
            check_name,
            asset=asset_key,
            blocking=True,
            description=description,
            partitions_def=partitions_def,
        )


# -- steps -----------------------------------------------------------------------------------------------


def _window(partitions_def: TimeWindowPartitionsDefinition, key: str) -> Window:
    w = partitions_def.time_window_for_partition_key(key)
    # In UTC: aware datetimes of one tzinfo compare and subtract as wall times in Python.
    return (w.start.astimezone(timezone.utc), w.end.astimezone(timezone.utc))


def _iso(instant: datetime) -> str:
    return instant.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def _interval(window: Window) -> str:
    return f"{_iso(window[0])}/{_iso(window[1])}"


def _parse_interval(text: str) -> Window:
    start, end = text.split("/")
    return (datetime.fromisoformat(start), datetime.fromisoformat(end))


@dataclass(frozen=True)
class _Request:
    """A run or backfill request as sent, and the job it named."""

    kind: str
    body: Mapping[str, Any]
    idempotency_key: str | None
    job: JobView

    def send_again(self, client: SegopsClient) -> JobView:
        return _create(client, self.kind, self.body, self.idempotency_key)


def _create(client: SegopsClient, kind: str, body: Mapping[str, Any], key: str | None) -> JobView:
    """The run or backfill ``body`` names (created, or found again; a busy one found running)."""
    job, created = client.create("run" if kind == "run" else "backfill", _request(body), idempotency_key=key)
    return JobView(job, created=created)


def _request(body: Mapping[str, Any]) -> models.RunRequest | models.BackfillRequest:
    # Built from the asset's arguments; the service checks it as it checks every request.
    return body  # type: ignore[return-value]


def _source_text(source_version: str | None) -> str:
    return f"source version {source_version}" if source_version else "no source version given"


def _source_version(
    context: AssetExecutionContext,
    config: SegopsAssetConfig,
    source_version_fn: Callable[[AssetExecutionContext], str | None] | None,
) -> str | None:
    """The run config's `source_version`, else the asset's `source_version` callable's answer (blank: none),
    else `upstream_source_version`."""
    if config.source_version is not None:
        return _checked_version(config.source_version, "the run config's source_version")
    if source_version_fn is not None:
        given = source_version_fn(context)
        if given is not None and not isinstance(given, str):
            raise Failure(
                description=(
                    f"the asset's source_version callable returned {type(given).__name__}; expected a string "
                    "(the input's version) or None"
                ),
                allow_retries=False,
            )
        return _checked_version(given or "", "the asset's source_version callable's answer")
    return upstream_source_version(context)


def _checked_version(text: str, what: str) -> str | None:
    text = text.strip()
    if len(text) > MAX_SOURCE_VERSION:
        raise Failure(
            description=(
                f"source_version is {len(text)} characters; segops takes at most {MAX_SOURCE_VERSION} "
                f"({what}): send a digest of a longer version"
            ),
            allow_retries=False,
        )
    return text or None


def upstream_source_version(context: AssetExecutionContext) -> str | None:
    """The default source version: a digest of the data versions Dagster has for the upstream assets'
    partitions this step reads (through the asset's partition mappings; the latest one for an unpartitioned
    upstream) and of the asset's code version, when it has one. None when no upstream has a data version
    and no code version is set: then segops fingerprints what it can see of the input itself.

    A re-materialisation after an upstream materialised (or observed) a new data version sends a new
    source version and ingests again; a retry, or a re-materialisation with nothing new upstream, sends
    the same one and reattaches.
    """
    assets_def = context.assets_def
    versions: dict[str, str | None] = {}
    for input_name, dep_key in sorted(assets_def.keys_by_input_name.items()):
        if dep_key == context.asset_key:
            continue
        try:
            context.asset_partitions_def_for_input(input_name)
            partitions: list[str | None] = list(context.asset_partition_keys_for_input(input_name))
        except DagsterInvariantViolationError:  # an unpartitioned upstream
            partitions = [None]
        for partition in partitions:
            record = context.instance.get_latest_data_version_record(dep_key, partition_key=partition)
            tags = record.event_log_entry.tags if record is not None else {}
            name = dep_key.to_user_string() + (f"[{partition}]" if partition is not None else "")
            versions[name] = (tags or {}).get(DATA_VERSION_TAG)
    code_version = assets_def.code_versions_by_key.get(context.asset_key)
    if not any(versions.values()) and code_version is None:
        return None
    identity = json.dumps({"code_version": code_version, "upstream": versions}, sort_keys=True)
    return UPSTREAM_PREFIX + hashlib.sha256(identity.encode()).hexdigest()[:32]


def _druid_data_version(partitions: Sequence[Mapping[str, Any]]) -> DataVersion:
    """What Druid serves for the partitions: each one's interval, segops version and Druid task."""
    parts = sorted(f"{p.get('interval')}={p.get('version')}@{p.get('druidTaskId')}" for p in partitions)
    return DataVersion(hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32])


def _start(
    context: AssetExecutionContext,
    client: SegopsClient,
    base_body: Mapping[str, Any],
    keys: Sequence[str],
    windows: Sequence[Window],
    partitions_def: TimeWindowPartitionsDefinition,
    backfill_granularity: str | None,
    config: SegopsAssetConfig,
) -> _Request:
    body = dict(base_body)
    key = None
    if config.new:
        body["new"] = True
        seed = f"{context.run_id}\n{context.assets_def.key.to_user_string()}\n{keys[0]}...{keys[-1]}"
        key = "dagster-" + hashlib.sha256(seed.encode()).hexdigest()[:40]
    try:
        if len(keys) == 1:
            kind = "run"
            body["interval"] = _interval(windows[0])
            job = _create(client, kind, body, key)
        else:
            kind = "backfill"
            try:
                granularity = backfill_granularity or granularity_for_windows(
                    client, body, windows, partitions_def.timezone
                )
            except GranularityMismatch as error:
                raise Failure(description=str(error), allow_retries=False) from error
            body.update({"from": _iso(windows[0][0]), "to": _iso(windows[-1][1]), "granularity": granularity})
            job = _create(client, kind, body, key)
    except SegopsApiError as error:
        # 4xx: the request itself is wrong (a template segops refuses, a misaligned window): no retry helps.
        retryable = error.status is None or error.status >= 500
        raise Failure(
            description=str(error), metadata=_problem_metadata(error), allow_retries=retryable
        ) from error
    what = "run" if len(keys) == 1 else f"backfill of {len(keys)} partitions"
    context.log.info(
        f"segops {what} {job.id} ({'created' if job.created else 'found again: same inputs, same job'}; "
        f"state {job.state}; {_source_text(body.get('sourceVersion'))})"
    )
    return _Request(kind, body, key, job)


def _partitions_by_key(
    client: SegopsClient, job: JobView, keys: Sequence[str], windows: Sequence[Window]
) -> dict[str, dict[str, Any]]:
    """Each key's segops partition, proven to cover exactly the key's window."""
    by_window = {_parse_interval(str(p["interval"])): p for p in job.partitions}
    out: dict[str, dict[str, Any]] = {}
    for k, w in zip(keys, windows, strict=True):
        p = by_window.get(w)
        if p is None:
            break
        out[k] = p
    if len(out) == len(keys) and len(job.partitions) == len(keys):
        return out
    got = ", ".join(str(p["interval"]) for p in job.partitions)
    want = ", ".join(_interval(w) for w in windows)
    if job.created:
        client.cancel_job(
            job.id, body={"shutdown": True, "reason": "dagster-segops: partitions do not match the asset's"}
        )
    raise Failure(
        description=(
            f"segops job {job.id} has partitions {got}, but the asset's keys are windows {want}: the "
            "granularity does not bucket time as the partitions definition does"
            + (" (the job was canceled)" if job.created else "")
        ),
        allow_retries=False,
    )


def _await(
    context: AssetExecutionContext,
    client: SegopsClient,
    request: _Request,
    config: SegopsAssetConfig,
    wait_timeout_s: float | None,
    poll_s: float,
) -> JobView:
    """Waits until the job ends. A job found running may be running from another source version: segops
    leaves a running partition alone when a request with another version arrives (409 `partitions-busy`,
    which the client reads as the job found running). So once it ends it is asked for again with this
    step's inputs, and
    whatever segops plans anew then is waited for too."""
    job = request.job

    def progress(summary: models.JobSummary) -> None:
        if summary["state"] != "open":
            return  # the end is reported with the whole job
        counts = {k: v for k, v in summary["counts"].items() if v}
        context.log.info(f"segops job {job.id}: {summary['state']} {counts}")

    confirm = not job.created and not job.ended and not config.new
    try:
        if job.ended and job.state == "failed" and config.retry_failed:
            _send_back(context, client, job)
        deadline = None if wait_timeout_s is None else time.monotonic() + wait_timeout_s
        for rounds in range(MAX_CONFIRMATIONS + 1):
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            # The step's own retries (and segops' idempotence) ride out an outage: fail at once.
            ended, whole = client.wait_until_ended(
                job.id, timeout=left, poll=poll_s, outage_timeout=None, on_progress=progress
            )
            job_now = JobView(whole)
            if not ended or not confirm or rounds == MAX_CONFIRMATIONS:
                break
            again = request.send_again(client)
            if again.ended:
                break
            context.log.warning(
                f"segops job {job.id} was already running when this step found it, and ended "
                f"{job_now.state}; asked again with this step's inputs "
                f"({_source_text(request.body.get('sourceVersion'))}), segops planned partitions anew: "
                "waiting for them"
            )
    except SegopsApiError as error:
        raise Failure(description=str(error), metadata=_problem_metadata(error)) from error
    if not ended:
        raise Failure(
            description=(
                f"segops job {job_now.id} has not ended after {wait_timeout_s:g} s ({job_now.counts}); it "
                "goes on in segops, and a retry reattaches to it"
            ),
            metadata={"segops_job_id": job_now.id},
            allow_retries=True,
        )
    return JobView(job_now.raw, created=job.created)


def _final(partition: Mapping[str, Any]) -> bool:
    """A partition that did not end done in a way the same input can only repeat: dead-lettered by segops'
    poison rule (its attempts were the retries), or an outcome such as rolled-back or refused-empty."""
    return partition.get("state") == "dead" or partition.get("outcome") in FINAL_ON_SAME_INPUT


def _send_back(context: AssetExecutionContext, client: SegopsClient, job: JobView) -> None:
    """Sends a failed job's partitions back to run, except those the same input can only repeat."""
    partitions = job.partitions
    if job.raw.get("partitionsNext"):
        partitions = [dict(p) for p in client.get_whole_job(job.id)["partitions"]]
    failed = [p for p in partitions if p.get("state") != "done"]
    final = [p for p in failed if _final(p)]
    why = ", ".join(sorted({str(p.get("outcome") or p.get("state")) for p in final}))
    if failed and len(final) == len(failed):
        context.log.warning(
            f"segops job {job.id} is not sent back to run: its partitions ended {why}, which the same input "
            "(same source version) can only repeat; give the changed input a new source_version (or "
            f"allow_empty to empty a window on purpose), or `segops retry {job.id}` to force new attempts"
        )
        return
    again = [str(p["task"]) for p in failed if not _final(p)]
    sent: list[str] = []
    # segops takes at most RETRY_CHUNK named partitions a request; none is named when all are sent back.
    for start in range(0, len(again), RETRY_CHUNK) if final else [None]:
        body: models.RetryRequest | None = (
            {"partitions": again[start : start + RETRY_CHUNK]} if start is not None else None
        )
        sent.extend(client.retry_job(job.id, body=body)["sent"])
    kept = f"; {len(final)} left as they ended ({why})" if final else ""
    context.log.info(f"segops job {job.id} had failed: {len(sent)} partition(s) sent back to run{kept}")


def _find(job: JobView, task: str) -> dict[str, Any]:
    for p in job.partitions:
        if p["task"] == task:
            return p
    raise Failure(description=f"segops job {job.id} no longer lists its partition {task}")


# -- checks ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Verdict:
    passed: bool
    description: str
    metadata: Mapping[str, Any]


def _verdicts(
    client: SegopsClient,
    job: JobView,
    keys: Sequence[str],
    windows: Sequence[Window],
    by_key: Mapping[str, Mapping[str, Any]],
) -> dict[str, dict[str, _Verdict]]:
    handoff: dict[str, _Verdict] = {}
    quality: dict[str, _Verdict] = {}
    try:
        gates: dict[str, models.PartitionGates] | SegopsApiError = {
            g["task"]: g for g in client.gates(job.id)
        }
    except SegopsApiError as error:
        gates = error
    for k in keys:
        p = by_key[k]
        done = p.get("state") == "done"
        handoff[k] = _Verdict(
            done,
            f"handed off: version {p.get('version')} served over {p.get('interval')}"
            if done
            else (
                f"not handed off: the partition is {p.get('state')}{_outcome_text(p.get('outcome'))}: "
                f"{p.get('error') or 'no error'}"
            ),
            {
                "state": str(p.get("state")),
                "druid_task_id": str(p.get("druidTaskId")),
                "druid_state": str(p.get("druidState")),
            },
        )
        quality[k] = _quality_verdict(p, gates)
    live = _live_version_verdicts(client, job, keys, windows, by_key)
    return {CHECK_HANDOFF: handoff, CHECK_LIVE_VERSION: live, CHECK_ROW_QUALITY: quality}


def _quality_verdict(
    p: Mapping[str, Any], gates: Mapping[str, models.PartitionGates] | SegopsApiError
) -> _Verdict:
    """segops' verdict on the partition's row counters under its job's gates (the runner's own rule)."""
    stats = p.get("rowStats") or {}
    metadata: dict[str, Any] = {f"rows_{name}": int(v) for name, v in stats.items()}
    if p.get("parseErrors"):
        metadata["parse_errors"] = list(p["parseErrors"])[:5]
    if isinstance(gates, SegopsApiError):
        return _Verdict(False, f"segops' gate verdict could not be read: {gates}", metadata)
    answer = gates.get(str(p["task"]))
    if answer is None or answer["gates"] is None or answer["passed"] is None:
        return _Verdict(False, "segops gives this partition no data gates", metadata)
    metadata["max_unparseable"] = answer["gates"]["maxUnparseable"]
    metadata["min_rows"] = answer["gates"]["minRows"]
    if answer["passed"]:
        return _Verdict(True, "row counters within the gates", metadata)
    return _Verdict(False, answer["verdict"] or "the row counters fail the gates", metadata)


def _live_version_verdicts(
    client: SegopsClient,
    job: JobView,
    keys: Sequence[str],
    windows: Sequence[Window],
    by_key: Mapping[str, Mapping[str, Any]],
) -> dict[str, _Verdict]:
    datasource = job.datasource
    if datasource is None:
        return {k: _Verdict(False, "the job names no datasource to audit", {}) for k in keys}
    span = (windows[0][0], windows[-1][1])
    try:
        audit = client.audit_datasource(datasource=datasource, interval=_interval(span))
    except SegopsApiError as error:
        return {k: _Verdict(False, f"the audit could not run: {error}", {}) for k in keys}
    chunks = [(_parse_interval(c["interval"]), list(c["liveVersions"])) for c in audit["chunks"]]
    violations: list[dict[str, Any]] = [dict(v) for v in audit["violations"]]
    out: dict[str, _Verdict] = {}
    for k, (start, end) in zip(keys, windows, strict=True):
        p = by_key[k]
        mine = [(w, versions) for w, versions in chunks if w[0] < end and w[1] > start]
        versions = sorted({v for _, versions in mine for v in versions})
        bad = [v for v in violations if _violation_overlaps(v, start, end)]
        metadata = {
            "chunks": len(mine),
            "live_versions": versions,
            "expected_version": str(p.get("version")),
            **({"violations": bad[:10]} if bad else {}),
        }
        if bad:
            out[k] = _Verdict(False, f"audit violations: {_violations_text(bad)}", metadata)
        elif any(len(vs) > 1 for _, vs in mine):
            doubled = [f"{_interval(w)}: {', '.join(vs)}" for w, vs in mine if len(vs) > 1]
            out[k] = _Verdict(False, f"more than one live version: {'; '.join(doubled)}", metadata)
        elif p.get("state") != "done":
            out[k] = _Verdict(False, f"nothing of this partition to audit: it is {p.get('state')}", metadata)
        elif not mine or not versions:
            empty = (p.get("rows") or 0) == 0
            out[k] = _Verdict(
                empty,
                "no live segments (the partition ingested no rows)"
                if empty
                else f"no live version over {_interval((start, end))}",
                metadata,
            )
        elif versions != [str(p.get("version"))]:
            out[k] = _Verdict(
                False, f"the live version is {', '.join(versions)}, not segops' {p.get('version')}", metadata
            )
        else:
            out[k] = _Verdict(True, f"one live version per chunk: {versions[0]}", metadata)
    return out


def _violation_overlaps(violation: Mapping[str, Any], start: datetime, end: datetime) -> bool:
    """Whether a violation is about this window (one naming no time chunk is about every window)."""
    interval = violation.get("chunk", violation.get("interval"))
    if not isinstance(interval, str) or "/" not in interval:
        return True
    w = _parse_interval(interval)
    return w[0] < end and w[1] > start


def _violations_text(violations: Sequence[Mapping[str, Any]]) -> str:
    parts = []
    for v in violations[:3]:
        text = v.get("message") or v.get("kind") or json.dumps(v, sort_keys=True)[:200]
        parts.append(str(text))
    return "; ".join(parts)


def _check_result(asset_key: AssetKey, name: str, verdict: _Verdict) -> AssetCheckResult:
    return AssetCheckResult(
        asset_key=asset_key,
        check_name=name,
        passed=verdict.passed,
        severity=AssetCheckSeverity.ERROR,
        description=verdict.description,
        metadata=dict(verdict.metadata),
    )


def _check_events(
    context: AssetExecutionContext,
    asset_key: AssetKey,
    keys: Sequence[str],
    verdicts: Mapping[str, Mapping[str, _Verdict]],
    *,
    single: bool,
) -> Iterator[Any]:
    """The checks' results: one AssetCheckResult per check for one key (Dagster attaches it to the key);
    for a range, one evaluation per check and key (Dagster would attach an AssetCheckResult to no key)
    and the check's output once. Without partitioned checks (Dagster before 1.12), one result per check
    for the whole range: it passes when every key passes."""
    for name, by_key in verdicts.items():
        if single:
            yield _check_result(asset_key, name, by_key[keys[0]])
            continue
        if not PARTITIONED_CHECKS:
            yield _check_result(asset_key, name, _range_verdict(keys, by_key))
            continue
        check_key = AssetCheckKey(asset_key, name)
        yield Output(None, output_name=context.assets_def.get_output_name_for_asset_check_key(check_key))
        for k in keys:
            v = by_key[k]
            yield AssetCheckEvaluation(
                asset_key=asset_key,
                check_name=name,
                passed=v.passed,
                severity=AssetCheckSeverity.ERROR,
                description=v.description,
                metadata=dict(v.metadata),
                blocking=True,
                partition=k,
            )


def _range_verdict(keys: Sequence[str], by_key: Mapping[str, _Verdict]) -> _Verdict:
    """One verdict over a range's keys (for checks that cannot belong to a key)."""
    failing = [k for k in keys if not by_key[k].passed]
    if not failing:
        return _Verdict(True, f"every partition passed ({len(keys)}): {by_key[keys[0]].description}", {})
    reasons = "; ".join(f"{k}: {by_key[k].description}" for k in failing[:5])
    return _Verdict(
        False,
        f"{len(failing)} of {len(keys)} partition(s) failed: {reasons}",
        {"failed_partitions": failing, "passed_partitions": [k for k in keys if by_key[k].passed]},
    )


# -- metadata and errors ---------------------------------------------------------------------------------


def _job_url(client: SegopsClient, job: JobView) -> str:
    """The job's page on segops' dashboard: it works with the dashboard's login (a session cookie), where
    the API's URL would answer 401 to a browser without the bearer token."""
    return f"{client.url.rstrip('/')}/#/jobs/{quote(job.id, safe='')}"


def _partition_metadata(client: SegopsClient, job: JobView, p: Mapping[str, Any]) -> dict[str, Any]:
    stats = p.get("rowStats") or {}
    out: dict[str, Any] = {
        "segops_job_id": job.id,
        "segops_job": MetadataValue.url(_job_url(client, job)),
        "segops_partition": str(p["task"]),
        "interval": str(p["interval"]),
        "druid_task_ids": [str(p["druidTaskId"])] if p.get("druidTaskId") else [],
        "druid_state": str(p.get("druidState")),
        "version": str(p.get("version")),
        "rows": int(p.get("rows") or 0),
        "segments": int(p.get("segments") or 0),
        "bytes": int(p.get("bytes") or 0),
        "attempts": int(p.get("attempts") or 0),
        "row_stats": MetadataValue.json(dict(stats)),
    }
    if job.datasource:
        out["datasource"] = job.datasource
    for name in ("processed", "processedWithError", "unparseable", "thrownAway"):
        if name in stats:
            out[f"rows_{name}"] = int(stats[name])
    if p.get("parseErrors"):
        out["parse_errors"] = list(p["parseErrors"])[:5]
    return out


def _job_metadata(client: SegopsClient, job: JobView) -> dict[str, Any]:
    totals = job.raw.get("totals") or {}
    return {
        "segops_job_id": job.id,
        "segops_job": MetadataValue.url(_job_url(client, job)),
        "segops_partitions": len(job.partitions),
        "druid_task_ids": [str(p["druidTaskId"]) for p in job.partitions if p.get("druidTaskId")],
        "job_rows": int(totals.get("rows") or 0),
        "job_segments": int(totals.get("segments") or 0),
        "job_bytes": int(totals.get("bytes") or 0),
        **({"datasource": job.datasource} if job.datasource else {}),
    }


def _outcome_text(outcome: Any) -> str:
    """`, outcome rolled-back (what it means)` for a partition's segops outcome, "" for none."""
    if not outcome:
        return ""
    meaning = OUTCOMES.get(str(outcome))
    return f", outcome {outcome}" + (f" ({meaning})" if meaning else "")


def _keys_text(keys: Sequence[str], limit: int = 10) -> str:
    shown = ", ".join(keys[:limit])
    return shown + (f" and {len(keys) - limit} more" if len(keys) > limit else "")


def _failure_text(
    job: JobView,
    keys: Sequence[str],
    by_key: Mapping[str, Mapping[str, Any]],
    *,
    found_failed: bool,
    retry_failed: bool,
) -> str:
    failed_keys = [k for k in keys if by_key[k].get("state") != "done"]
    failed = [by_key[k] for k in failed_keys]
    outcomes = sorted({str(p["outcome"]) for p in failed if p.get("outcome")})
    head = f"segops job {job.id} ended {job.state}"
    if outcomes:
        head += f" (outcome {', '.join(outcomes)})"
    if len(keys) > 1:
        head += (
            f"; failed partition(s) {_keys_text(failed_keys)}, "
            f"{len(keys) - len(failed_keys)} of {len(keys)} done and materialised"
        )
    lines = [head + ":"]
    for k in keys:
        p = by_key[k]
        if p.get("state") == "done":
            continue
        line = f"- {k} ({p.get('interval')}): {p.get('state')}{_outcome_text(p.get('outcome'))}"
        if p.get("druidTaskId"):
            line += f", Druid task {p['druidTaskId']} {p.get('druidState') or ''}".rstrip()
        line += f": {p.get('error') or 'no error recorded'}"
        if p.get("parseErrors"):
            line += f"; first parse errors: {' | '.join(str(e) for e in list(p['parseErrors'])[:3])}"
        lines.append(line)
    lines.append(_next_step_text(failed, found_failed=found_failed, retry_failed=retry_failed))
    return "\n".join(lines)


def _next_step_text(failed: Sequence[Mapping[str, Any]], *, found_failed: bool, retry_failed: bool) -> str:
    """What to do next about the failed partitions, in the terms of the run config. `found_failed`: the
    request named a job that had already failed (so `retry_failed` decided whether it ran again)."""
    final = sorted({str(p["outcome"]) for p in failed if p.get("outcome") in FINAL_ON_SAME_INPUT})
    if final and len(final) == len({str(p.get("outcome")) for p in failed}):
        return (
            f"The same input can only repeat {', '.join(final)}: fix the input and materialise again (a "
            "changed file or upstream is a new source version), or set allow_empty to empty a window on "
            "purpose."
        )
    if not found_failed:
        return (
            "Fix the input and materialise again: a changed input is ingested anew, and retry_failed (on by "
            "default) sends the failed partitions back to run."
        )
    if retry_failed:
        return (
            "retry_failed is on (the default): the failed partitions were sent back to run on this input "
            "and failed again; fix the input and materialise again."
        )
    return (
        "retry_failed is false for this run, so the failed partitions were not sent back to run: fix the "
        "input and materialise again with retry_failed: true (the default), or run `segops retry JOB`."
    )


def _problem_metadata(error: SegopsApiError) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if error.status is not None:
        out["http_status"] = error.status
    if error.problem:
        out["problem"] = MetadataValue.json(error.problem)
    return out
