"""The hook's warm worker: it serves the same update (one ledger), exits when idle, and the hook counts
itself whenever the worker cannot help."""

from __future__ import annotations

import os
import random
import socket
import time
from pathlib import Path

import pytest

from tests.conftest import append_in_pieces, hook_on, session_json
from xshare.demo import write_demo_corpus
from xshare.live import worker
from xshare.state.paths import state_dir

pytestmark = pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no Unix sockets on this platform")


def worker_pid() -> int | None:
    pid_file = worker.socket_path().with_suffix(".pid")
    return int(pid_file.read_text()) if pid_file.exists() else None


def wait_gone(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:  # the worker is this test process's child here: reap it, or a zombie would look alive
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return True
        except ChildProcessError:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return True
        time.sleep(0.05)
    return False


@pytest.fixture
def worker_on(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("XSHARE_WORKER", "1")
    monkeypatch.setenv("XSHARE_WORKER_IDLE", "4")
    yield
    pid = worker_pid()
    if pid is not None:
        assert wait_gone(pid, 120), "the worker did not exit when idle"


def test_the_worker_serves_the_hook_and_equals_the_retrospective_row(capsys, tmp_path: Path, worker_on):
    source = next(p for p in write_demo_corpus(tmp_path / "demo").rglob("*.jsonl") if not p.name.startswith("agent-"))
    target = tmp_path / "live" / "projects" / source.parent.name / source.name
    served_by = set()
    for _ in append_in_pieces(source, target, random.Random(3), 8):
        hook_on(target)
        served_by.add(worker_pid())
    assert len(served_by) == 1 and None not in served_by, "one worker served every call"
    assert worker.socket_path().exists()
    assert session_json(capsys, target.stem) == session_json(capsys, str(target))
    assert not (state_dir() / "logs" / "hook.log").exists()


def wait_for(found, seconds: float):
    """What `found` returns once it is something, or None at the deadline (a busy machine's worker takes longer
    than the hook's own wait to load its tokenizer: the hook then counts itself, and the worker comes later)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = found()
        if value is not None:
            return value
        time.sleep(0.05)
    return found()


def test_the_worker_exits_when_idle_and_removes_its_socket(tmp_path: Path, worker_on):
    source = next(write_demo_corpus(tmp_path / "demo").rglob("*.jsonl"))
    hook_on(source)
    pid = wait_for(worker_pid, 120)
    assert pid is not None, "no worker started"
    assert wait_gone(pid, 120), "the worker did not exit when idle"
    # it removes its socket before it exits; the deadline only covers a file system slow to show it
    assert wait_for(lambda: None if worker.socket_path().exists() else True, 30), "the socket outlived the worker"


def test_a_stale_socket_file_is_replaced_by_a_new_worker(capsys, tmp_path: Path, worker_on):
    source = next(p for p in write_demo_corpus(tmp_path / "demo").rglob("*.jsonl") if not p.name.startswith("agent-"))
    stale = worker.socket_path()
    stale.parent.mkdir(parents=True, exist_ok=True)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as dead:
        dead.bind(str(stale))  # bound, never listening: what a killed worker leaves behind
    hook_on(source)
    assert worker_pid() is not None
    assert session_json(capsys, source.stem) == session_json(capsys, str(source))


def test_without_a_worker_the_hook_counts_itself(capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("XSHARE_WORKER", "1")
    monkeypatch.setattr(worker, "_start", lambda path: False)  # a worker that cannot start
    source = next(p for p in write_demo_corpus(tmp_path / "demo").rglob("*.jsonl") if not p.name.startswith("agent-"))
    hook_on(source)
    assert worker_pid() is None
    assert session_json(capsys, source.stem) == session_json(capsys, str(source))


def test_a_long_state_folder_puts_the_socket_in_a_private_temp_folder(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("XSHARE_HOME", str(tmp_path / ("x" * 120)))
    path = worker.socket_path()
    assert len(str(path)) <= 108 and path.parent.name == f"xshare-{os.getuid()}"
    monkeypatch.setenv("XSHARE_VOCAB", "/elsewhere/o200k_base.tiktoken")
    assert worker.socket_path() != path, "another vocabulary is another worker"


@pytest.mark.parametrize("setting", ["abc", "-1", "nan", "0", "inf", "1e308", ""])
def test_a_bad_idle_setting_is_one_log_line_and_the_default(monkeypatch, setting: str):
    from xshare.live import worker_server

    monkeypatch.setenv("XSHARE_WORKER_IDLE", setting)
    assert worker_server.idle_seconds() == worker_server.IDLE_SECONDS
    logged = (state_dir() / "logs" / "hook.log").read_text().splitlines()
    assert len(logged) == 2 and logged[0].startswith("--- ")  # the log's stamp, then one line
    assert logged[1].startswith(f"XSHARE_WORKER_IDLE={setting!r} is not a number of seconds")


def test_a_good_idle_setting_is_kept_silently(monkeypatch):
    from xshare.live import worker_server

    monkeypatch.setenv("XSHARE_WORKER_IDLE", "2.5")
    assert worker_server.idle_seconds() == 2.5
    assert not (state_dir() / "logs" / "hook.log").exists()


def test_a_worker_started_with_a_bad_idle_setting_serves(capsys, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("XSHARE_WORKER", "1")
    monkeypatch.setenv("XSHARE_WORKER_IDLE", "nan")
    source = next(p for p in write_demo_corpus(tmp_path / "demo").rglob("*.jsonl") if not p.name.startswith("agent-"))
    hook_on(source)
    pid = worker_pid()
    try:
        assert pid is not None and worker.socket_path().exists()  # it lives on the default, not dead at once
        assert session_json(capsys, source.stem) == session_json(capsys, str(source))
        assert "XSHARE_WORKER_IDLE='nan'" in (state_dir() / "logs" / "hook.log").read_text()
    finally:
        if pid is not None:
            os.kill(pid, 15)  # it would wait the default ten minutes
            assert wait_gone(pid, 15)
