"""The warm worker itself (live/worker.py is the hook's side): a small local server that loads the tokenizer,
the count store and the reader once, then runs the hook's update (live/session_state.py) for each request on
a thread of its own (one session's slow update never delays another's), until XSHARE_WORKER_IDLE seconds
(default 600) pass without one. It answers only its own uid."""

from __future__ import annotations

import json
import math
import os
import socket
import threading
import time
from pathlib import Path

from xshare.agents.claude_code import transcript  # noqa: F401  (the reader's import cost, paid before any request)
from xshare.live import worker
from xshare.live.log import log, log_exception
from xshare.live.session_state import update
from xshare.measure import tokens
from xshare.state.store import atomic_write, locked

IDLE_SECONDS = 600.0
LONGEST_IDLE = 7 * 86400.0  # past a week a setting is a typo (and past ~1e9 the socket refuses the timeout)
AT_ONCE = 16  # requests served at a time; more are told "busy" and their hooks count themselves


def serve() -> None:
    """The worker's life: a thread per request (updates take per-session locks), until idle."""
    path = worker.socket_path()
    if not worker.own_private_folder(path.parent):
        return  # never listen where another account could have put, or could reach, the socket
    idle = idle_seconds()
    with locked(path.with_suffix(".lock"), blocking=False) as mine:
        if not mine:  # another worker with this key is starting or running
            return
        _warm_up()
        try:  # for benches and tests only: a stale one (a killed worker's) is replaced, a broken one ignored
            path.with_suffix(".pid").unlink(missing_ok=True)  # so that it is new, hence 0600, wherever it is
            atomic_write(path.with_suffix(".pid"), str(os.getpid()).encode())
        except OSError:
            pass
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
            if path.exists() or path.is_symlink():
                path.unlink()  # a stale socket of a worker that died: ours now, the lock says so
            old_mask = os.umask(0o077)
            try:
                server.bind(str(path))
            finally:
                os.umask(old_mask)
            server.listen(16)
            server.settimeout(idle)
            try:
                _serve_until_idle(server)
            finally:
                path.unlink(missing_ok=True)
                path.with_suffix(".pid").unlink(missing_ok=True)


def idle_seconds() -> float:
    """XSHARE_WORKER_IDLE when it is a number of seconds the socket can wait (over 0, up to a week); any
    other setting is one line in the hook's log and the default (a worker that died of it at once would
    leave every hook waiting for it, silently)."""
    setting = os.environ.get("XSHARE_WORKER_IDLE")
    if setting is None:
        return IDLE_SECONDS
    try:
        idle = float(setting)
    except ValueError:
        idle = math.nan
    if math.isfinite(idle) and 0 < idle <= LONGEST_IDLE:
        return idle
    log(f"XSHARE_WORKER_IDLE={setting[:40]!r} is not a number of seconds over 0 and up to {LONGEST_IDLE:.0f}; "
        f"the worker waits the default {IDLE_SECONDS:.0f}")
    return IDLE_SECONDS


def _warm_up() -> None:
    """Load what a hook call needs once: the tokenizer, the count store and the reader."""

    counter = tokens.Counter(tokens.choose())
    counter.load()  # the tokenizer: a live session's new texts are mostly not in the count store
    if counter.store is not None:
        len(counter.store)  # loaded once; each update then only takes in what others appended


def _serve_until_idle(server) -> None:
    """Accept until `idle` passes with no request and none in progress. Each request gets its own
    thread (one session's slow update, or a lock another process holds, never delays another session);
    past AT_ONCE at a time a request is told "busy" and its hook counts itself."""
    slots = threading.BoundedSemaphore(AT_ONCE)
    running: list[threading.Thread] = []
    while True:
        try:
            conn, _ = server.accept()
        except TimeoutError:
            running = [thread for thread in running if thread.is_alive()]
            if not running:
                return
            continue
        if not _same_user(conn):
            conn.close()  # another account's process: not a word, not a path, not a count
            continue
        if not slots.acquire(blocking=False):
            _answer(conn, lambda data: {"ok": False, "busy": True}, None)
            continue
        thread = threading.Thread(target=_answer, args=(conn, _handle, slots), daemon=False)
        thread.start()
        running = [thread, *(other for other in running if other.is_alive())]


def _same_user(conn) -> bool:
    try:
        peer = worker.peer_uid(conn)
    except OSError:
        return False
    return peer is None or peer == worker.own_uid()  # None: the socket's 0600 mode is then the only door


def _answer(conn, handle, slots) -> None:
    try:
        with conn:
            conn.settimeout(30)
            conn.sendall(json.dumps(handle(worker.read_all(conn))).encode())
    except OSError:
        pass  # a client that went away: its next call asks again
    finally:
        if slots is not None:
            slots.release()


def _handle(data: bytes) -> dict:
    started = time.process_time()
    try:
        request = json.loads(data)
    except ValueError:  # nothing, or not JSON: a client that went away (or was not ours) before asking
        return {"ok": False}
    try:
        if not isinstance(request, dict) or request.get("setup") != worker.setup():
            return {"ok": False}  # another setup under the same socket name: the hook counts itself
        for path in request["paths"]:
            update(Path(path))
    except Exception:  # noqa: BLE001  (the hook then counts itself; the log says why)
        log_exception()
        return {"ok": False}
    return {"ok": True, "cpu": time.process_time() - started}
