"""The hook's side of its warm worker: loading the tokenizer costs ~0.45 s of CPU, more than the rest of a
hook call many times over, and every tool batch of every session would pay it again.

The first hook call that has new bytes to count starts the worker (live/worker_server.py: detached, in its
own session) and hands it the transcripts; later calls only connect to its Unix socket, send the paths and
wait for "done". The worker runs `session_state.update`, the very reader and ledger the report runs (one
ledger), under the same per-session locks, so a call it serves equals one run in the hook's own process.
Its socket name holds a key of everything that could make it count differently (xshare's version, path and
install time, the ledger's method, the interpreter, the state folder, $XSHARE_VOCAB), so a changed setup
starts a new worker instead of asking an old one. Where it cannot run (no AF_UNIX, XSHARE_WORKER=0, a
failed start) the hook counts itself.

Only the user's own processes are ever trusted, either way: the hook sends paths only to a socket in a
folder of its own (0700) whose listening process is of its own uid (SO_PEERCRED / LOCAL_PEERCRED), else
it counts itself; the worker answers only its own uid.
"""

from __future__ import annotations

import _socket  # socket.py costs the hook 7 ms of imports for enum wrappers it does not need
import json
import os
import stat
import sys
import time
import zlib
from pathlib import Path

from xshare import METHOD_VERSION, __version__
from xshare.live.log import log
from xshare.state.paths import live_dir, state_dir
from xshare.state.private import private_folder

# the hook imports this module on every call with new bytes: subprocess and tempfile wait until needed

START_WAIT = 5.0  # seconds the first call waits for a new worker before counting itself
REPLY_WAIT = 600.0  # a first read of a long transcript takes seconds; the hook is async
_MAX_SOCKET_PATH = 100  # sun_path holds 104 (macOS) to 108 (Linux) bytes
_XUCRED_UID = slice(4, 8)  # struct xucred {u_int cr_version; uid_t cr_uid; ...} (macOS, FreeBSD)
_UCRED_UID = slice(4, 8)  # struct ucred {pid_t pid; uid_t uid; gid_t gid;} (Linux)


class ForeignWorker(Exception):
    """The socket, its folder or the process listening on it belongs to another account."""


def enabled() -> bool:
    return hasattr(_socket, "AF_UNIX") and os.environ.get("XSHARE_WORKER", "1") != "0"


def setup() -> str:
    """Everything that could make a worker count differently from the hook that asks it."""
    package = Path(__file__).resolve().parents[1]  # xshare/, as installed
    try:  # a reinstall rewrites the package's files: a worker running the old code is then not asked
        installed = str(os.stat(package / "__init__.py").st_mtime_ns)
    except OSError:
        installed = ""
    parts = (__version__, str(METHOD_VERSION), str(package), installed, sys.executable,
             str(state_dir().resolve()), os.environ.get("XSHARE_VOCAB", ""))
    return "\0".join(parts)


def _key() -> str:
    # crc32 only names the socket (hashlib's import costs the hook 7 ms); the worker compares the
    # whole setup string of every request, so a collision only costs a local count
    text = setup().encode()
    return f"{zlib.crc32(text):08x}{zlib.adler32(text):08x}"


def socket_path() -> Path:
    """In the live folder when its path fits a socket address, else in a private folder under /tmp."""
    name = f"worker-{_key()}.sock"
    path = live_dir() / name
    if len(os.fsencode(str(path))) <= _MAX_SOCKET_PATH:
        return path
    import tempfile

    return Path(tempfile.gettempdir()) / f"xshare-{os.getuid()}" / name


def own_uid() -> int | None:
    return os.getuid() if hasattr(os, "getuid") else None


def peer_uid(conn) -> int | None:
    """The uid of the process at the other end of a connected Unix socket; None where the system has
    no way to say (the folder's and the socket's owners are then all there is to go on)."""
    if hasattr(_socket, "SO_PEERCRED"):  # Linux
        return int.from_bytes(conn.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)[_UCRED_UID], sys.byteorder)
    if hasattr(_socket, "LOCAL_PEERCRED"):  # macOS, FreeBSD: level SOL_LOCAL, which is 0
        return int.from_bytes(conn.getsockopt(0, _socket.LOCAL_PEERCRED, 128)[_XUCRED_UID], sys.byteorder)
    return None


def own_private_folder(folder: Path) -> bool:
    """The socket's folder exists, is ours and is closed to others. A shared /tmp is hostile ground:
    another account may have made `xshare-<uid>` first, to listen there and answer "ok" to everything."""
    try:
        if folder == live_dir():
            private_folder(folder)  # the state folder's own rules: 0700, tightened if an old version left it open
            info = folder.stat()
        else:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            info = folder.lstat()  # a symlink here is someone else's idea
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != own_uid():
        return False
    if info.st_mode & 0o077:  # ours, but open (made under an odd umask): close it; a stranger's socket is
        try:                  # still caught by its owner and its peer's uid
            os.chmod(folder, 0o700)
        except OSError:
            return False
    return True


def ask(paths: list[Path]) -> bool:
    """Have the worker bring these transcripts up to date; False when it could not (count locally then)."""
    if not enabled():
        return False
    path = socket_path()
    if not own_private_folder(path.parent):
        _log_refusal(f"the worker's folder {path.parent} is not this user's alone")
        return False
    try:
        reply = _request(path, paths)
        if reply is None and _start(path):
            deadline = time.monotonic() + START_WAIT
            while reply is None and time.monotonic() < deadline:
                time.sleep(0.02)  # it loads the tokenizer before it listens
                reply = _request(path, paths)
    except ForeignWorker as refused:
        _log_refusal(str(refused))
        return False
    return bool(reply and reply.get("ok"))


def _log_refusal(why: str) -> None:
    log(f"not using the hook's worker: {why}; counting in the hook's own process")


def _check_peer(path: Path, client) -> None:
    """Raise ForeignWorker unless the socket file and the process listening on it are this user's."""
    info = os.lstat(path)
    if not stat.S_ISSOCK(info.st_mode) or info.st_uid != own_uid():
        raise ForeignWorker(f"{path.name} is not a socket of this user's")
    peer = peer_uid(client)
    if peer is not None and peer != own_uid():
        raise ForeignWorker(f"the process listening on {path.name} runs as uid {peer}")


def _request(path: Path, paths: list[Path]) -> dict | None:
    try:
        client = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            client.settimeout(REPLY_WAIT)
            client.connect(str(path))
            _check_peer(path, client)  # before a single path is sent
            client.sendall(json.dumps({"setup": setup(), "paths": [str(p) for p in paths]}).encode())
            client.shutdown(_socket.SHUT_WR)
            return json.loads(read_all(client))
        finally:
            client.close()
    except (OSError, ValueError):
        return None


def read_all(conn) -> bytes:
    chunks = []
    while chunk := conn.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def _start(path: Path) -> bool:
    """Start a worker in its own session, so it outlives this hook call."""
    import subprocess

    if not own_private_folder(path.parent):
        return False
    package_parent = str(Path(__file__).resolve().parents[2])
    code = f"import sys; sys.path.insert(0, {package_parent!r}); from xshare.live.worker_server import serve; serve()"
    try:
        subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
    except OSError:
        return False
    return True
