"""Source versions with real Dagster: what a materialisation sends (the upstream's data version by default,
or the `source_version` run config), what a re-materialisation does with the same and with a changed one
(submissions in the emulator's log, rows by Druid SQL, the materialisation's data version), the outcomes a
failed replace names, and a version that arrives while the previous one still runs."""

import hashlib
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from dagster import (
    AssetExecutionContext,
    AssetsDefinition,
    BackfillPolicy,
    DagsterInstance,
    DataVersion,
    ExecuteInProcessResult,
    MaterializeResult,
    asset,
)
from dagster._core.definitions.data_version import DATA_VERSION_TAG
from segops_client import models

from dagster_segops import segops_partitioned_asset

from .conftest import Service, template, write_day
from .test_assets import DAILY, failure_message, materialization_metadata, run

DAY = "2026-01-01"
DAY_START = datetime(2026, 1, 1, tzinfo=timezone.utc)


def data_version_of(result: ExecuteInProcessResult, asset_name: str) -> str:
    """The data version Dagster recorded for the asset's materialisation in this run."""
    (tag,) = [
        e.event_specific_data.materialization.tags.get(DATA_VERSION_TAG)  # type: ignore[union-attr]
        for e in result.get_asset_materialization_events()
        if e.event_specific_data.materialization.asset_key.path[-1] == asset_name  # type: ignore[union-attr]
    ]
    assert tag
    return str(tag)


def logs(instance: DagsterInstance, result: ExecuteInProcessResult) -> list[str]:
    return [e.user_message for e in instance.all_logs(result.run_id)]


def upstream_of(data: Path, name: str) -> AssetsDefinition:
    """An upstream asset whose data version is the hash of its day's file (as a landing-zone asset would)."""

    @asset(name=name, partitions_def=DAILY, backfill_policy=BackfillPolicy.single_run())
    def raw(context: AssetExecutionContext) -> Any:  # a MaterializeResult (not generic in Dagster 1.10)
        content = (data / f"events-{context.partition_key}.json").read_bytes()
        return MaterializeResult(data_version=DataVersion(hashlib.sha256(content).hexdigest()[:16]))

    return raw


