"""Source versions with `dag.test()` (each call a new DAG run of the logical date): the version a task
sends (rendered from a template), what a rerun does with the same and with a changed one (submissions in
the emulator's log, rows by Druid SQL, asset events in the metadata DB), the outcomes a failed replace
names, and the event a retry owes. A clear through the real scheduler is in tests/test_scheduler.py."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from conftest import AIRFLOW_3, DATA_DIR, DB, Segops, Sim, query, run, states, write_day, xcom
from segops_airflow.hooks.segops import SegopsHook
from segops_airflow.source_version import ASSET_EVENTS_PREFIX, asset_events_version, resolve_source_version

DAY = "2026-01-01"
UTC = dt.timezone.utc


@pytest.fixture(scope="module")
def dags(migrated_db: Path) -> Any:
    import segops_test_dags

    return segops_test_dags


def data_dir(datasource: str) -> Path:
    """The DAG's own data directory (beside DATA_DIR: a local input source reads subdirectories too)."""
    return Path(f"{DATA_DIR}-{datasource}")


def set_version(monkeypatch: pytest.MonkeyPatch, datasource: str, version: str) -> None:
    """What an upstream (or a person) does before clearing: the Variable the DAG's template reads."""
    monkeypatch.setenv(f"AIRFLOW_VAR_{datasource.upper()}_VERSION", version)


def asset_events(datasource: str) -> list[dict[str, Any]]:
    """The extras of the asset events of druid://<any host>/<datasource>, oldest first."""
    rows = query(
        DB,
        "select e.extra from asset_event e join asset a on a.id = e.asset_id "
        "where a.uri like 'druid://%/' || ? order by e.id",
        datasource,
    )
    return [json.loads(extra) for (extra,) in rows]


def rendered(dag_id: str, run_id: str) -> dict[str, Any]:
    rows = query(
        DB,
        "select rendered_fields from rendered_task_instance_fields "
        "where dag_id = ? and run_id = ? and task_id = 'ingest'",
        dag_id,
        run_id,
    )
    assert len(rows) == 1, rows
    fields: dict[str, Any] = json.loads(rows[0][0])
    return fields


@pytest.mark.parametrize(
    ("dag_name", "datasource"),
    [("sourced", "af_sourced"), ("sourced_alias", "af_sourced_alias")],
    ids=["declared-outlet", "asset-alias"],
)
def test_a_clear_reattaches_on_the_same_source_version_and_reingests_on_a_new_one(
    dags: Any,
    sim: Sim,
    segops: Segops,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    dag_name: str,
    datasource: str,
) -> None:
    dag = getattr(dags, dag_name)
    write_day(data_dir(datasource), DAY, 10)
    set_version(monkeypatch, datasource, "upstream-run-1")
    first = run(dag, DAY)
    assert str(first.state) == "success"
    (submitted,) = sim.submissions(datasource)
    assert submitted["accepted"]
    assert sim.rows(datasource) == 10
    summary = xcom(dag.dag_id, first.run_id, "return_value")
    assert (summary["source_version"], summary["unchanged"]) == ("upstream-run-1", False)
    assert rendered(dag.dag_id, first.run_id)["source_version"] == "upstream-run-1"
    (event,) = asset_events(datasource)
    assert event["source_version"] == "upstream-run-1"
    assert event["druid_task_ids"] == [submitted["id"]]
    capfd.readouterr()

    # The file changes but the version does not: a rerun of the DAG for the day (dag.test() makes a new DAG
    # run of the logical date) reattaches to the done job. The given version is the contract: nothing is
    # submitted, Druid keeps serving 10 rows, and the task emits no asset event (the data did not change).
    job_id = summary["job_id"]
    write_day(data_dir(datasource), DAY, 16)
    again = run(dag, DAY)
    out = capfd.readouterr().out
    assert str(again.state) == "success"
    assert sim.submissions(datasource) == [submitted]
    assert sim.rows(datasource) == 10
    assert len(asset_events(datasource)) == 1
    assert "was already done from the same source (source version upstream-run-1)" in out
    assert "no asset event for druid://" in out
    summary = xcom(dag.dag_id, again.run_id, "return_value")
    assert (summary["source_version"], summary["unchanged"]) == ("upstream-run-1", True)
    assert (summary["job_id"], summary["druid_task_ids"]) == (job_id, [submitted["id"]])

    # The upstream fixed the data and says so with a new version: the clear ingests the day again, under a
    # new Druid task id, and Druid serves the new rows.
    set_version(monkeypatch, datasource, "upstream-run-2")
    fixed = run(dag, DAY)
    assert str(fixed.state) == "success"
    assert rendered(dag.dag_id, fixed.run_id)["source_version"] == "upstream-run-2"
    submissions = sim.submissions(datasource)
    assert len(submissions) == 2
    assert submissions[0] == submitted
    assert submissions[1]["accepted"]
    assert submissions[1]["id"] != submitted["id"]
    assert sim.rows(datasource) == 16
    summary = xcom(dag.dag_id, fixed.run_id, "return_value")
    assert (summary["source_version"], summary["unchanged"]) == ("upstream-run-2", False)
    assert summary["druid_task_ids"] == [submissions[1]["id"]]
    assert summary["totals"]["rows"] == 16
    events = asset_events(datasource)
    assert [e["source_version"] for e in events] == ["upstream-run-1", "upstream-run-2"]
    assert events[1]["rows"] == 16
    # segops saw the rendered versions: the same job, its partition planned anew from one to the other.
    assert summary["job_id"] == job_id
    reasons = segops.event_reasons(summary["job_id"])
    assert any("source changed (source version upstream-run-1 → upstream-run-2)" in r for r in reasons)


