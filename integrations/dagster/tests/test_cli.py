"""The package README's example, driven by Dagster's own CLI in a temporary DAGSTER_HOME: a single-run
backfill of four days (`dagster asset materialize --partition-range`) is one Dagster run and one
segops backfill, each day materialised with its own Druid task, checks and downstream asset."""

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from dagster import AssetKey, DagsterEventType, DagsterInstance

from dagster_segops import CHECK_HANDOFF, CHECK_LIVE_VERSION, CHECK_ROW_QUALITY
from dagster_segops._compat import check_partition

from .conftest import ROWS_PER_DAY, Service
from .test_assets import ck

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "definitions.py"
KEYS = ["2026-01-06", "2026-01-07", "2026-01-08", "2026-01-09"]


def example_env(service: Service, home: Path, data_dir: Path, datasource: str) -> dict[str, str]:
    """The environment the README's commands run in: a DAGSTER_HOME of the test's own, the service."""
    home.mkdir(exist_ok=True)
    return {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "SEGOPS_URL": service.url,
        "SEGOPS_API_TOKEN": service.token,
        "EVENTS_DATA_DIR": str(data_dir),
        "EVENTS_DATASOURCE": datasource,
    }


def materialize(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`dagster asset materialize -f examples/definitions.py ARGS` as a user types it."""
    dagster = Path(sys.executable).parent / "dagster"
    done = subprocess.run(
        [str(dagster), "asset", "materialize", "-f", str(EXAMPLE), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert env["SEGOPS_API_TOKEN"] not in done.stdout + done.stderr
    # Neither the package nor the example prints Dagster's preview/beta warnings on every command.
    assert "PreviewWarning" not in done.stderr and "BetaWarning" not in done.stderr, done.stderr[-3000:]
    return done


def test_partition_range_from_the_cli_is_one_run_and_one_segops_backfill(
    service: Service, data_dir: Path, tmp_path: Path
) -> None:
    home = tmp_path / "dagster_home"
    env = example_env(service, home, data_dir, "ds_cli")
    done = materialize(
        env, "--select", "events,events_report", "--partition-range", f"{KEYS[0]}...{KEYS[-1]}"
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    with DagsterInstance.from_config(str(home)) as instance:
        runs = instance.get_runs()
        assert len(runs) == 1
        (run,) = runs
        assert run.tags["dagster/asset_partition_range_start"] == KEYS[0]
        assert run.tags["dagster/asset_partition_range_end"] == KEYS[-1]

        records = instance.fetch_materializations(AssetKey("events"), limit=100).records
        by_key: dict[str, dict[str, Any]] = {}
        for record in records:
            m = record.asset_materialization
            assert m is not None
            by_key[str(m.partition)] = {k: v.value for k, v in m.metadata.items()}
        assert sorted(by_key) == KEYS
        job_ids = {meta["segops_job_id"] for meta in by_key.values()}
        assert len(job_ids) == 1
        (job_id,) = job_ids
        assert job_id.startswith("backfill_ds_cli_20260106-20260110_")
        for key, meta in by_key.items():
            assert meta["rows"] == ROWS_PER_DAY
            assert meta["interval"].startswith(f"{key}T00:00:00.000Z/")
        reports = instance.fetch_materializations(AssetKey("events_report"), limit=100).records
        assert (
            sorted(str(r.asset_materialization.partition) for r in reports if r.asset_materialization) == KEYS
        )

        evaluations = [
            e.dagster_event.asset_check_evaluation_data
            for e in instance.all_logs(run.run_id, of_type=DagsterEventType.ASSET_CHECK_EVALUATION)
            if e.dagster_event is not None
        ]
        assert {(c.check_name, check_partition(c)) for c in evaluations} == {
            ck(name, key) for name in (CHECK_HANDOFF, CHECK_LIVE_VERSION, CHECK_ROW_QUALITY) for key in KEYS
        }
        assert all(c.passed for c in evaluations)

    job = service.client().get_whole_job(job_id)
    assert job["kind"] == "backfill" and job["state"] == "done" and len(job["partitions"]) == 4
    listed = service.client().list_jobs(kind="backfill", limit=500)["items"]
    assert [j["id"] for j in listed if "_ds_cli_" in j["id"]] == [job_id]
    accepted = service.accepted("ds_cli")
    assert len(accepted) == 4 and len(service.submissions("ds_cli")) == 4
    assert sorted(accepted) == sorted(t for meta in by_key.values() for t in meta["druid_task_ids"])
