"""The version of a task's input, sent to segops as `sourceVersion`.

segops stores the source version of every partition and hashes it into the partition's Druid task id. A
request with the version a finished partition was ingested from changes nothing (the job is answered as
it is, nothing is submitted); another version plans the partition anew and ingests it again. Without one,
segops fingerprints what it can see itself (local files: name, size, mtime; http: ETag, Last-Modified)
and other inputs (S3, GCS, …) have no version: a rerun reattaches to the finished job.

The operators' default (`source_version=None`): when the DAG run was triggered by asset events, a digest
of the events it consumed (`asset_events_version`), so a run started by new upstream data ingests it, and
a retry or a clear of that run (same events) reattaches; otherwise nothing is sent.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Iterable
from typing import Any

#: segops' limit on `sourceVersion` (1 to 200 characters, not blank).
MAX_SOURCE_VERSION = 200
#: The prefix of the default source version of an asset-triggered DAG run.
ASSET_EVENTS_PREFIX = "airflow-asset-events:"


def _instant(value: Any) -> str:
    """An event's timestamp as UTC ISO-8601 with microseconds (naive values are read as UTC)."""
    if isinstance(value, dt.datetime):
        aware = value if value.tzinfo is not None else value.replace(tzinfo=dt.timezone.utc)
        return aware.astimezone(dt.timezone.utc).isoformat(timespec="microseconds")
    return str(value)


def asset_event_identity(event: Any) -> list[Any]:
    """What identifies one asset event: its asset, its time and the task instance that emitted it
    (Airflow 3 gives a task no event id; `timestamp` and the source together are unique)."""
    asset = getattr(event, "asset", None) or getattr(event, "dataset", None)  # Airflow 2.10: a dataset
    return [
        getattr(asset, "uri", None),
        getattr(asset, "name", None),
        _instant(getattr(event, "timestamp", None)),
        getattr(event, "source_dag_id", None),
        getattr(event, "source_run_id", None),
        getattr(event, "source_task_id", None),
        getattr(event, "source_map_index", None),
        getattr(event, "partition_key", None),
    ]


def asset_events_version(events: Iterable[Any]) -> str | None:
    """A stable digest of the asset events a DAG run consumed (order does not matter), or None for none.

    The same events give the same digest in every try and every clear of the run; a run triggered by
    other events (new upstream data) gets another one.
    """
    identities = sorted(json.dumps(asset_event_identity(e), separators=(",", ":")) for e in events)
    if not identities:
        return None
    digest = hashlib.sha256("\n".join(identities).encode()).hexdigest()[:32]
    return f"{ASSET_EVENTS_PREFIX}{len(identities)}:{digest}"


def resolve_source_version(value: Any, context: Any) -> str | None:
    """The source version a task sends: `value` as rendered (blank: none), else the default."""
    if value is not None:
        text = str(value).strip()
        if len(text) > MAX_SOURCE_VERSION:
            raise ValueError(
                f"source_version is {len(text)} characters; segops takes at most {MAX_SOURCE_VERSION} "
                "(pass a digest of a longer value)"
            )
        return text or None
    dag_run: Any = context.get("dag_run") if hasattr(context, "get") else None
    if hasattr(dag_run, "consumed_asset_events"):
        return asset_events_version(dag_run.consumed_asset_events or [])
    # Airflow 2.10 calls them dataset events; the context lists them by URI (the run's own relationship
    # cannot be loaded from the task's detached DAG run).
    by_uri = context.get("triggering_dataset_events") if hasattr(context, "get") else None
    return asset_events_version([e for events in (by_uri or {}).values() for e in events])
