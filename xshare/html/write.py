"""Sessions' HTML summaries, whichever agent's: a session found with its ledger written as its page (and
its subagents' pages beside it, where its agent gives them), or the index of every agent's sessions (one loop
over the registry); where pages go and how they are named.

The figures come from the same reader and the same tokenizer choice as `xshare session <id> --json`, so
the page and the row agree to the token. What the page shows is worked out in html/analysis.py and drawn
by html/session_page.py; this module sits above both.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from xshare import METHOD_VERSION
from xshare.agents.protocol import Adapter, Found, Looking
from xshare.html.analysis import Linked, SessionData, from_ledger
from xshare.html.chart import chart_html
from xshare.html.index_page import render_index
from xshare.html.session_page import render_session
from xshare.measure.prices import PriceTable
from xshare.measure.row import SessionRow
from xshare.report.periods import read_marks
from xshare.sessions import registry
from xshare.state.paths import home as user_home
from xshare.state.paths import html_file
from xshare.state.store import atomic_write

PAGE_VERSION = 2  # bump when the page's content changes, so --index regenerates every page


def shown_path(path: Path) -> str:
    """A record's path as the page shows it: under the home folder as ~/..., which is shorter and
    does not print the user name into a page that may be shared."""
    home = user_home()
    try:
        return "~/" + path.relative_to(home).as_posix() if home else str(path)
    except ValueError:
        return str(path)


def page_data(found: Found, adapter: Adapter, looking: Looking,
              origin: Callable[[Path], str] = shown_path) -> SessionData:
    """A session found with its ledger (by `looking`'s counter) as its page shows it; `origin` says how to
    show where it was read from. Its row is `xshare session --json`'s."""
    note = looking.counter.choice.note
    shown = f"{adapter.origin_label}{origin(found.path)}" if found.path is not None else adapter.origin_label
    if found.ledger is None:
        raise ValueError(f"no ledger for the page of {found.row['id']}: ask its adapter's detail first")
    return from_ledger(found.ledger, found.row, origin=shown, tokenizer_note=note, problems=dict(found.problems),
                       turn_markers=adapter.turn_markers)


# --- files and names -----------------------------------------------------------------------------


def html_dir() -> Path:
    return html_file("x").parent


def page_path(session_id: str) -> Path:
    """Where `xshare html` writes a session's page: the path the status line and /exploration-share
    already point at (xshare.state.paths.html_file), so the two can never disagree."""
    return html_file(session_id)


def page_name(session_id: str) -> str:
    """The file name of a session's page, in any folder of pages (only [A-Za-z0-9._~-]: safe everywhere)."""
    return html_file(session_id).name


def unique_page(folder: Path, session_id: str, taken: set[str]) -> Path:
    """A session's page in an index's folder, named for its id, or for an id an earlier page of the index
    took (two sessions of one id: a database copied beside another, a chat resumed into a second file)
    with a number after it, so that no page overwrites another."""
    name = page_name(session_id)
    stem, number = name.removesuffix(".html"), 1
    while name in taken:
        number += 1
        name = f"{stem}-{number}.html"
    taken.add(name)
    return folder / name


def _stamp(files: list[Path], tokenizer: str, prices: PriceTable | None = None) -> str:
    """Changes whenever the page would: a file it is built from (a subagent's too) grew, the method changed,
    or the prices did (another table, a --prices file, dollars turned off)."""
    priced = json.dumps([prices.date, prices.file_date, prices.models], sort_keys=True) if prices else "off"
    parts = [f"{METHOD_VERSION}.{PAGE_VERSION}.{tokenizer}.{hashlib.sha1(priced.encode()).hexdigest()}"]
    for file in files:
        try:
            stat = file.stat()
            parts.append(f"{stat.st_size}.{stat.st_mtime_ns}")
        except OSError:
            parts.append("gone")
    return hashlib.sha1("/".join(parts).encode()).hexdigest()[:16]


_STAMP = re.compile(rb'<meta name="xshare-stamp" content="([0-9a-f]+)"')


def _page_stamp(path: Path) -> str | None:
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except OSError:
        return None
    found = _STAMP.search(head)
    return found.group(1).decode() if found else None


# --- writing pages -------------------------------------------------------------------------------


def write_page(found: Found, adapter: Adapter, looking: Looking, out: Path | None = None, *,
               origin: Callable[[Path], str] = shown_path, problems: Counter | None = None,
               prices: PriceTable | None = None, index_rows: dict[str, SessionRow] | None = None) -> Path:
    """Write the page of a session found with its ledger, and its children's pages beside it (each read in
    detail by its adapter, what went wrong added to `problems`).

    The page goes to `out`, else to the state directory's html/ folder; links between pages are
    relative, so a folder of pages can be moved as a whole. `index_rows` (the index's rows by id) means
    the caller writes every page itself: the children are linked to their rows there, not read again.
    `prices`: the pages' dollars at list price (None: dollars turned off)."""
    problems = Counter() if problems is None else problems
    target = out or page_path(found.row["id"])
    folder = target.parent
    data = page_data(found, adapter, looking, origin)
    data.index_href = "index.html" if index_rows is not None or (folder / "index.html").exists() else None
    for child in found.children:
        child_page = folder / page_name(child.row["id"])
        if index_rows is not None:
            if child.row["id"] in index_rows:
                data.subagents.append(Linked(index_rows[child.row["id"]], child_page.name))
            continue
        detailed = adapter.detail(child, looking, problems)
        if detailed is None:
            continue
        child_data = page_data(detailed, adapter, looking, origin)
        child_data.parent = Linked(data.row, target.name)
        child_data.index_href = data.index_href
        _write_page(child_page, child_data, detailed.sources, prices)
        data.subagents.append(Linked(child_data.row, child_page.name))
    if found.parent is not None:
        parent_page = folder / page_name(found.parent.row["id"])
        linked = found.parent.path is not None and (index_rows is not None or parent_page.exists())
        data.parent = Linked(found.parent.row, parent_page.name if linked else None)
    _write_page(target, data, found.sources, prices)
    return target


def _write_page(path: Path, data: SessionData, sources: list[Path] | None, prices: PriceTable | None) -> None:
    """A page built from files that may be kept while they are unchanged carries their stamp."""
    stamp = _stamp(sources, data.row.get("tokenizer", ""), prices) if sources is not None else ""
    atomic_write(path, render_session(data, stamp=stamp, prices=prices).encode("utf-8"))


def write_index(looking: Looking, out: Path | None = None, origin: Callable[[Path], str] = shown_path,
                problems: Counter | None = None, habits: Callable[[], list[dict]] | None = None,
                prices: PriceTable | None = None) -> tuple[Path | None, int]:
    """The index of every agent's sessions (one that made no API call too: its share is unknown), each
    linked to its page; pages that are missing or older than their records are (re)written first. Returns
    the index path (None, and nothing written, when there is no session to list) and how many pages were
    written; what went wrong is added to `problems` (once: the pages re-read what the listing measured).
    `habits` returns the sessions' habits summaries (html/habit_store.py) for the habits table. `prices`:
    every page's dollars at list price (None: dollars turned off)."""
    problems = Counter() if problems is None else problems
    target = out or html_dir() / "index.html"
    folder = target.parent
    written = 0
    entries: list[Linked] = []
    taken: set[str] = set()  # the pages' names so far
    for adapter in registry.REGISTRY:
        if looking.given(adapter.agent) == []:
            continue
        to_read: list[tuple[Found, Path]] = []  # paged once the listing is done: their children's rows are known
        for found in adapter.listed(looking, problems):
            page = unique_page(folder, found.row["id"], taken)
            entries.append(Linked(found.row, page.name))
            if found.ledger is not None:
                write_page(found, adapter, looking, page, origin=origin, prices=prices, index_rows={})
                written += 1
            else:
                to_read.append((found, page))
        rows = {found.row["id"]: found.row for found, _ in to_read}
        for found, page in to_read:
            if found.sources is not None and _page_stamp(page) == _stamp(found.sources, found.row.get("tokenizer", ""),
                                                                           prices):
                continue  # current: kept
            detailed = adapter.detail(found, looking, Counter())  # its problems were said by the listing
            if detailed is not None:
                write_page(detailed, adapter, looking, page, origin=origin, prices=prices, index_rows=rows)
                written += 1
    if not entries:
        return None, written
    entries.sort(key=lambda entry: entry.row.get("last_activity") or "", reverse=True)
    summaries = habits() if habits is not None else None
    index_html = render_index(entries, looking.counter.choice, _chart(entries, prices), summaries, prices)
    atomic_write(target, index_html.encode("utf-8"))
    return target, written


def _chart(entries: list[Linked], prices: PriceTable | None) -> str:
    """The share over time, each week linked to its sessions and priced (marks: `xshare mark`)."""
    return chart_html([entry.row for entry in entries], read_marks(), {e.row["id"]: e.href for e in entries if e.href},
                      prices=prices)


