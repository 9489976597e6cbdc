"""The hook's worker trusts no other account and keeps no session waiting for another.

A socket in a folder another account made (the shared temp folder, when the state folder's path is
too long for a socket), or one whose listening process runs as another uid, is never sent a path: the
hook counts in its own process, with the same figures. The worker answers only its own uid. As root,
the impostor is a real process of `nobody`; elsewhere the uid check is faked."""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import select
import shutil
import socket
import stat
import tempfile
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import hook_on, session_json
from tests.live.test_worker import wait_gone, worker_on, worker_pid  # noqa: F401  (worker_on: fixture)
from xshare.demo import write_demo_corpus
from xshare.live import worker, worker_server
from xshare.state.paths import file_name, line_file, live_dir, state_dir
from xshare.state.store import locked

pytestmark = pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no Unix sockets on this platform")


def _nobody() -> tuple[int, int] | None:
    try:
        entry = pwd.getpwnam("nobody")
    except KeyError:
        return None
    return entry.pw_uid, entry.pw_gid


NOBODY = _nobody() if hasattr(os, "geteuid") and os.geteuid() == 0 else None
as_root = pytest.mark.skipif(NOBODY is None, reason="a real second account needs root (setuid to nobody)")


@pytest.fixture
def transcripts(tmp_path: Path) -> list[Path]:
    corpus = write_demo_corpus(tmp_path / "demo")
    return sorted(path for path in corpus.rglob("*.jsonl") if not path.name.startswith("agent-"))


@pytest.fixture(autouse=True)
def shared_tmp(monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder like /tmp (world-writable, sticky) that only this test uses, as tempfile's temp folder
    (where the socket goes when the state folder's path is too long, as pytest's are)."""
    folder = Path(tempfile.mkdtemp(prefix="xshare-test-shared-", dir="/tmp"))
    folder.chmod(0o1777)
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    monkeypatch.setenv("TMPDIR", str(folder))  # the worker's process finds it too
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def hook_log() -> str:
    log = state_dir() / "logs" / "hook.log"
    return log.read_text() if log.exists() else ""


@contextlib.contextmanager
def impostor(bind_at: Path, make_folder: bool):
    """A process of `nobody` listening at `bind_at` that answers "ok" to anything; yields a dict filled,
    once it stopped, with the connections it took and the request bytes it was sent."""
    stop_r, stop_w = os.pipe()
    result_r, result_w = os.pipe()
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover  (the child)
        try:
            for fd in (stop_w, result_r, ready_r):  # else the parent closing its ends would not be seen
                os.close(fd)
            os.setgroups([])
            os.setgid(NOBODY[1])
            os.setuid(NOBODY[0])
            os.umask(0)
            if make_folder:
                bind_at.parent.mkdir(mode=0o700)  # first to the name, as private as the real one
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.bind(str(bind_at))
            server.listen(4)
            server.settimeout(0.05)
            os.write(ready_w, b"1")
            taken = sent = 0
            while not select.select([stop_r], [], [], 0)[0]:
                try:
                    conn, _ = server.accept()
                except OSError:
                    continue
                taken += 1
                with conn:
                    conn.settimeout(2)
                    with contextlib.suppress(OSError):
                        sent += len(conn.recv(65536))
                        conn.sendall(b'{"ok": true}')  # the forged answer
            os.write(result_w, json.dumps({"taken": taken, "sent": sent}).encode())
        finally:
            os._exit(0)
    for fd in (stop_r, result_w, ready_w):
        os.close(fd)
    found: dict = {}
    try:
        assert select.select([ready_r], [], [], 20)[0] and os.read(ready_r, 1) == b"1", "the impostor did not start"
        yield found
    finally:
        os.close(stop_w)
        os.waitpid(pid, 0)
        found.update(json.loads(os.read(result_r, 4096) or b"{}"))
        os.close(result_r)
        os.close(ready_r)


@as_root
def test_a_folder_another_account_made_in_the_temp_folder_is_never_used(
        capsys, tmp_path: Path, monkeypatch, transcripts, shared_tmp):
    monkeypatch.setenv("XSHARE_WORKER", "1")
    monkeypatch.setenv("XSHARE_HOME", str(tmp_path / ("long-" * 24)))  # too long for a socket address
    path = worker.socket_path()
    assert path.parent.parent == shared_tmp
    with impostor(path, make_folder=True) as seen:
        hook_on(transcripts[0])
    assert seen == {"taken": 0, "sent": 0}, "not a word to the impostor"
    assert session_json(capsys, transcripts[0].stem) == session_json(capsys, str(transcripts[0]))
    assert "not this user's alone" in hook_log()


@as_root
def test_a_socket_whose_listener_is_another_account_is_never_sent_a_path(
        capsys, monkeypatch, transcripts, shared_tmp):
    monkeypatch.setenv("XSHARE_WORKER", "1")
    path = worker.socket_path()
    path.parent.mkdir(parents=True, mode=0o700)  # ours (the live folder, or xshare-<uid> in the temp folder)
    with impostor(shared_tmp / "planted.sock", make_folder=False) as seen:
        os.rename(shared_tmp / "planted.sock", path)  # our folder, our file even: only its listener is foreign
        os.chown(path, os.getuid(), os.getgid())
        hook_on(transcripts[0])
    assert seen["sent"] == 0, "connected, but no path was sent"
    assert session_json(capsys, transcripts[0].stem) == session_json(capsys, str(transcripts[0]))
    assert f"runs as uid {NOBODY[0]}" in hook_log()


def serve_in_a_thread(bind_at: Path, monkeypatch) -> tuple[threading.Thread, list]:
    """The worker's accept loop on `bind_at`, answering "ok" to what it handles (recorded)."""
    handled: list = []
    monkeypatch.setattr(worker_server, "_handle", lambda data: handled.append(data) or {"ok": True})
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(bind_at))
    os.chmod(bind_at, 0o777)  # reachable by anyone: only the worker's own check is left to refuse them
    server.listen(4)
    server.settimeout(1.0)
    thread = threading.Thread(target=lambda: (worker_server._serve_until_idle(server), server.close()))
    thread.start()
    return thread, handled


