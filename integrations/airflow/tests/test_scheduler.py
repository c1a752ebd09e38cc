"""The provider under Airflow's real processes — what `airflow standalone` runs: api-server (the Task
Execution API the workers talk to), scheduler (LocalExecutor), dag-processor and triggerer, on a SQLite
metadata DB. The DAGs (tests/scheduler_dags) are unpaused at creation and catch up on their own."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any, TypeVar

import pytest
from segops_test_support import daily_template

from conftest import (
    AIRFLOW_3,
    DATA_DIR,
    HERE,
    WORK,
    Segops,
    Sim,
    airflow_env,
    lineage_events,
    query,
    write_corrupt_day,
    write_day,
)
from segops_airflow.hooks.segops import SegopsHook
from segops_airflow.source_version import ASSET_EVENTS_PREFIX, asset_events_version

T = TypeVar("T")
HOME = WORK / "airflow-scheduler"
DB = HOME / "airflow.db"
LINEAGE = WORK / "lineage-scheduler.jsonl"
# Airflow 2.10's scheduler parses the DAGs itself and its workers need no API server.
PROCESSES = (
    ("api-server", "scheduler", "dag-processor", "triggerer") if AIRFLOW_3 else ("scheduler", "triggerer")
)
EXPECTED_RUNS = {
    "segops_slow": 3,
    "segops_gate": 1,
    "segops_sched_retry": 1,
    "segops_cleared": 1,
    "segops_upstream": 1,
    "segops_consumer": 1,
    "segops_timeout_deferred": 1,
    "segops_timeout_worker": 1,
    "segops_poison": 1,
}
CLEARED_DIR = Path(f"{DATA_DIR}-af_cleared")
CONSUMER_DIR = Path(f"{DATA_DIR}-af_consumer")
CLEAR_DEFERRED_DIR = Path(f"{DATA_DIR}-af_clear_deferred")
TIMEOUT_DIR = Path(f"{DATA_DIR}-af_timeout")
POISON_DIR = Path(f"{DATA_DIR}-af_poison")
#: segops serve's `--poison-after` (its default): Druid attempts of a deterministic failure per input.
POISON_AFTER = 3


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def poll(what: str, check: Callable[[], T | None], timeout: float, every: float = 0.25) -> T:
    """The first truthy `check()`, asked every `every` s until `timeout` (then the test fails naming `what`)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(every)


@pytest.fixture(scope="module")
def airflow(migrated_db: Path) -> Iterator[dict[str, str]]:
    HOME.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(migrated_db, DB)
    api_port = free_port()
    env = {
        **os.environ,
        **airflow_env(HOME, HERE / "scheduler_dags", LINEAGE),
        "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
        "AIRFLOW__CORE__PARALLELISM": "4",
        "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",
        "AIRFLOW__API__HOST": "127.0.0.1",
        "AIRFLOW__API__PORT": str(api_port),
        "AIRFLOW__API__WORKERS": "1",
        "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://127.0.0.1:{api_port}/execution/",
        # One secret for every process: the scheduler signs the workers' tokens, the api-server checks them.
        "AIRFLOW__API_AUTH__JWT_SECRET": "segops-test-jwt-secret",
        "AIRFLOW__API__SECRET_KEY": "segops-test-secret-key",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "True",
        "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(free_port()),
        "AIRFLOW__LOGGING__TRIGGER_LOG_SERVER_PORT": str(free_port()),
        "AIRFLOW__TRIGGERER__DEFAULT_CAPACITY": "50",
        # The scheduler resumes a deferred task whose timeout passed at this check (default every 15 s).
        "AIRFLOW__SCHEDULER__TRIGGER_TIMEOUT_CHECK_INTERVAL": "1",
        # A worker's calls to the api-server (one process, SQLite) time out after 5 s by default: on a loaded
        # machine, with ten tasks starting at once, a worker then dies before its task starts.
        "AIRFLOW__WORKERS__EXECUTION_API_TIMEOUT": "60",
    }
    if not AIRFLOW_3:
        # Airflow 2.10 refuses LocalExecutor on SQLite unless told (as its own test suite does): the
        # tasks here write little, and one file keeps the test free of a database server.
        env["_AIRFLOW__SKIP_DATABASE_EXECUTOR_COMPATIBILITY_CHECK"] = "1"
    airflow_bin = str(Path(sys.executable).with_name("airflow"))
    write_day(CLEARED_DIR, "2026-03-05", 10)
    write_day(CONSUMER_DIR, "2026-03-06", 12)
    write_day(CLEAR_DEFERRED_DIR, "2026-03-10", 8)
    write_day(TIMEOUT_DIR, "2026-03-12", 9)
    write_corrupt_day(POISON_DIR, "2026-03-14")
    airflow_cli(env, "variables", "set", "af_cleared_version", "upstream-run-1")
    procs: dict[str, subprocess.Popen[bytes]] = {}
    try:
        for name in PROCESSES:
            procs[name] = subprocess.Popen(
                [airflow_bin, name],
                env=env,
                stdout=(WORK / f"airflow-{name}.log").open("wb"),
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: its workers are stopped with it
            )
        yield env
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for name, proc in procs.items():
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                print(f"{name} did not stop on SIGTERM within 30 s; killed")


