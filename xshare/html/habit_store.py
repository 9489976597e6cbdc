"""Each session's habits summary (html/habits.py `session_habits`) for many sessions at once, for `xshare advice`
and the HTML index. The report's rows do not keep per-call detail, so each session is read again in detail as
its page reads it (each agent's `detailed_files`, by its adapter's `read_detail`). Only the small summaries are
kept, in a side cache under each file's path, size and modification time (and the method, the habits' rules and
the tokenizer), so a later run reads only what changed.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from xshare import METHOD_VERSION
from xshare.agents.protocol import Adapter, Looking
from xshare.html.habits import session_habits
from xshare.html.write import page_data
from xshare.measure.ids import path_key
from xshare.sessions import registry
from xshare.state.store import atomic_write, dumps, read_json, state_dir

HABITS_VERSION = 3  # bump when a habit's rule changes: the side cache is then read again


def habit_summaries(where: Looking, wanted: set[str] | None, problems: Counter) -> list[dict]:
    """Each wanted session's habits summary (None: every session), from the side cache where its file is
    unchanged, else read in detail, as the adapters' last measure left them (the calls another file bills left
    out, as pages leave them out; a file that only copies another's session has none, as in the report)."""
    cache = _load(where.choice.name) if where.use_cache else {}
    fresh: dict[str, list] = {}
    found: list[dict] = []
    for adapter in registry.REGISTRY:
        if where.given(adapter.agent) == []:
            continue
        for path in adapter.detailed_files(where):
            key = _key(path)
            if not key:
                continue  # gone: not measured, not cached
            kept = cache.get(key)
            if kept is None:
                kept = _read(adapter, path, where, wanted, problems)
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


def _read(adapter: Adapter, path: Path, where: Looking, wanted: set[str] | None,
          problems: Counter) -> list[dict] | None:
    """One file's sessions' summaries, read in detail; None when there is nothing to keep."""
    try:
        found = adapter.read_detail(path, where, problems, wanted)
    except OSError:  # it went away or became unreadable since the report pass read it
        problems["sessions that could not be read again for their habits"] += 1
        return None
    return None if found is None else [session_habits(page_data(session, adapter, where)) for session in found]


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
