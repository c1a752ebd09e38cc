"""Materialising segops assets with real Dagster against `segops serve` on the Druid emulator.

Every claim about Druid is read from the emulator's submission log (`GET /__sim/stats`): which task ids
were submitted, and whether Druid accepted them or refused a duplicate.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest
from dagster import (
    AssetCheckEvaluation,
    AssetsDefinition,
    BackfillPolicy,
    DagsterEventType,
    DagsterInstance,
    DailyPartitionsDefinition,
    ExecuteInProcessResult,
    HourlyPartitionsDefinition,
    RetryPolicy,
    TimeWindowPartitionsDefinition,
    asset,
    materialize,
)
from dagster._core.storage.tags import ASSET_PARTITION_RANGE_END_TAG, ASSET_PARTITION_RANGE_START_TAG

from dagster_segops import (
    CHECK_HANDOFF,
    CHECK_LIVE_VERSION,
    CHECK_ROW_QUALITY,
    SegopsClient,
    SegopsResource,
    segops_partitioned_asset,
)
from dagster_segops._compat import PARTITIONED_CHECKS, check_partition

from .conftest import CORRUPT_DAY, MISSING_DAY, ROWS_PER_DAY, Service, template, write_dataset, write_day

CHECKS = {CHECK_HANDOFF, CHECK_LIVE_VERSION, CHECK_ROW_QUALITY}
DAILY = DailyPartitionsDefinition(start_date="2026-01-01", end_date="2026-02-01")


def downstream_of(
    events: AssetsDefinition, partitions_def: TimeWindowPartitionsDefinition
) -> AssetsDefinition:
    @asset(
        name=f"{events.key.path[-1]}_report",
        partitions_def=partitions_def,
        deps=[events],
        backfill_policy=BackfillPolicy.single_run(),
    )
    def report() -> None:
        """Runs only when the upstream partition's blocking checks passed."""

    return report


def run(
    assets: Sequence[AssetsDefinition],
    service: Service,
    instance: DagsterInstance,
    *,
    key: str | None = None,
    key_range: tuple[str, str] | None = None,
    config: dict[str, Any] | None = None,
    resource: SegopsResource | None = None,
) -> ExecuteInProcessResult:
    tags = (
        {ASSET_PARTITION_RANGE_START_TAG: key_range[0], ASSET_PARTITION_RANGE_END_TAG: key_range[1]}
        if key_range
        else None
    )
    return materialize(
        assets,
        instance=instance,
        partition_key=key,
        tags=tags,
        resources={"segops": resource or service.resource()},
        run_config={"ops": {assets[0].op.name: {"config": config}}} if config else None,
        raise_on_error=False,
    )


def materialization_metadata(result: ExecuteInProcessResult, asset_name: str) -> dict[str, dict[str, Any]]:
    """Each materialised partition's metadata values, by partition key."""
    out: dict[str, dict[str, Any]] = {}
    for event in result.get_asset_materialization_events():
        m = event.event_specific_data.materialization  # type: ignore[union-attr]
        if m.asset_key.path[-1] == asset_name:
            out[str(m.partition)] = {k: v.value for k, v in m.metadata.items()}
    return out


def ck(name: str, key: str) -> tuple[str, str | None]:
    """A check evaluation's identity: its check and key (no key before Dagster's partitioned checks)."""
    return (name, key if PARTITIONED_CHECKS else None)


def checks_by(result: ExecuteInProcessResult) -> dict[tuple[str, str | None], AssetCheckEvaluation]:
    return {(e.check_name, check_partition(e)): e for e in result.get_asset_check_evaluations()}


def failure_message(result: ExecuteInProcessResult) -> str:
    failures = result.get_step_failure_events()
    assert failures, "expected a failed step"
    return "\n".join(f.event_specific_data.error.message for f in failures)  # type: ignore[union-attr]


def assert_dashboard_link(service: Service, link: str, job_id: str) -> None:
    """The job link is the dashboard's page of the job, which a browser opens with the dashboard's login
    (its session cookie): the page asks the API for the job with that cookie, no bearer token."""
    assert link == f"{service.url}/#/jobs/{job_id}"
    with httpx.Client(base_url=service.url, timeout=10) as browser:
        assert browser.get(f"/api/v1/jobs/{job_id}").status_code == 401  # not logged in
        login = browser.post("/api/v1/login", json={"token": service.token})
        assert login.status_code == 204, login.text
        page = browser.get(link.split("#", 1)[0])  # the fragment stays in the browser
        assert page.status_code in (200, 503), page.text  # 503: the dashboard's assets were not built
        assert browser.get(f"/api/v1/jobs/{job_id}").status_code == 200