def airflow_cli(env: dict[str, str], *args: str) -> str:
    """An `airflow …` command against the scheduler's metadata DB; its output."""
    done = subprocess.run(
        [str(Path(sys.executable).with_name("airflow")), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout


def asset_event_extras(uri: str) -> list[dict[str, Any]]:
    rows = query(
        DB,
        "select e.extra from asset_event e join asset a on a.id = e.asset_id where a.uri = ? order by e.id",
        uri,
    )
    return [json.loads(extra) for (extra,) in rows]


def dag_runs() -> list[tuple[str, str, str]]:
    if not DB.exists():
        return []
    return query(DB, "select dag_id, run_id, state from dag_run order by dag_id, run_id")


def task_instances(dag_id: str) -> list[tuple[str, str, int]]:
    return query(
        DB, "select run_id, state, try_number from task_instance where dag_id = ? order by run_id", dag_id
    )


def xcom(dag_id: str, run_id: str, key: str) -> Any:
    rows = query(
        DB,
        "select value from xcom where dag_id = ? and run_id = ? and task_id = 'ingest' and key = ?",
        dag_id,
        run_id,
        key,
    )
    return json.loads(rows[0][0]) if rows else None


def task_log(dag_id: str, run_id: str, attempt: int) -> str:
    path = (
        HOME / "logs" / f"dag_id={dag_id}" / f"run_id={run_id}" / "task_id=ingest" / f"attempt={attempt}.log"
    )
    return path.read_text()


def trigger_logs(dag_id: str, run_id: str) -> str:
    """Every trigger log of the task instance (the triggerer writes them beside the task's)."""
    folder = HOME / "logs" / f"dag_id={dag_id}" / f"run_id={run_id}" / "task_id=ingest"
    return "\n".join(p.read_text() for p in sorted(folder.glob("*.trigger.*.log")))


def killed(sim: Sim, druid_task_id: str) -> bool:
    """Whether Druid's task ended other than by succeeding (a shutdown fails it)."""
    return "failed" in sim.task_events(druid_task_id)


def _processes_alive(env: dict[str, str]) -> None:
    assert env  # the fixture started them; a crash shows up as runs that never finish


def test_the_scheduler_runs_the_dags_deferred_while_druid_works(
    airflow: dict[str, str], segops: Segops, sim: Sim
) -> None:
    _processes_alive(airflow)

    # While Druid runs the ingestion, the task is DEFERRED (no worker slot): seen in the metadata DB, with
    # segops reporting the partition RUNNING at Druid and the emulator's task not yet succeeded.
    def deferred_while_running() -> dict[str, Any] | None:
        for run_id, state, _ in task_instances("segops_slow") if DB.exists() else []:
            if state != "deferred":
                continue
            job_id = xcom("segops_slow", run_id, "job_id")
            if not job_id:
                continue
            partition = segops.job(job_id)["partitions"][0]
            events = sim.task_events(partition["druidTaskId"] or "")
            if partition["druidState"] == "RUNNING" and events and events[-1] == "running":
                return {"run_id": run_id, "job_id": job_id, "druid_task_id": partition["druidTaskId"]}
        return None

    seen = poll("a segops_slow task deferred while its Druid task runs", deferred_while_running, timeout=180)

    def all_ended() -> list[tuple[str, str, str]] | None:
        runs = dag_runs()
        counts = {dag: sum(1 for d, _, _ in runs if d == dag) for dag in EXPECTED_RUNS}
        ended = all(state in ("success", "failed") for _, _, state in runs)
        return runs if counts == EXPECTED_RUNS and ended else None

    runs = poll("every DAG run to end", all_ended, timeout=240, every=0.5)
    by_dag: dict[str, list[tuple[str, str]]] = {}
    for dag_id, run_id, state in runs:
        by_dag.setdefault(dag_id, []).append((run_id, state))

    # Three runs of segops_slow, each its own partition, each done; one Druid submission each.
    assert [state for _, state in by_dag["segops_slow"]] == ["success"] * 3
    assert [(s, t) for _, s, t in task_instances("segops_slow")] == [("success", 1)] * 3
    submissions = sim.submissions("af_slow")
    assert len(submissions) == 3
    assert all(s["accepted"] for s in submissions)
    pushed = sorted(xcom("segops_slow", run_id, "druid_task_ids")[0] for run_id, _ in by_dag["segops_slow"])
    assert pushed == sorted(s["id"] for s in submissions)
    assert seen["druid_task_id"] in pushed
    # The trigger ran in the triggerer process: its log sits beside the task's.
    run_id = seen["run_id"]
    trigger_logs = list(
        (HOME / "logs" / "dag_id=segops_slow" / f"run_id={run_id}" / "task_id=ingest").glob("*.trigger.*.log")
    )
    assert trigger_logs
    fired = (
        "Trigger fired event" if AIRFLOW_3 else "fired: TriggerEvent"
    )  # as each version's triggerer says it
    assert any(fired in p.read_text() and seen["job_id"] in p.read_text() for p in trigger_logs)
    log = task_log("segops_slow", run_id, 1)
    assert "deferring: the triggerer long-polls segops" in log
    assert "done and audited" in log

    # The declared druid:// asset got one event per run (no run-time asset creation, no race).
    uri = f"druid://{sim.host}/af_slow"
    events = query(
        DB, "select e.extra from asset_event e join asset a on a.id = e.asset_id where a.uri = ?", uri
    )
    assert len(events) == 3
    assert sorted(json.loads(extra)["druid_task_ids"][0] for (extra,) in events) == pushed
    complete = [
        e
        for e in lineage_events(LINEAGE)
        if e["eventType"] == "COMPLETE" and e["job"]["name"] == "segops_slow.ingest"
    ]
    assert len(complete) == 3
    assert {(e["outputs"][0]["namespace"], e["outputs"][0]["name"]) for e in complete} == {
        (f"druid://{sim.host}", "af_slow")
    }

    # The missing day: Druid SUCCEEDED with 0 rows, the min-rows gate failed the partition; in the task log.
    ((gate_run, gate_state),) = by_dag["segops_gate"]
    assert gate_state == "failed"
    log = task_log("segops_gate", gate_run, 1)
    assert "SegopsJobFailed" in log
    assert "data gate" in log
    assert "fewer than --min-rows 1" in log
    assert "rows: processed 0, with errors 0, unparseable 0, thrown away 0" in log

    # The forced retry: try 1 created the run and crashed, try 2 (a new worker process) reattached.
    ((retry_run, retry_state),) = by_dag["segops_sched_retry"]
    assert retry_state == "success"
    assert task_instances("segops_sched_retry") == [(retry_run, "success", 2)]
    assert "simulated crash after creating segops job" in task_log("segops_sched_retry", retry_run, 1)
    assert "already exists" in task_log("segops_sched_retry", retry_run, 2)
    assert [s["accepted"] for s in sim.submissions("af_sched_retry")] == [True]


def _cleared(env: dict[str, str], run_id: str, try_number: int) -> None:
    """Clears the segops_cleared task as a person does and waits until the scheduler has run it again."""
    airflow_cli(
        env, "tasks", "clear", "segops_cleared", "-t", "ingest", "-s", "2026-03-05", "-e", "2026-03-05", "-y"
    )
    poll(
        f"segops_cleared try {try_number} to succeed",
        lambda: task_instances("segops_cleared") == [(run_id, "success", try_number)],
        timeout=120,
        every=0.5,
    )


def test_a_cleared_task_reattaches_on_the_same_source_version_and_reingests_on_a_new_one(
    airflow: dict[str, str], sim: Sim
) -> None:
    def first_run() -> list[tuple[str, str, int]] | None:
        tis = task_instances("segops_cleared")
        return tis if tis and tis[0][1] in ("success", "failed") else None

    ((run_id, state, try_number),) = poll("the segops_cleared run", first_run, timeout=240, every=0.5)
    assert (state, try_number) == ("success", 1)
    (submitted,) = sim.submissions("af_cleared")
    assert sim.rows("af_cleared") == 10
    uri = f"druid://{sim.host}/af_cleared"
    assert [e["source_version"] for e in asset_event_extras(uri)] == ["upstream-run-1"]

    # Cleared with the same version (the file changed, the version says it did not): the task reattaches
    # to the done job, submits nothing and emits no asset event for its declared outlet.
    write_day(CLEARED_DIR, "2026-03-05", 16)
    _cleared(airflow, run_id, 2)
    assert sim.submissions("af_cleared") == [submitted]
    assert sim.rows("af_cleared") == 10
    assert len(asset_event_extras(uri)) == 1
    log = task_log("segops_cleared", run_id, 2)
    assert "was already done from the same source (source version upstream-run-1)" in log
    assert xcom("segops_cleared", run_id, "return_value")["unchanged"] is True

    # The upstream fixed the data and set the new version: cleared again, the day is ingested again.
    airflow_cli(airflow, "variables", "set", "af_cleared_version", "upstream-run-2")
    _cleared(airflow, run_id, 3)
    submissions = sim.submissions("af_cleared")
    assert len(submissions) == 2
    assert submissions[1]["accepted"]
    assert submissions[1]["id"] != submitted["id"]
    assert sim.rows("af_cleared") == 16
    assert [e["source_version"] for e in asset_event_extras(uri)] == ["upstream-run-1", "upstream-run-2"]
    summary = xcom("segops_cleared", run_id, "return_value")
    assert (summary["source_version"], summary["unchanged"]) == ("upstream-run-2", False)
    assert summary["druid_task_ids"] == [submissions[1]["id"]]


def test_a_run_triggered_by_an_asset_event_sends_the_events_digest(airflow: dict[str, str], sim: Sim) -> None:
    def consumed() -> list[tuple[str, str, str]] | None:
        runs = [r for r in dag_runs() if r[0] == "segops_consumer"]
        return runs if runs and runs[0][2] in ("success", "failed") else None

    ((_, run_id, state),) = poll("the segops_consumer run", consumed, timeout=240, every=0.5)
    assert state == "success"
    ((uri, name, timestamp, source_dag, source_run, source_task, source_map_index),) = query(
        DB,
        "select a.uri, " + ("a.name" if AIRFLOW_3 else "null") + ", e.timestamp, e.source_dag_id, "
        "e.source_run_id, e.source_task_id, e.source_map_index from asset_event e join asset a on "
        "a.id = e.asset_id where a.uri = ?",
        "file:///segops-test/upstream",
    )
    event = SimpleNamespace(
        asset=SimpleNamespace(uri=uri, name=name),
        timestamp=dt.datetime.fromisoformat(timestamp),
        source_dag_id=source_dag,
        source_run_id=source_run,
        source_task_id=source_task,
        source_map_index=source_map_index,
        partition_key=None,
    )
    expected = asset_events_version([event])
    assert expected is not None
    assert expected.startswith(ASSET_EVENTS_PREFIX)
    summary = xcom("segops_consumer", run_id, "return_value")
    assert (summary["source_version"], summary["unchanged"]) == (expected, False)
    (submitted,) = sim.submissions("af_consumer")
    assert summary["druid_task_ids"] == [submitted["id"]]
    assert sim.rows("af_consumer") == 12
    # segops holds the partition at that version: asked again with it, the job is answered done as it is
    # and nothing is submitted (another version, or none, would plan the partition anew).
    job, created = SegopsHook().create(
        "run",
        {
            "template": daily_template("af_consumer"),
            "interval": "2026-03-06T00:00:00+00:00/2026-03-07T00:00:00+00:00",
            "vars": {"dataDir": str(CONSUMER_DIR)},
            "sourceVersion": expected,
        },
    )
    assert (created, job["state"], job["id"]) == (False, "done", summary["job_id"])
    assert sim.submissions("af_consumer") == [submitted]


def test_a_task_cleared_while_deferred_leaves_its_druid_work_to_the_new_try(
    airflow: dict[str, str], segops: Segops, sim: Sim
) -> None:
    logical = "-l" if AIRFLOW_3 else "-e"  # Airflow 2.10 calls it the execution date
    airflow_cli(airflow, "dags", "trigger", "segops_clear_deferred", logical, "2026-03-10T00:00:00+00:00")

    def deferred_while_running() -> tuple[str, str, str] | None:
        for run_id, state, _ in task_instances("segops_clear_deferred"):
            job_id = xcom("segops_clear_deferred", run_id, "job_id")
            if state != "deferred" or not job_id:
                continue
            partition = segops.job(job_id)["partitions"][0]
            if partition["druidState"] == "RUNNING":
                return run_id, job_id, partition["druidTaskId"]
        return None

    run_id, job_id, druid_task_id = poll(
        "segops_clear_deferred deferred while its Druid task runs", deferred_while_running, timeout=120
    )
    airflow_cli(
        airflow,
        "tasks",
        "clear",
        "segops_clear_deferred",
        "-t",
        "ingest",
        "-s",
        "2026-03-10",
        "-e",
        "2026-03-10",
        "-y",
    )
    poll(
        "the cleared segops_clear_deferred task to end",
        lambda: [t for t in task_instances("segops_clear_deferred") if t[1] in ("success", "failed")],
        timeout=180,
        every=0.5,
    )
    assert task_instances("segops_clear_deferred") == [(run_id, "success", 2)]
    # The job ran once and finished: one Druid submission, never shut down, the job not canceled.
    assert [s["id"] for s in sim.submissions("af_clear_deferred")] == [druid_task_id]
    assert not killed(sim, druid_task_id)
    job = segops.job(job_id)
    assert (job["state"], job["canceled"]) == ("done", False)
    assert sim.rows("af_clear_deferred") == 8
    # The new try reattached to the same job: while it ran, or (a slow machine) just after it ended.
    assert "already exists and" in task_log("segops_clear_deferred", run_id, 2)
    if AIRFLOW_3:
        # Airflow did call the old try's on_kill for the clear (and the job above was not canceled). Its own
        # log line ("left running for the new try") is not always kept: the trigger's log ends with it.
        # Airflow 2.10 calls no trigger's on_kill: nothing there could cancel the job.
        assert "invoking on_kill" in trigger_logs("segops_clear_deferred", run_id)


@pytest.mark.parametrize("dag_id", ["segops_timeout_deferred", "segops_timeout_worker"])
def test_execution_timeout_leaves_the_druid_work_for_the_next_try(
    airflow: dict[str, str], segops: Segops, sim: Sim, dag_id: str
) -> None:
    def ended() -> list[tuple[str, str, int]] | None:
        tis = task_instances(dag_id)
        return tis if tis and tis[0][1] in ("success", "failed") else None

    ((run_id, state, tries),) = poll(f"the {dag_id} run", ended, timeout=300, every=0.5)
    # Timed out at least once (the Druid task outlasts execution_timeout), then a try found it done.
    assert state == "success"
    assert tries >= 2
    # Where the timeout struck depends on the machine (creating the job, or waiting for it): the tries
    # that timed out say so, each in its own log.
    timed_out = "\n".join(task_log(dag_id, run_id, n) for n in range(1, tries))
    if AIRFLOW_3 or dag_id == "segops_timeout_worker":
        assert "execution_timeout passed while segops job" in timed_out
        assert "keep running" in timed_out
    else:
        # Airflow 2.10 fails a resumed task past its execution_timeout before the operator runs again.
        assert "AirflowTaskTimeout" in timed_out
    # One Druid submission for every try, and it was never shut down.
    datasource = f"af_{dag_id.removeprefix('segops_')}"
    (submitted,) = sim.submissions(datasource)
    assert not killed(sim, submitted["id"])
    assert xcom(dag_id, run_id, "druid_task_ids") == [submitted["id"]]
    assert sim.rows(datasource) == 9
    # The last try reattached: it asked again and found the job, or (loaded machine) it was resumed by the
    # trigger's event of a deferral it inherited; either way it created nothing.
    last = task_log(dag_id, run_id, tries)
    assert re.search(r"segops job \S+ (already exists|done and audited)", last), last[-2000:]
    assert " created (" not in last


def test_a_corrupt_day_costs_poison_after_attempts_then_a_fixed_file_is_ingested_once(
    airflow: dict[str, str], segops: Segops, sim: Sim
) -> None:
    def ended() -> list[tuple[str, str, int]] | None:
        tis = task_instances("segops_poison")
        return tis if tis and tis[0][1] in ("success", "failed") else None

    # retries=2, yet the task failed on its first try: segops' poison rule was the retrying.
    ((run_id, state, tries),) = poll("the segops_poison run", ended, timeout=300, every=0.5)
    assert (state, tries) == ("failed", 1)
    attempts = sim.submissions("af_poison")
    assert len(attempts) == POISON_AFTER
    log = task_log("segops_poison", run_id, 1)
    assert "SegopsJobFailedOnInput" in log
    assert "not retried by Airflow" in log
    assert "Unable to parse row [this line is not json]" in log

    # The upstream fixed the file; a clear ingests it once (segops fingerprints the changed file).
    write_day(POISON_DIR, "2026-03-14", 15)
    airflow_cli(
        airflow,
        "tasks",
        "clear",
        "segops_poison",
        "-t",
        "ingest",
        "-s",
        "2026-03-14",
        "-e",
        "2026-03-14",
        "-y",
    )
    poll(
        "segops_poison try 2 to succeed",
        lambda: task_instances("segops_poison") == [(run_id, "success", 2)],
        timeout=180,
        every=0.5,
    )
    reloaded = sim.submissions("af_poison")[len(attempts) :]
    assert len(reloaded) == 1
    assert reloaded[0]["accepted"]
    assert sim.rows("af_poison") == 15

    # Cleared again with the file unchanged: nothing submitted, said so in the log.
    airflow_cli(
        airflow,
        "tasks",
        "clear",
        "segops_poison",
        "-t",
        "ingest",
        "-s",
        "2026-03-14",
        "-e",
        "2026-03-14",
        "-y",
    )
    poll(
        "segops_poison try 3 to succeed",
        lambda: task_instances("segops_poison") == [(run_id, "success", 3)],
        timeout=180,
        every=0.5,
    )
    assert len(sim.submissions("af_poison")) == POISON_AFTER + 1
    assert "was already done from the same source" in task_log("segops_poison", run_id, 3)
    assert sim.rows("af_poison") == 15