def test_a_rolled_back_replace_names_its_outcome_and_is_not_sent_back_to_run(
    dags: Any, sim: Sim, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    write_day(data_dir("af_rolled"), DAY, 24)
    set_version(monkeypatch, "af_rolled", "v1")
    assert str(run(dags.rolled, DAY).state) == "success"
    assert sim.rows("af_rolled") == 24
    capfd.readouterr()

    # 5 rows, fewer than min_rows 20: Druid publishes them, segops' gate fails, the replace is undone.
    write_day(data_dir("af_rolled"), DAY, 5)
    set_version(monkeypatch, "af_rolled", "v2")
    failed = run(dags.rolled, DAY)
    out = capfd.readouterr().out
    assert str(failed.state) == "failed"
    assert "SegopsJobFailed" in out
    assert "1 of 1 partition(s) not done (outcome rolled-back)" in out
    assert "outcome rolled-back (the replace failed its data gates after Druid published it" in out
    assert "fewer than --min-rows 20" in out
    assert sim.rows("af_rolled") == 24  # the earlier data is served again
    attempts = sim.submissions("af_rolled")
    assert len(attempts) == 2

    # A plain rerun with the same input is not sent back to run: it would replace the live data again.
    again = run(dags.rolled, DAY)
    out = capfd.readouterr().out
    assert str(again.state) == "failed"
    assert "is not sent back to run: its partitions ended rolled-back" in out
    assert "(outcome rolled-back)" in out
    assert sim.submissions("af_rolled") == attempts
    assert sim.rows("af_rolled") == 24


def test_an_input_without_rows_is_refused_over_live_data_unless_allow_empty(
    dags: Any, sim: Sim, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    path = write_day(data_dir("af_emptied"), DAY, 10)
    set_version(monkeypatch, "af_emptied", "v1")
    assert str(run(dags.emptied, DAY).state) == "success"
    assert sim.rows("af_emptied") == 10
    assert len(sim.submissions("af_emptied")) == 1
    capfd.readouterr()

    # The day's file is gone (the upstream emptied it): segops refuses before submitting anything.
    path.unlink()
    set_version(monkeypatch, "af_emptied", "v2")
    refused = run(dags.emptied, DAY)
    out = capfd.readouterr().out
    assert str(refused.state) == "failed"
    assert "1 of 1 partition(s) not done (outcome refused-empty)" in out
    assert "allow_empty=True lets it" in out
    assert len(sim.submissions("af_emptied")) == 1
    assert sim.rows("af_emptied") == 10

    # allow_empty=True (another job: it is part of the identity) empties the day on purpose.
    allowed = run(dags.emptied_allowed, DAY)
    assert str(allowed.state) == "success"
    assert len(sim.submissions("af_emptied")) == 2
    assert sim.rows("af_emptied") == 0
    summary = xcom("segops_emptied_allowed", allowed.run_id, "return_value")
    assert (summary["source_version"], summary["totals"]["rows"]) == ("v2", 0)


def test_a_new_version_sent_while_the_old_one_runs_is_ingested_after_it(
    dags: Any,
    sim: Sim,
    segops: Segops,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    from segops_test_support import daily_template

    directory = data_dir("af_confirm")
    write_day(directory, DAY, 6)
    # Another client started the day from version v1; its Druid task runs 6 s.
    hook = SegopsHook()
    body = {
        "template": daily_template("af_confirm", slow_seconds=6),
        "interval": f"{DAY}T00:00:00+00:00/2026-01-02T00:00:00+00:00",
        "vars": {"dataDir": str(directory)},
        "sourceVersion": "v1",
    }
    job, created = hook.create("run", body)
    assert created
    deadline = time.monotonic() + 30
    while hook.get_job(job["id"])["partitions"][0]["druidState"] != "RUNNING":
        assert time.monotonic() < deadline, "v1 never ran at Druid"
        hook.wait(job["id"], timeout=0.2)  # a bounded long-poll instead of a sleep
    capfd.readouterr()

    # v2 arrives while v1 runs: segops leaves the running partition alone and answers the job as it is.
    write_day(directory, DAY, 9)
    set_version(monkeypatch, "af_confirm", "v2")
    dag_run = run(dags.confirm, DAY)
    out = capfd.readouterr().out
    assert str(dag_run.state) == "success"
    assert "was already running when this task found it" in out
    submissions = sim.submissions("af_confirm")
    assert [s["accepted"] for s in submissions] == [True, True]
    assert sim.rows("af_confirm") == 9  # v2's rows, not v1's
    summary = xcom("segops_confirm", dag_run.run_id, "return_value")
    assert summary["job_id"] == job["id"]
    assert summary["druid_task_ids"] == [submissions[1]["id"]]
    assert summary["source_version"] == "v2"
    assert any("source version v1 → v2" in r for r in segops.event_reasons(job["id"]))


def test_a_retry_after_the_job_ended_unreported_emits_the_owed_asset_event(
    dags: Any, sim: Sim, capfd: pytest.CaptureFixture[str]
) -> None:
    day = "2026-01-02"
    dag_run = run(dags.owed, day)
    out = capfd.readouterr().out
    assert str(dag_run.state) == "success"
    assert states(dag_run) == {"ingest": ("success", 2)}
    assert "simulated crash after segops job" in out
    assert [s["accepted"] for s in sim.submissions("af_owed")] == [True]
    if not AIRFLOW_3:
        # Airflow 2.10 has no task state to carry the note across tries: the event is lost (README).
        assert "was already done from the same source" in out
        assert asset_events("af_owed") == []
        return
    assert "an earlier try of this task instance started it and did not report it" in out
    (event,) = asset_events("af_owed")
    assert event["rows"] == 36
    assert xcom("segops_owed", dag_run.run_id, "return_value")["unchanged"] is False

    # Reported once: a rerun finds the job done from the same input and owes nothing.
    # (No source version given: segops fingerprints the local file, which did not change.)
    again = run(dags.owed, day)
    out = capfd.readouterr().out
    assert str(again.state) == "success"
    assert "was already done from the same source (no source version given)" in out
    assert len(asset_events("af_owed")) == 1
    assert [s["accepted"] for s in sim.submissions("af_owed")] == [True]


def _event(uri: str, at: dt.datetime, run_id: str | None = "scheduled__1") -> SimpleNamespace:
    return SimpleNamespace(
        asset=SimpleNamespace(uri=uri, name=uri),
        timestamp=at,
        source_dag_id="upstream" if run_id else None,
        source_run_id=run_id,
        source_task_id="produce" if run_id else None,
        source_map_index=-1 if run_id else None,
        partition_key=None,
    )


def test_the_default_source_version_is_a_digest_of_the_triggering_asset_events() -> None:
    at = dt.datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)
    a, b = _event("s3://raw/a", at), _event("s3://raw/b", at + dt.timedelta(seconds=1))
    version = asset_events_version([a, b])
    assert version is not None
    assert version.startswith(f"{ASSET_EVENTS_PREFIX}2:")
    assert len(version) <= 200
    # Stable: the same events in any order, a naive UTC timestamp read as UTC.
    assert asset_events_version([b, a]) == version
    naive = _event("s3://raw/a", at.replace(tzinfo=None))
    assert asset_events_version([naive, b]) == version
    # Another event (new upstream data, a manual event) is another version.
    assert asset_events_version([a, _event("s3://raw/b", at + dt.timedelta(seconds=2))]) != version
    assert asset_events_version([a, _event("s3://raw/b", at, run_id=None)]) != version
    assert asset_events_version([]) is None

    # What the operator sends: the rendered value (blank: none), else the digest of the run's events.
    run_with_events = {"dag_run": SimpleNamespace(consumed_asset_events=[a, b])}
    assert resolve_source_version(None, run_with_events) == version
    assert resolve_source_version(None, {"dag_run": SimpleNamespace(consumed_asset_events=[])}) is None
    assert resolve_source_version("  etag-123 ", run_with_events) == "etag-123"
    assert resolve_source_version("   ", run_with_events) is None
    with pytest.raises(ValueError, match="at most 200"):
        resolve_source_version("x" * 201, run_with_events)


def test_the_request_carries_source_version_and_allow_empty() -> None:
    from segops_test_support import daily_template

    from segops_airflow.operators.segops import SegopsIngestOperator

    op = SegopsIngestOperator(
        task_id="body",
        template=daily_template("af_body"),
        interval=f"{DAY}T00:00:00+00:00/2026-01-02T00:00:00+00:00",
        source_version="{{ dag_run.conf['version'] }}",
        allow_empty=True,
    )
    assert "source_version" in op.template_fields
    body = op.request_body({"dag_run": SimpleNamespace(consumed_asset_events=[])})
    # Not rendered here (no Jinja): sent as it stands, with allowEmpty.
    assert (body["sourceVersion"], body["allowEmpty"]) == ("{{ dag_run.conf['version'] }}", True)
    plain = SegopsIngestOperator(task_id="plain", template=daily_template("af_body"))
    body = plain.request_body({"dag_run": SimpleNamespace(consumed_asset_events=[])})
    assert "sourceVersion" not in body
    assert "allowEmpty" not in body


def test_a_callable_source_version_is_computed_per_run(dags: Any, sim: Sim) -> None:
    write_day(data_dir("af_callable"), DAY, 7)
    versions = dags.CALLABLE_VERSION
    versions["value"] = "checksum-1"
    first = run(dags.callable_dag, DAY)
    assert str(first.state) == "success"
    assert xcom("segops_callable", first.run_id, "return_value")["source_version"] == "checksum-1"
    assert len(sim.submissions("af_callable")) == 1
    # The same answer again: nothing submitted. A new one: ingested again, once.
    again = run(dags.callable_dag, DAY)
    assert xcom("segops_callable", again.run_id, "return_value")["unchanged"] is True
    assert len(sim.submissions("af_callable")) == 1
    write_day(data_dir("af_callable"), DAY, 9)
    versions["value"] = "checksum-2"
    changed = run(dags.callable_dag, DAY)
    summary = xcom("segops_callable", changed.run_id, "return_value")
    assert (summary["source_version"], summary["unchanged"]) == ("checksum-2", False)
    assert len(sim.submissions("af_callable")) == 2
    assert sim.rows("af_callable") == 9


@pytest.fixture(scope="module", autouse=True)
def _fresh_data_dirs() -> None:
    for datasource in (
        "af_sourced",
        "af_sourced_alias",
        "af_rolled",
        "af_emptied",
        "af_confirm",
        "af_callable",
    ):
        shutil.rmtree(data_dir(datasource), ignore_errors=True)
