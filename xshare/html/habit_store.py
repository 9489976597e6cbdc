"""Each session's habits summary (html/habits.py `session_habits`) for many sessions at once, for `xshare advice`
and the HTML index. The report's rows do not keep per-call detail, so each session is read again in detail as
its page reads it (Claude Code's transcripts by html/write.py `claude_data`; the others by their adapters'
`read` with ledgers). Only the small summaries are kept, in a side cache under each file's path, size and
modification time (and the method, the habits' rules and the tokenizer), so a later run reads only what changed.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from xshare import METHOD_VERSION
from xshare.agents.claude_code import transcript as claude
from xshare.agents.common import counting
from xshare.agents.common.measured import Measured
from xshare.agents.protocol import Looking
from xshare.html.analysis import from_ledger
from xshare.html.habits import session_habits
from xshare.html.write import claude_data
from xshare.measure.ids import path_key
from xshare.sessions.registry import REGISTRY
from xshare.state.store import atomic_write, dumps, read_json, state_dir

HABITS_VERSION = 3  # bump when a habit's rule changes: the side cache is then read again


def habit_summaries(where: Looking, wanted: set[str] | None, measured: Measured, problems: Counter) -> list[dict]:
    """Each wanted session's habits summary (None: every session), from the side cache where its file is
    unchanged, else read in detail; of `measured`, the calls another file bills (left out, as pages leave
    them out) and the transcripts that only copy another's session (no session, as in the report)."""
    copied = measured.copied
    cache = _load(where.choice.name) if where.use_cache else {}
    fresh: dict[str, list] = {}
    found: list[dict] = []
    for adapter in REGISTRY:
        given = where.given(adapter.agent)
        if given == []:
            continue
        for path in adapter.discover(given):
            if path_key(path) in measured.copy_files:
                continue
            key = _key(path)
            if not key:
                continue  # gone: not measured, not cached
            kept = cache.get(key)
            if kept is None:
                kept = _read(adapter, path, where, wanted, copied, problems)
            if kept is None:
                continue  # gone, unreadable, or a transcript outside the window: not measured, not cached
            fresh[key] = kept
            found += [summary for summary in kept if wanted is None or summary["id"] in wanted]
    if where.use_cache:  # entries of files not looked at this time are kept; a changed file's old one goes
        seen = {key.rpartition("|")[0].rpartition("|")[0] for key in fresh}
        kept_old = {key: value for key, value in cache.items()
                    if key.rpartition("|")[0].rpartition("|")[0] not in seen}
        _save(where.choice.name, kept_old | fresh)
    return found


def _read(adapter, path: Path, where: Looking, wanted: set[str] | None, copied: dict,
          problems: Counter) -> list[dict] | None:
    """One file's sessions' summaries, read in detail; None when there is nothing to keep."""
    try:
        if adapter.kind == "transcripts":
            file = claude.describe(path)
            if wanted is not None and file.session_id not in wanted:
                return None
            data = claude_data(file, where.choice, copied=copied.get(path_key(path), frozenset()))
            problems.update(data.problems)
            return [session_habits(data)]
        ledgers: dict = {}
        read: Counter = Counter()
        rows = adapter.read(path, counting.use(where.choice), read, ledgers)  # this process's counter
        problems.update(read)
    except OSError:  # it went away or became unreadable since the report pass read it
        problems["sessions that could not be read again for their habits"] += 1
        return None
    return [session_habits(from_ledger(ledgers[row["id"]], row, turn_markers=adapter.turn_markers))
            for row in rows if row["id"] in ledgers]


def _key(path: Path) -> str | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return f"{path_key(path)}|{stat.st_size}|{stat.st_mtime_ns}"


def _cache_file() -> Path:
    return state_dir() / "cache" / "habits.json"


def _load(tokenizer: str) -> dict:
    data = read_json(_cache_file())
    if not isinstance(data, dict) or data.get("version") != [METHOD_VERSION, HABITS_VERSION, tokenizer]:
        return {}
    entries = data.get("entries")
    return entries if isinstance(entries, dict) else {}


def _save(tokenizer: str, entries: dict) -> None:
    try:  # a cache that cannot be written costs time next run, not this run's answer
        atomic_write(_cache_file(), dumps({"version": [METHOD_VERSION, HABITS_VERSION, tokenizer],
                                           "entries": entries}))
    except OSError:
        pass