def test_the_default_source_version_follows_the_upstream_data_version(
    service: Service, tmp_path: Path, instance: DagsterInstance
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    write_day(data, DAY_START, rows=10)
    raw = upstream_of(data, "raw_upstream")
    events = segops_partitioned_asset(
        name="upstream_events",
        template=template("ds_upstream"),
        partitions_def=DAILY,
        vars={"dataDir": str(data)},
        deps=[raw],
    )
    first = run([raw, events], service, instance, key=DAY)
    assert first.success, failure_message(first)
    (submitted,) = service.accepted("ds_upstream")
    assert service.rows("ds_upstream") == 10
    meta = materialization_metadata(first, "upstream_events")[DAY]
    assert meta["source_version"].startswith("dagster-upstream:")
    assert (meta["unchanged"], meta["rows"], meta["druid_task_ids"]) == (False, 10, [submitted])

    # The upstream materialises again with the same data (same data version): the re-materialisation
    # reattaches, submits nothing, and reports the same metadata under the same data version.
    again = run([raw, events], service, instance, key=DAY)
    assert again.success, failure_message(again)
    assert service.accepted("ds_upstream") == [submitted]
    meta_again = materialization_metadata(again, "upstream_events")[DAY]
    assert meta_again["source_version"] == meta["source_version"]
    assert meta_again["unchanged"] is True
    assert (meta_again["druid_task_ids"], meta_again["version"]) == (meta["druid_task_ids"], meta["version"])
    assert data_version_of(again, "upstream_events") == data_version_of(first, "upstream_events")
    assert any("was already done from the same source" in m for m in logs(instance, again))

    # The upstream's day changes: its new data version is a new source version, the day is ingested again.
    write_day(data, DAY_START, rows=16)
    fixed = run([raw, events], service, instance, key=DAY)
    assert fixed.success, failure_message(fixed)
    accepted = service.accepted("ds_upstream")
    assert len(accepted) == 2
    assert accepted[0] == submitted
    assert service.rows("ds_upstream") == 16
    meta_fixed = materialization_metadata(fixed, "upstream_events")[DAY]
    assert meta_fixed["source_version"] != meta["source_version"]
    assert (meta_fixed["unchanged"], meta_fixed["rows"], meta_fixed["druid_task_ids"]) == (
        False,
        16,
        [accepted[1]],
    )
    assert meta_fixed["segops_job_id"] == meta["segops_job_id"]  # the same job, its partition planned anew
    assert data_version_of(fixed, "upstream_events") != data_version_of(first, "upstream_events")


def test_the_source_version_in_run_config_reattaches_or_reingests(
    service: Service, tmp_path: Path, instance: DagsterInstance
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    write_day(data, DAY_START, rows=12)
    events = segops_partitioned_asset(
        name="explicit", template=template("ds_explicit"), partitions_def=DAILY, vars={"dataDir": str(data)}
    )
    first = run([events], service, instance, key=DAY, config={"source_version": "etag-1"})
    assert first.success, failure_message(first)
    (submitted,) = service.accepted("ds_explicit")
    assert materialization_metadata(first, "explicit")[DAY]["source_version"] == "etag-1"

    # The file changes, the given version does not: the version is the contract, nothing is submitted.
    write_day(data, DAY_START, rows=20)
    same = run([events], service, instance, key=DAY, config={"source_version": "etag-1"})
    assert same.success, failure_message(same)
    assert service.accepted("ds_explicit") == [submitted]
    assert service.rows("ds_explicit") == 12
    assert materialization_metadata(same, "explicit")[DAY]["unchanged"] is True

    changed = run([events], service, instance, key=DAY, config={"source_version": "etag-2"})
    assert changed.success, failure_message(changed)
    assert len(service.accepted("ds_explicit")) == 2
    assert service.rows("ds_explicit") == 20
    meta = materialization_metadata(changed, "explicit")[DAY]
    assert (meta["source_version"], meta["unchanged"], meta["rows"]) == ("etag-2", False, 20)


def test_a_rolled_back_replace_names_its_outcome_and_is_not_retried_on_the_same_input(
    service: Service, tmp_path: Path, instance: DagsterInstance
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    write_day(data, DAY_START, rows=24)
    events = segops_partitioned_asset(
        name="rolled",
        template=template("ds_rolled"),
        partitions_def=DAILY,
        vars={"dataDir": str(data)},
        min_rows=20,
    )
    assert run([events], service, instance, key=DAY, config={"source_version": "v1"}).success
    assert service.rows("ds_rolled") == 24

    write_day(data, DAY_START, rows=5)  # fewer than min_rows: published by Druid, then undone by segops
    failed = run([events], service, instance, key=DAY, config={"source_version": "v2"})
    assert not failed.success
    message = failure_message(failed)
    assert "ended failed (outcome rolled-back):" in message
    assert "outcome rolled-back (the replace failed its data gates after Druid published it" in message
    assert "fewer than --min-rows 20" in message
    assert service.rows("ds_rolled") == 24  # the earlier version is served again
    attempts = service.accepted("ds_rolled")
    assert len(attempts) == 2

    # retry_failed on the same input would replace the live data again: not sent back to run.
    again = run([events], service, instance, key=DAY, config={"source_version": "v2", "retry_failed": True})
    assert not again.success
    assert "outcome rolled-back" in failure_message(again)
    assert service.accepted("ds_rolled") == attempts
    assert any(
        "is not sent back to run: its partitions ended rolled-back" in m for m in logs(instance, again)
    )


def test_an_input_without_rows_is_refused_over_live_data_unless_allow_empty(
    service: Service, tmp_path: Path, instance: DagsterInstance
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    path = write_day(data, DAY_START, rows=10)
    events = segops_partitioned_asset(
        name="emptied", template=template("ds_emptied"), partitions_def=DAILY, vars={"dataDir": str(data)}
    )
    assert run([events], service, instance, key=DAY, config={"source_version": "v1"}).success
    assert service.rows("ds_emptied") == 10

    path.unlink()
    refused = run([events], service, instance, key=DAY, config={"source_version": "v2"})
    assert not refused.success
    message = failure_message(refused)
    assert "outcome refused-empty (its input yields no rows and would have emptied live data" in message
    assert len(service.accepted("ds_emptied")) == 1  # nothing submitted
    assert service.rows("ds_emptied") == 10

    allowed = run([events], service, instance, key=DAY, config={"source_version": "v2", "allow_empty": True})
    assert allowed.success, failure_message(allowed)
    assert len(service.accepted("ds_emptied")) == 2
    assert service.rows("ds_emptied") == 0
    assert materialization_metadata(allowed, "emptied")[DAY]["rows"] == 0


def test_a_version_that_arrives_while_the_previous_one_runs_is_ingested_after_it(
    service: Service, tmp_path: Path, instance: DagsterInstance
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    write_day(data, DAY_START, rows=6)
    slow: dict[str, Any] = {**template("ds_confirm"), "context": {"simDurationMs": 6 * 1000 * 100}}
    events = segops_partitioned_asset(
        name="confirm", template=slow, partitions_def=DAILY, vars={"dataDir": str(data)}, poll_s=5
    )
    # Another client (an earlier run, the CLI) started the day from v1; its Druid task runs 6 s.
    client = service.client()
    body: models.RunRequest = {
        "template": slow,
        "templateName": "dagster:confirm",
        "vars": {"dataDir": str(data)},
        "interval": f"{DAY}T00:00:00Z/2026-01-02T00:00:00Z",
        "sourceVersion": "v1",
    }
    job, created = client.create("run", body)
    assert created
    deadline = time.monotonic() + 30
    while client.get_job(job["id"])["partitions"][0]["druidState"] != "RUNNING":
        assert time.monotonic() < deadline, "v1 never ran at Druid"
        client.wait(job["id"], 0.2)  # a bounded long-poll instead of a sleep

    write_day(data, DAY_START, rows=9)
    result = run([events], service, instance, key=DAY, config={"source_version": "v2"})
    assert result.success, failure_message(result)
    accepted = service.accepted("ds_confirm")
    assert len(accepted) == 2
    assert service.rows("ds_confirm") == 9  # v2's rows, not v1's
    meta = materialization_metadata(result, "confirm")[DAY]
    assert (meta["segops_job_id"], meta["druid_task_ids"], meta["rows"]) == (job["id"], [accepted[1]], 9)
    assert any("was already running when this step found it" in m for m in logs(instance, result))


def test_without_a_source_version_segops_fingerprints_the_local_file(
    service: Service, tmp_path: Path, instance: DagsterInstance
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    write_day(data, DAY_START, rows=8)
    events = segops_partitioned_asset(
        name="fingerprinted",
        template=template("ds_fingerprinted"),
        partitions_def=DAILY,
        vars={"dataDir": str(data)},
    )
    # A blank version is none; with no upstream either, none is sent and segops fingerprints the file.
    first = run([events], service, instance, key=DAY, config={"source_version": "  "})
    assert first.success, failure_message(first)
    assert "source_version" not in materialization_metadata(first, "fingerprinted")[DAY]
    (submitted,) = service.accepted("ds_fingerprinted")
    again = run([events], service, instance, key=DAY)
    assert again.success, failure_message(again)
    assert materialization_metadata(again, "fingerprinted")[DAY]["unchanged"] is True
    assert service.accepted("ds_fingerprinted") == [submitted]
    write_day(data, DAY_START, rows=7)  # a new size: a new fingerprint
    changed = run([events], service, instance, key=DAY)
    assert changed.success, failure_message(changed)
    assert len(service.accepted("ds_fingerprinted")) == 2
    assert service.rows("ds_fingerprinted") == 7

    overlong = run([events], service, instance, key=DAY, config={"source_version": "x" * 201})
    assert not overlong.success
    assert "source_version is 201 characters; segops takes at most 200" in failure_message(overlong)
    assert len(service.accepted("ds_fingerprinted")) == 2


def test_a_source_version_callable_decides_what_is_new_work(
    service: Service, tmp_path: Path, instance: DagsterInstance
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    write_day(data, DAY_START, rows=11)
    # As an object store's ETag would be: asked of the step's context, per run.
    etags: dict[str, Any] = {DAY: "etag-a"}
    seen: list[list[str]] = []

    def etag_of(context: AssetExecutionContext) -> str | None:
        seen.append(list(context.partition_keys))
        return etags[context.partition_keys[0]]  # type: ignore[no-any-return]

    events = segops_partitioned_asset(
        name="called",
        template=template("ds_called"),
        partitions_def=DAILY,
        vars={"dataDir": str(data)},
        source_version=etag_of,
    )
    first = run([events], service, instance, key=DAY)
    assert first.success, failure_message(first)
    assert seen == [[DAY]]
    (submitted,) = service.accepted("ds_called")
    assert materialization_metadata(first, "called")[DAY]["source_version"] == "etag-a"

    # The file changes under the same ETag: the callable's version is the contract, nothing is submitted.
    write_day(data, DAY_START, rows=13)
    same = run([events], service, instance, key=DAY)
    assert same.success, failure_message(same)
    assert service.accepted("ds_called") == [submitted]
    assert materialization_metadata(same, "called")[DAY]["unchanged"] is True
    assert any(
        "was already done from the same source (source version etag-a)" in m for m in logs(instance, same)
    )

    etags[DAY] = "etag-b"
    changed = run([events], service, instance, key=DAY)
    assert changed.success, failure_message(changed)
    assert len(service.accepted("ds_called")) == 2
    assert service.rows("ds_called") == 13

    # The run config still wins over the callable.
    pinned = run([events], service, instance, key=DAY, config={"source_version": "etag-b"})
    assert pinned.success, failure_message(pinned)
    assert len(service.accepted("ds_called")) == 2

    etags[DAY] = 42
    wrong = run([events], service, instance, key=DAY)
    assert not wrong.success
    assert "source_version callable returned int; expected a string" in failure_message(wrong)
    assert len(service.accepted("ds_called")) == 2
