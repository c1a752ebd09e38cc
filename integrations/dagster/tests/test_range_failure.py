"""A range with one bad day, through Dagster's own CLI and the README's example, as a data team runs it:
every good day is materialised with its checks and the bad one fails; fixing the file and running the
range again ingests the fixed day once (Druid SQL counts the new file) and leaves the good day alone; an
unchanged rerun submits nothing."""

from datetime import datetime, timezone
from pathlib import Path

from dagster import AssetKey, DagsterEventType, DagsterInstance, DailyPartitionsDefinition

from dagster_segops import CHECK_HANDOFF, CHECK_LIVE_VERSION, CHECK_ROW_QUALITY
from dagster_segops._compat import PARTITIONED_CHECKS, check_partition

from .conftest import ROWS_PER_DAY, Service, write_day
from .test_cli import example_env, materialize

GOOD, BAD = "2026-01-08", "2026-01-09"
CHECKS = (CHECK_HANDOFF, CHECK_LIVE_VERSION, CHECK_ROW_QUALITY)
#: The example's partitions (examples/definitions.py).
EXAMPLE_DAYS = DailyPartitionsDefinition(start_date="2026-01-01", timezone="UTC")


def materialized(instance: DagsterInstance, asset: str, run_id: str) -> list[str]:
    """The partitions of `asset` materialised by one run."""
    records = instance.fetch_materializations(AssetKey(asset), limit=100).records
    return sorted(
        str(r.asset_materialization.partition)
        for r in records
        if r.asset_materialization is not None and r.run_id == run_id
    )


def evaluations(instance: DagsterInstance, run_id: str) -> dict[tuple[str, str | None], bool]:
    """Each check evaluation of a run: (check, partition) -> passed."""
    out: dict[tuple[str, str | None], bool] = {}
    for e in instance.all_logs(run_id, of_type=DagsterEventType.ASSET_CHECK_EVALUATION):
        assert e.dagster_event is not None
        data = e.dagster_event.asset_check_evaluation_data
        out[(data.check_name, check_partition(data))] = data.passed
    return out


def latest_run_id(instance: DagsterInstance) -> str:
    return instance.get_runs(limit=1)[0].run_id


def test_a_range_with_one_bad_day_materialises_the_good_days_and_reloads_the_fixed_one(
    service: Service, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    write_day(data, datetime(2026, 1, 8, tzinfo=timezone.utc))
    bad_day = datetime(2026, 1, 9, tzinfo=timezone.utc)
    write_day(data, bad_day, corrupt=True)
    home = tmp_path / "dagster_home"
    env = example_env(service, home, data, "ds_range_fail")
    both = ("--select", "events,events_report", "--partition-range", f"{GOOD}...{BAD}")

    failed = materialize(env, *both)
    assert failed.returncode != 0
    # What the user is told: the CLI's output and the step's failure as the run records it (what the UI shows;
    # Dagster 1.10's console once printed the run's failure without the step's description, seen under load).
    with DagsterInstance.from_config(str(home)) as instance:
        recorded = [
            str(e.dagster_event.step_failure_data.user_failure_data.description)
            for e in instance.all_logs(latest_run_id(instance), of_type=DagsterEventType.STEP_FAILURE)
            if e.dagster_event
            and e.dagster_event.step_failure_data
            and e.dagster_event.step_failure_data.user_failure_data
        ]
    assert recorded, "the run recorded no step failure with segops' description"
    output = "\n".join([failed.stdout, failed.stderr, *recorded])
    said = "\n".join(line for line in output.splitlines() if "segops" in line or "Failure" in line)[-4000:]
    assert f"failed partition(s) {BAD}, 1 of 2 done and materialised" in output, said
    assert "Max parse exceptions[0] exceeded" in output, said
    assert "Fix the input and materialise again: a changed input is ingested anew" in output, said
    attempts = service.accepted("ds_range_fail")
    assert [t for t in attempts if "20260108" in t] and [t for t in attempts if "20260109" in t]
    assert service.rows("ds_range_fail") == ROWS_PER_DAY  # the good day is served

    with DagsterInstance.from_config(str(home)) as instance:
        run_id = latest_run_id(instance)
        assert materialized(instance, "events", run_id) == [GOOD]
        assert materialized(instance, "events_report", run_id) == []  # the failed step stops the run
        checks = evaluations(instance, run_id)
        if PARTITIONED_CHECKS:
            assert {k for k, passed in checks.items() if passed} == {(c, GOOD) for c in CHECKS}
            assert not checks[(CHECK_HANDOFF, BAD)] and not checks[(CHECK_ROW_QUALITY, BAD)]
        else:  # Dagster before 1.12: one evaluation per check for the range as a whole
            assert set(checks) == {(c, None) for c in CHECKS}
            assert not checks[(CHECK_HANDOFF, None)] and not checks[(CHECK_ROW_QUALITY, None)]
        status = instance.get_status_by_partition(AssetKey("events"), [GOOD, BAD], EXAMPLE_DAYS)
        assert status is not None
        assert (str(status[GOOD]), str(status[BAD])) == (
            "AssetPartitionStatus.MATERIALIZED",
            "AssetPartitionStatus.FAILED",
        )

    # The good day's downstream can run from what was recorded.
    report = materialize(env, "--select", "events_report", "--partition", GOOD)
    assert report.returncode == 0, report.stdout[-3000:] + report.stderr[-3000:]

    # The file is fixed: the same range again ingests the fixed day once and leaves the good day alone.
    write_day(data, bad_day, rows=30)
    fixed = materialize(env, *both)
    assert fixed.returncode == 0, fixed.stdout[-3000:] + fixed.stderr[-3000:]
    after = service.accepted("ds_range_fail")
    assert after[: len(attempts)] == attempts and len(after) == len(attempts) + 1
    assert "20260109" in after[-1]
    assert service.rows("ds_range_fail") == ROWS_PER_DAY + 30
    with DagsterInstance.from_config(str(home)) as instance:
        run_id = latest_run_id(instance)
        assert materialized(instance, "events", run_id) == [GOOD, BAD]
        assert materialized(instance, "events_report", run_id) == [GOOD, BAD]
        assert all(evaluations(instance, run_id).values())

    # Nothing changed: the rerun submits nothing and says so.
    submitted = service.submissions("ds_range_fail")
    unchanged = materialize(env, *both)
    assert unchanged.returncode == 0, unchanged.stdout[-3000:] + unchanged.stderr[-3000:]
    assert service.submissions("ds_range_fail") == submitted
    with DagsterInstance.from_config(str(home)) as instance:
        messages = [e.user_message for e in instance.all_logs(latest_run_id(instance))]
        assert any("was already done from the same source" in m for m in messages)
        assert any("nothing submitted" in m for m in messages)
