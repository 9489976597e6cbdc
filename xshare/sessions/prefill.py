"""The background pass: every agent's history on this machine measured into the count store and the
report's caches before anyone asks, so the first report after install reads them warm.

It is the report's own measuring (sessions/every_agent.py) with the default places and tokenizer, run with one
worker. Each adapter measures in parts where it can (`measure_in_parts`: Claude Code's transcripts, the bulk
of a history, a few project folders at a time), its caches and the count store written after each part, so a
pass that is killed resumes where it stopped.

One pass at a time per machine (a lock in the state folder; a second one returns at once), and none while
nothing changed: the stamp holds the setup it measured with and a fingerprint (every file's size and
modification time) of the history it found. The hook reads only the stamp (live/background.py).
"""

from __future__ import annotations

import os
import sys
import time
import zlib
from pathlib import Path

from xshare import METHOD_VERSION, __version__
from xshare.state.paths import state_dir
from xshare.state.store import atomic_write, dumps, locked, read_json

# the hook imports this module at SessionStart: what the pass alone needs is imported inside it

PART_BYTES = 64 << 20  # records measured (and their caches written) this much at a time, where an agent can


def stamp_file() -> Path:
    return state_dir() / "cache" / "background.json"


def lock_file() -> Path:
    return state_dir() / "cache" / "background.lock"


def setup() -> str:
    """What makes a pass's caches the ones a report will use: xshare's version and method, the interpreter
    (the plugin's own env has tiktoken, the python3 before it is built may not) and $XSHARE_VOCAB."""
    return "\0".join((__version__, str(METHOD_VERSION), sys.executable, os.environ.get("XSHARE_VOCAB", "")))


def read_stamp() -> dict:
    stamp = read_json(stamp_file())
    return stamp if isinstance(stamp, dict) else {}  # a damaged stamp is no stamp: the pass runs again


def fingerprint(homes: dict[str, list[str] | None]) -> str:
    """Every session file's path, size and modification time (a database's -wal too), as one checksum."""
    from xshare.sessions.registry import REGISTRY

    digest = 0
    for adapter in REGISTRY:
        given = homes.get(adapter.agent)
        if given == []:
            continue
        for path in sorted(adapter.discover(given)):
            for part in (path, path.with_name(path.name + "-wal")):
                try:
                    stat = part.stat()
                except OSError:
                    continue
                digest = zlib.crc32(f"{part}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode(), digest)
    return f"{digest:08x}"


def run_pass(homes: dict[str, list[str] | None] | None = None, part_bytes: int = PART_BYTES) -> str:
    """Measure the history into the caches unless another pass runs or nothing changed since the last;
    says which ("busy", "unchanged", "no tiktoken", "measured"). `homes` as a report's flags name them
    (by agent; None: the agent's usual places)."""
    from xshare.measure import tokens as tokenizers

    homes = homes or {}
    with locked(lock_file(), blocking=False) as mine:
        if not mine:
            return "busy"
        choice = tokenizers.choose()
        if choice.name != tokenizers.O200K:
            return "no tiktoken"  # the report that matters will count exactly: caches of estimates would not serve it
        found = fingerprint(homes)
        stamp = read_stamp()
        if stamp.get("setup") == setup() and stamp.get("fingerprint") == found:
            write_stamp(found)  # checked now: the hook waits a while before asking again
            return "unchanged"
        _measure(homes, choice, part_bytes)
        write_stamp(found)  # the history as found before measuring: what changed since is measured next time
        return "measured"


def write_stamp(found: str) -> None:
    atomic_write(stamp_file(), dumps({"setup": setup(), "fingerprint": found, "at": time.time()}))


def _measure(homes: dict, choice, part_bytes: int) -> None:
    from xshare.agents.common import counting as counter
    from xshare.agents.protocol import Looking
    from xshare.sessions.registry import REGISTRY

    counter.limit_workers(1)  # one low-priority process: never competing with a session's own hooks
    looking = Looking(homes, choice, None, True)
    for adapter in REGISTRY:
        if looking.given(adapter.agent) != []:
            adapter.measure_in_parts(looking, part_bytes)