def ask_raw(path: Path) -> bytes:
    """The worker's answer to a request; nothing when it hung up, before or after the request."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(10)
        client.connect(str(path))
        try:
            client.sendall(json.dumps({"setup": "", "paths": ["/a/transcript.jsonl"]}).encode())
            client.shutdown(socket.SHUT_WR)
            return worker.read_all(client)
        except (BrokenPipeError, ConnectionResetError):
            return b""


@as_root
def test_the_worker_answers_only_its_own_uid(monkeypatch, shared_tmp):
    path = shared_tmp / "worker.sock"
    thread, handled = serve_in_a_thread(path, monkeypatch)
    reply_r, reply_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover  (the child, as nobody)
        try:
            os.setgroups([])
            os.setgid(NOBODY[1])
            os.setuid(NOBODY[0])
            os.write(reply_w, b"answer " + ask_raw(path))
        except OSError as error:
            os.write(reply_w, f"error {error}".encode())
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    os.close(reply_w)
    assert os.read(reply_r, 4096) == b"answer ", "nobody's request got no answer"
    os.close(reply_r)
    assert handled == []
    assert json.loads(ask_raw(path)) == {"ok": True} and len(handled) == 1, "our own uid is served"
    thread.join(15)
    assert not thread.is_alive()


def test_a_foreign_peer_is_refused_both_ways_where_no_second_account_exists(
        capsys, monkeypatch, tmp_path: Path, transcripts, worker_on):  # noqa: F811
    path = tmp_path / "w.sock"
    stranger = (worker.own_uid() or 0) + 4242
    monkeypatch.setattr(worker, "peer_uid", lambda conn: stranger)
    thread, handled = serve_in_a_thread(path, monkeypatch)
    assert ask_raw(path) == b"" and handled == [], "the worker answers no other uid"
    thread.join(15)
    hook_on(transcripts[0])  # it starts a real worker (a process of its own), then will not talk to it
    assert f"runs as uid {stranger}" in hook_log()
    assert session_json(capsys, transcripts[0].stem) == session_json(capsys, str(transcripts[0]))


def test_one_sessions_held_lock_never_delays_another_sessions_update(capsys, transcripts, worker_on):  # noqa: F811
    waiting, other = transcripts[0], transcripts[1]
    first = threading.Thread(target=hook_on, args=(waiting,))
    second = threading.Thread(target=hook_on, args=(other,))
    with locked(live_dir() / f"{file_name(waiting.stem)}.lock"):  # a slow update of that session, elsewhere
        first.start()
        deadline = time.monotonic() + 20
        while worker_pid() is None and time.monotonic() < deadline:
            time.sleep(0.05)  # the worker is up and holds the first session's request
        time.sleep(0.3)
        second.start()
        second.join(30)
        served_while_held = not second.is_alive() and line_file(other.stem).exists()
        assert first.is_alive(), "the first session's update waits for its own lock"
    first.join(60)
    second.join(60)
    assert served_while_held, "another session's update waited for a lock that was not its own"
    assert not first.is_alive() and not second.is_alive()
    for path in (waiting, other):
        assert session_json(capsys, path.stem) == session_json(capsys, str(path))
    assert hook_log() == "", "both were served by the worker"


def test_a_stale_pid_file_is_replaced_and_one_that_cannot_be_written_stops_nothing(
        capsys, transcripts, worker_on):  # noqa: F811
    pid_file = worker.socket_path().with_suffix(".pid")
    pid_file.parent.mkdir(mode=0o700)
    pid_file.write_text("999999999")  # a killed worker's
    pid_file.chmod(0o644)  # as an earlier version wrote it
    hook_on(transcripts[0])
    assert worker_pid() not in (None, 999999999)
    assert stat.S_IMODE(pid_file.stat().st_mode) == 0o600
    assert session_json(capsys, transcripts[0].stem) == session_json(capsys, str(transcripts[0]))
    pid = worker_pid()
    assert wait_gone(pid, 15)

    pid_file.mkdir()  # something that is not a file where the pid goes: the worker serves anyway
    hook_on(transcripts[1])
    assert worker.socket_path().exists() and hook_log() == ""
    assert session_json(capsys, transcripts[1].stem) == session_json(capsys, str(transcripts[1]))
    deadline = time.monotonic() + 15
    while worker.socket_path().exists() and time.monotonic() < deadline:
        time.sleep(0.1)  # it leaves when idle, its socket with it
    pid_file.rmdir()
    assert not worker.socket_path().exists()
