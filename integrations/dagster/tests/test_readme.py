"""The README's snippets as a reader runs them: its Python example is examples/definitions.py, and its shell
commands run verbatim in examples/ against the emulator (the one `export` line, which points at a real
service, is replaced by the test's environment; `dagster dev` gets a free port). The install commands are
run by scripts/test-release.sh, and `segops serve --druid http://router:8888 …` names a real cluster."""

import contextlib
import importlib.util
import os
import re
import signal
import socket
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx

from .conftest import ROWS_PER_DAY, Service, write_day
from .test_cli import EXAMPLE, example_env

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def blocks(language: str) -> list[str]:
    """The README's fenced blocks of one language, in order."""
    return [body for lang, body in BLOCK.findall(README.read_text()) if lang == language]


def block_with(language: str, needle: str) -> str:
    (found,) = [b for b in blocks(language) if needle in b]
    return found


def commands(block: str) -> list[str]:
    """A shell block's commands, without comments."""
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]


def test_the_readme_example_is_the_example_file() -> None:
    example = EXAMPLE.read_text()
    assert block_with("python", "segops_partitioned_asset(") == example[example.index("import os") :]


def test_the_readme_commands_run_verbatim(service: Service, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    january = datetime(2026, 1, 1, tzinfo=timezone.utc)
    for day in range(31):
        write_day(data, january + timedelta(days=day))
    env = example_env(service, tmp_path / "dagster_home", data, "ds_readme")
    export, *rest = commands(block_with("bash", "dagster asset materialize"))
    # The export names what the test's environment gives (the service, its token, the data).
    assert re.findall(r"(\w+)=", export) == ["SEGOPS_URL", "SEGOPS_API_TOKEN", "EVENTS_DATA_DIR"]
    assert rest and all(c.startswith("dagster asset materialize -f definitions.py ") for c in rest)
    bin_dir = str(Path(sys.executable).parent)
    env["PATH"] = f"{bin_dir}:{env.get('PATH', '')}"
    for command in rest:
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=EXAMPLE.parent,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, f"{command}\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    # The first day by itself, then the month as one range (the first day reattaches): 31 Druid tasks.
    assert len(service.accepted("ds_readme")) == 31
    assert service.rows("ds_readme") == 31 * ROWS_PER_DAY


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_dagster_dev_serves_the_example_with_the_webserver_the_readme_installs(
    service: Service, tmp_path: Path
) -> None:
    install, dev = commands(block_with("bash", "dagster dev"))
    assert install == "pip install dagster-webserver"  # the floor environment's lock carries it
    assert dev == "dagster dev -f definitions.py"
    env = example_env(service, tmp_path / "dagster_home", tmp_path, "ds_readme_dev")
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"
    if importlib.util.find_spec("dagster_webserver") is None:
        # The newest environment's Dagster (1.13.29) has no webserver release to install beside it: what a
        # reader who skipped the install sees is the same advice.
        done = subprocess.run(
            ["bash", "-c", dev], cwd=EXAMPLE.parent, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode != 0
        assert '"pip install dagster-webserver"' in done.stdout + done.stderr
        return
    port = free_port()
    log = (tmp_path / "dev.log").open("w")
    server = subprocess.Popen(
        ["bash", "-c", f"exec {dev} -p {port}"],
        cwd=EXAMPLE.parent,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its webserver and daemon are children: stopped with it
    )
    try:
        answer = None
        for _ in range(600):  # state-based: until the webserver answers (or the process ends)
            assert server.poll() is None, (tmp_path / "dev.log").read_text()[-3000:]
            try:
                answer = httpx.get(f"http://127.0.0.1:{port}/server_info", timeout=2)
                break
            except httpx.TransportError:
                # Not up yet: wait a bounded while for the process to end (then the assert above reports it).
                with contextlib.suppress(subprocess.TimeoutExpired):
                    server.wait(timeout=0.5)
        assert answer is not None and answer.status_code == 200, (tmp_path / "dev.log").read_text()[-3000:]
        assert "dagster_webserver_version" in answer.json()
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        log.close()
