"""The report's sums kept for the rows they were summed from: a report over the same rows says the same figures
without decoding, summing and pricing every row again (a third of a repeated report over two thousand sessions).

The sums are a function of the rows, the price table and xshare's own code; the memo is named by all three:
- every row summed, its bytes in order (the window's rows and the remembered ones, as the report sums them);
- the price table as loaded (the shipped one and a --prices file laid over it), or none;
- xshare's code: its version and every file of the package, by size and time (an upgrade, or an edit of a
  checkout, names another memo).
A memo that does not match, or cannot be read, is passed over: the rows are summed, and the memo written anew.
Only the groups' figures and the dollars' sums are kept, aggregates as the report prints them, in the state
folder's cache. Periods (--by) and marks are summed from the rows every time.
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

from xshare import METHOD_VERSION, __version__
from xshare.agents.common.packed import PackedRows
from xshare.report.dollars import DollarSums
from xshare.state.store import atomic_write, dumps, read_json, state_dir

_LAYOUT = 1  # of the memo file
_PACKAGE = Path(__file__).resolve().parent.parent


def memo_path() -> Path:
    return state_dir() / "cache" / "report-sums.json"


def summed(rows: PackedRows, dollars: DollarSums | None, sum_groups: Callable[[], dict]) -> dict:
    """The groups' figures of these rows (`sum_groups` sums them, adding to `dollars`), from the memo when it
    was made from the same rows, table and code (then `dollars` takes the sums it kept)."""
    code = code_stamp()
    if code is None:  # xshare's files cannot be listed (a zipped install): no memo can be told current
        return sum_groups()
    key = memo_key(rows, dollars, code)
    kept = _recall(key)
    if kept is not None and _restore(dollars, kept.get("dollars")):
        return kept["groups"]
    groups = sum_groups()
    memo = dumps({"layout": _LAYOUT, "key": key, "groups": groups,
                  "dollars": _dollar_state(dollars) if dollars is not None else None})
    try:
        atomic_write(memo_path(), [memo])
    except OSError:
        pass  # the next report sums again: nothing is lost
    return groups


def memo_key(rows: PackedRows, dollars: DollarSums | None, code: str) -> str:
    digest = hashlib.blake2b(f"{_LAYOUT} {METHOD_VERSION} {__version__} {code}".encode(), digest_size=16)
    table = dollars.table if dollars is not None else None
    digest.update(dumps(None if table is None else [table.date, table.models, table.aliases, table.tiers,
                                                    sorted(table.file_models), table.file_date, table.sources]))
    return rows.digest(digest).hexdigest()


def code_stamp(folder: Path = _PACKAGE) -> str | None:
    """xshare's code as installed: every file of the package (its path, size and time), in a digest; None when
    the package's files cannot be listed."""
    digest = hashlib.blake2b(digest_size=16)
    pending = [folder]
    try:
        while pending:
            with os.scandir(pending.pop()) as entries:
                for entry in sorted(entries, key=lambda entry: entry.name):
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name != "__pycache__":
                            pending.append(Path(entry.path))
                    elif entry.name.endswith((".py", ".json")):
                        status = entry.stat()
                        digest.update(dumps([entry.path, status.st_size, status.st_mtime_ns]))
    except OSError:
        return None
    return digest.hexdigest()


def _recall(key: str) -> dict | None:
    kept = read_json(memo_path())
    if not isinstance(kept, dict) or kept.get("layout") != _LAYOUT or kept.get("key") != key:
        return None
    return kept if isinstance(kept.get("groups"), dict) else None


_INTS = ("total", "prompt", "exploration", "covered_prompt", "priced", "partly_priced", "exploration_unknown",
         "no_usage", "no_calls", "nothing_priced", "old_rows")


_KEPT = {*_INTS, "by_model", "by_agent", "unpriced", "unpriced_calls", "table"}  # every field of a DollarSums


def _dollar_state(dollars: DollarSums) -> dict:
    return {**{name: getattr(dollars, name) for name in _INTS}, "by_model": dollars.by_model,
            "by_agent": dollars.by_agent, "unpriced": dollars.unpriced, "unpriced_calls": dollars.unpriced_calls}


def _restore(dollars: DollarSums | None, state: object) -> bool:
    """`dollars` given the kept sums (True), or left as it is when there are none to give (False)."""
    if dollars is None:
        return state is None
    if set(vars(dollars)) != _KEPT:  # a field this memo does not know of: summed, never left out
        return False
    if not isinstance(state, dict) or any(type(state.get(name)) is not int for name in _INTS):
        return False
    try:
        by_model = defaultdict(lambda: [0, 0], {str(name): [int(s), int(d)] for name, (s, d) in
                                                state["by_model"].items()})
        by_agent = defaultdict(lambda: [0, 0, 0], {str(name): [int(s), int(d), int(e)] for name, (s, d, e) in
                                                   state["by_agent"].items()})
        unpriced = Counter({str(model): int(count) for model, count in state["unpriced"].items()})
        unpriced_calls = Counter({str(model): int(count) for model, count in state["unpriced_calls"].items()})
    except (KeyError, TypeError, ValueError, AttributeError):
        return False
    for name in _INTS:
        setattr(dollars, name, state[name])
    dollars.by_model, dollars.by_agent, dollars.unpriced, dollars.unpriced_calls = (
        by_model, by_agent, unpriced, unpriced_calls)
    return True