def expected_rows(start: datetime, end: datetime) -> int:
    """Rows of the dataset in [start, end) from the file of start's UTC date (what the template reads)."""
    day = start.astimezone(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
    times = [day + timedelta(minutes=30 * i) for i in range(ROWS_PER_DAY)]
    return sum(1 for t in times if start <= t < end)


@dataclass
class ThreeDays:
    datasource: str
    keys: list[str]
    results: dict[str, ExecuteInProcessResult]
    events: AssetsDefinition
    report: AssetsDefinition


@pytest.fixture(scope="module")
def three_days(service: Service, data_dir: Path, instance: DagsterInstance) -> ThreeDays:
    """Three partition keys of a daily asset, each materialised in its own Dagster run."""
    events = segops_partitioned_asset(
        name="three",
        template=template("ds_three"),
        partitions_def=DAILY,
        vars={"dataDir": str(data_dir)},
        min_rows=1,
        poll_s=30,
    )
    report = downstream_of(events, DAILY)
    keys = ["2026-01-01", "2026-01-02", "2026-01-03"]
    results = {k: run([events, report], service, instance, key=k) for k in keys}
    return ThreeDays("ds_three", keys, results, events, report)


def test_three_partitions_materialise_with_druid_metadata(service: Service, three_days: ThreeDays) -> None:
    accepted = service.accepted(three_days.datasource)
    assert len(accepted) == 3, service.submissions(three_days.datasource)
    seen: set[str] = set()
    for key, result in three_days.results.items():
        assert result.success, failure_message(result)
        meta = materialization_metadata(result, "three")[key]
        compact = key.replace("-", "")
        next_day = datetime.fromisoformat(key) + timedelta(days=1)
        assert meta["interval"] == f"{key}T00:00:00.000Z/{next_day:%Y-%m-%d}T00:00:00.000Z"
        (task_id,) = meta["druid_task_ids"]
        assert task_id in accepted and compact in task_id
        seen.add(task_id)
        assert meta["rows"] == ROWS_PER_DAY
        assert meta["segments"] == 1
        assert meta["bytes"] > 0
        assert meta["druid_state"] == "SUCCESS"
        assert meta["version"] and meta["version"] != "None"
        assert meta["row_stats"] == {
            "processed": ROWS_PER_DAY,
            "processedWithError": 0,
            "unparseable": 0,
            "thrownAway": 0,
        }
        assert meta["segops_job_id"].startswith("run_ds_three_")
        assert_dashboard_link(service, meta["segops_job"], meta["segops_job_id"])
        # segops agrees: the job is done (handed off and audited).
        assert service.client().get_job(meta["segops_job_id"])["state"] == "done"
        # The downstream asset ran: the blocking checks let it through.
        assert set(materialization_metadata(result, "three_report")) == {key}
    assert seen == set(accepted)


def test_checks_pass_per_partition_and_are_blocking(three_days: ThreeDays) -> None:
    for key, result in three_days.results.items():
        checks = checks_by(result)
        assert set(checks) == {ck(name, key) for name in CHECKS}
        for evaluation in checks.values():
            assert evaluation.passed, evaluation.description
            assert evaluation.blocking
        live = checks[ck(CHECK_LIVE_VERSION, key)]
        meta = {k: v.value for k, v in live.metadata.items()}
        assert meta["live_versions"] == [meta["expected_version"]]


def test_rematerialising_a_partition_submits_nothing_to_druid(
    service: Service, instance: DagsterInstance, three_days: ThreeDays
) -> None:
    before = service.submissions(three_days.datasource)
    first = materialization_metadata(three_days.results["2026-01-02"], "three")["2026-01-02"]
    again = run([three_days.events], service, instance, key="2026-01-02")
    assert again.success, failure_message(again)
    meta = materialization_metadata(again, "three")["2026-01-02"]
    assert meta["druid_task_ids"] == first["druid_task_ids"]
    assert meta["segops_job_id"] == first["segops_job_id"]
    assert meta["version"] == first["version"]
    assert service.submissions(three_days.datasource) == before
    assert all(checks_by(again)[ck(name, "2026-01-02")].passed for name in CHECKS)
    logs = [e.user_message for e in instance.all_logs(again.run_id)]
    assert any("found again: same inputs, same job" in m for m in logs), logs


class _DropFirstWait(httpx.HTTPTransport):
    """Cuts the first long-poll, as a worker losing its connection after the run was created would."""

    def __init__(self) -> None:
        super().__init__()
        self.dropped = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/wait") and self.dropped == 0:
            self.dropped += 1
            raise httpx.ReadError("connection reset by peer (injected by the test)", request=request)
        return super().handle_request(request)


_FLAKY = _DropFirstWait()


class _FlakyResource(SegopsResource):
    def get_client(self) -> SegopsClient:
        return SegopsClient(self.url, self.token, retries=0, transport=_FLAKY)


def test_a_step_retry_after_the_run_was_created_reattaches(
    service: Service, data_dir: Path, instance: DagsterInstance
) -> None:
    events = segops_partitioned_asset(
        name="retried",
        template=template("ds_retried"),
        partitions_def=DAILY,
        vars={"dataDir": str(data_dir)},
        retry_policy=RetryPolicy(max_retries=2),
    )
    result = run(
        [events],
        service,
        instance,
        key="2026-01-04",
        resource=_FlakyResource(url=service.url, token=service.token),
    )
    assert result.success, failure_message(result)
    assert _FLAKY.dropped == 1
    types = [e.event_type for e in result.all_events]
    assert DagsterEventType.STEP_UP_FOR_RETRY in types
    assert types.count(DagsterEventType.STEP_RESTARTED) == 1  # a real Dagster step retry
    # Attempt 1 created the segops run and lost the wait; attempt 2 found the same job: one submission.
    accepted = service.accepted("ds_retried")
    assert len(accepted) == 1 and len(service.submissions("ds_retried")) == 1
    assert materialization_metadata(result, "retried")["2026-01-04"]["druid_task_ids"] == accepted
    (retry,) = [e for e in result.all_events if e.event_type == DagsterEventType.STEP_UP_FOR_RETRY]
    error = retry.event_specific_data.error  # type: ignore[union-attr]
    reason = ""
    while error is not None:  # RetryRequestedFromPolicy, caused by the step's Failure
        reason += error.message
        error = error.cause
    assert "did not answer GET" in reason and "connection reset" in reason, reason
    logs = [e.user_message for e in instance.all_logs(result.run_id)]
    assert any("found again: same inputs, same job" in m for m in logs)


def test_a_missing_day_fails_with_the_gate_reason_and_blocks_downstream(
    service: Service, tmp_path: Path, instance: DagsterInstance
) -> None:
    data = write_dataset(tmp_path / "data")
    events = segops_partitioned_asset(
        name="gated",
        template=template("ds_gated"),
        partitions_def=DAILY,
        vars={"dataDir": str(data)},
        min_rows=1,
    )
    report = downstream_of(events, DAILY)
    result = run([events, report], service, instance, key=MISSING_DAY)
    assert not result.success
    message = failure_message(result)
    attempts = service.accepted("ds_gated")
    assert attempts and all("20260105-20260106" in t for t in attempts)
    assert "segops job run_ds_gated_20260105-20260106_" in message and "ended failed" in message
    assert "0 row(s) ingested, fewer than --min-rows 1" in message
    assert attempts[-1] in message  # the Druid task whose counters failed the gate
    assert "Fix the input and materialise again" in message and "retry_failed (on by default)" in message
    checks = checks_by(result)
    assert set(checks) == {ck(name, MISSING_DAY) for name in CHECKS}
    assert all(not e.passed and e.blocking for e in checks.values())
    assert "fewer than --min-rows 1" in str(checks[ck(CHECK_ROW_QUALITY, MISSING_DAY)].description)
    # segops' gate failed after Druid published the empty day: the partition failed (it is not retried on
    # the same input, and the version it published is undone).
    assert "not handed off: the partition is failed" in str(
        checks[ck(CHECK_HANDOFF, MISSING_DAY)].description
    )
    assert not materialization_metadata(result, "gated")
    assert not materialization_metadata(result, "gated_report")  # blocked downstream

    # Again with `retry_failed: false`: the same inputs name the same ended job, so it fails at once with
    # the same reason, Druid is asked for nothing, and the message names the option that would retry.
    again = run([events], service, instance, key=MISSING_DAY, config={"retry_failed": False})
    assert not again.success
    message = failure_message(again)
    assert "fewer than --min-rows 1" in message
    assert "retry_failed is false for this run" in message and "retry_failed: true (the default)" in message
    assert service.accepted("ds_gated") == attempts

    # Again by default: the failed partition is sent back to run (one more submission) and fails again.
    retried = run([events], service, instance, key=MISSING_DAY)
    assert not retried.success
    assert "retry_failed is on (the default)" in failure_message(retried)
    assert len(service.accepted("ds_gated")) == len(attempts) + 1
    attempts = service.accepted("ds_gated")

    # The day arrives: the dead partition runs again, one more submission.
    write_day(data, datetime(2026, 1, 5, tzinfo=timezone.utc))
    fixed = run([events, report], service, instance, key=MISSING_DAY)
    assert fixed.success, failure_message(fixed)
    after = service.accepted("ds_gated")
    assert after[: len(attempts)] == attempts and len(after) == len(attempts) + 1
    meta = materialization_metadata(fixed, "gated")[MISSING_DAY]
    assert meta["rows"] == ROWS_PER_DAY and meta["druid_task_ids"] == [after[-1]]
    assert all(e.passed for e in checks_by(fixed).values())
    assert set(materialization_metadata(fixed, "gated_report")) == {MISSING_DAY}


def test_unparseable_rows_fail_with_druids_error_message_unless_within_the_limit(
    service: Service, data_dir: Path, instance: DagsterInstance
) -> None:
    strict = segops_partitioned_asset(
        name="strict",
        template=template("ds_strict"),
        partitions_def=DAILY,
        vars={"dataDir": str(data_dir)},
    )
    result = run([strict], service, instance, key=CORRUPT_DAY)
    assert not result.success
    message = failure_message(result)
    # max_unparseable 0 is handed to Druid, which stops the task with its own errorMsg.
    assert "Max parse exceptions[0] exceeded" in message
    assert "first parse errors:" in message
    assert service.accepted("ds_strict")
    quality = checks_by(result)[ck(CHECK_ROW_QUALITY, CORRUPT_DAY)]
    assert not quality.passed and "exceed --max-unparseable 0" in str(quality.description)

    lenient = segops_partitioned_asset(
        name="lenient",
        template=template("ds_lenient"),
        partitions_def=DAILY,
        vars={"dataDir": str(data_dir)},
        max_unparseable="50%",
    )
    ok = run([lenient], service, instance, key=CORRUPT_DAY)
    assert ok.success, failure_message(ok)
    meta = materialization_metadata(ok, "lenient")[CORRUPT_DAY]
    assert meta["rows"] == ROWS_PER_DAY and meta["rows_unparseable"] == ROWS_PER_DAY // 4
    assert meta["parse_errors"]
    assert checks_by(ok)[ck(CHECK_ROW_QUALITY, CORRUPT_DAY)].passed


def test_single_run_backfill_across_dst_is_one_segops_backfill(
    service: Service, data_dir: Path, instance: DagsterInstance
) -> None:
    zone = "America/Los_Angeles"
    local_days = DailyPartitionsDefinition(start_date="2026-03-05", end_date="2026-03-12", timezone=zone)
    events = segops_partitioned_asset(
        name="local_days",
        template=template("ds_la", {"type": "period", "period": "P1D", "timeZone": zone}),
        partitions_def=local_days,
        vars={"dataDir": str(data_dir)},
        min_rows=1,
    )
    keys = ["2026-03-07", "2026-03-08", "2026-03-09"]
    runs_before = len(instance.get_runs())
    result = run([events], service, instance, key_range=(keys[0], keys[-1]))
    assert result.success, failure_message(result)
    assert len(instance.get_runs()) == runs_before + 1  # one Dagster run for the range

    meta = materialization_metadata(result, "local_days")
    assert set(meta) == set(keys)
    job_ids = {m["segops_job_id"] for m in meta.values()}
    assert len(job_ids) == 1
    (job_id,) = job_ids
    assert job_id.startswith("backfill_ds_la_")
    job = service.client().get_whole_job(job_id)
    assert job["kind"] == "backfill" and job["state"] == "done" and len(job["partitions"]) == 3
    backfills = [
        j for j in service.client().list_jobs(kind="backfill", limit=500)["items"] if "_ds_la_" in j["id"]
    ]
    assert [j["id"] for j in backfills] == [job_id]

    # Local days: the day of the change has 23 hours, and segops' partitions are Dagster's windows.
    hours = []
    for key in keys:
        window = local_days.time_window_for_partition_key(key)
        start, end = window.start.astimezone(timezone.utc), window.end.astimezone(timezone.utc)
        hours.append((end - start).total_seconds() / 3600)
        m = meta[key]
        assert m["interval"] == f"{start:%Y-%m-%dT%H:%M:%S}.000Z/{end:%Y-%m-%dT%H:%M:%S}.000Z"
        assert m["rows"] == expected_rows(start, end) > 0
        assert m["rows_thrownAway"] == ROWS_PER_DAY - m["rows"]
    assert hours == [24, 23, 24]

    accepted = service.accepted("ds_la")
    assert len(accepted) == 3 and len(service.submissions("ds_la")) == 3
    assert sorted(accepted) == sorted(t for m in meta.values() for t in m["druid_task_ids"])
    checks = checks_by(result)
    assert set(checks) == {ck(name, key) for name in CHECKS for key in keys}
    assert all(e.passed and e.blocking for e in checks.values())


def test_an_hour_in_a_half_hour_zone(service: Service, data_dir: Path, instance: DagsterInstance) -> None:
    zone = "Asia/Kolkata"
    hours = HourlyPartitionsDefinition(
        start_date="2026-01-02-00:00", end_date="2026-01-03-00:00", timezone=zone
    )
    events = segops_partitioned_asset(
        name="kolkata_hours",
        template=template("ds_kolkata", {"type": "period", "period": "PT1H", "timeZone": zone}),
        partitions_def=hours,
        vars={"dataDir": str(data_dir)},
    )
    result = run([events], service, instance, key="2026-01-02-10:00")
    assert result.success, failure_message(result)
    meta = materialization_metadata(result, "kolkata_hours")["2026-01-02-10:00"]
    assert meta["interval"] == "2026-01-02T04:30:00.000Z/2026-01-02T05:30:00.000Z"
    assert meta["rows"] == 2
    assert meta["segops_job_id"].startswith("run_ds_kolkata_")
    assert len(service.accepted("ds_kolkata")) == 1


def test_a_wrong_token_fails_without_submitting(
    service: Service, data_dir: Path, instance: DagsterInstance
) -> None:
    events = segops_partitioned_asset(
        name="unauthorised",
        template=template("ds_unauth"),
        partitions_def=DAILY,
        vars={"dataDir": str(data_dir)},
        retry_policy=RetryPolicy(max_retries=2),
    )
    result = run([events], service, instance, key="2026-01-06", resource=service.resource(token="wrong"))
    assert not result.success
    message = failure_message(result)
    assert "401" in message and "Bearer" in message
    assert "wrong" not in message
    # A refused request is not retried: another try cannot change the answer.
    assert DagsterEventType.STEP_UP_FOR_RETRY not in [e.event_type for e in result.all_events]
    assert service.submissions("ds_unauth") == []


def test_a_template_segops_refuses_names_the_field(
    service: Service, data_dir: Path, instance: DagsterInstance
) -> None:
    broken = template("ds_broken")
    broken["spec"]["dataSchema"]["granularitySpec"]["segmentGranularity"] = "fortnight"
    events = segops_partitioned_asset(
        name="broken", template=broken, partitions_def=DAILY, vars={"dataDir": str(data_dir)}
    )
    result = run([events], service, instance, key="2026-01-06")
    assert not result.success
    message = failure_message(result)
    assert "400" in message and "segmentGranularity" in message
    assert service.submissions("ds_broken") == []


def test_a_large_jobs_partitions_are_read_page_by_page(service: Service, data_dir: Path) -> None:
    client = service.client()
    days = 1_234
    start = datetime(1990, 1, 1, tzinfo=timezone.utc)
    job, _ = client.create(
        "backfill",
        {
            "template": template("dagster_pages"),
            "from": start.date().isoformat(),
            "to": (start + timedelta(days=days)).date().isoformat(),
            "vars": {"dataDir": str(data_dir)},
        },
    )
    client.cancel_job(job["id"], body={"reason": "only its partitions are read here"})
    # The service shows the first 1,000; the client reads the rest and hands over the whole job.
    for got in (job, client.get_whole_job(job["id"])):
        intervals = [str(p["interval"]) for p in got["partitions"]]
        assert len(intervals) == days
        assert intervals == sorted(set(intervals))
        assert got["partitionCount"] == days
