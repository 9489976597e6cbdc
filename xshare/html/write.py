"""Claude Code's HTML summaries: measure a session in detail and write its self-contained page (and its
subagents' beside it), or the index of every session; where pages go and how they are named.

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
from functools import partial
from pathlib import Path
from typing import cast

from xshare import METHOD_VERSION
from xshare.agents.claude_code import transcript as claude
from xshare.agents.claude_code.many import measure_claude, measure_session
from xshare.agents.claude_code.transcript import TranscriptFile
from xshare.agents.common import counting as session_counter
from xshare.agents.common.measured import Measured
from xshare.html.analysis import (
    Linked,
    SessionData,
    from_ledger,
)
from xshare.html.chart import chart_html
from xshare.html.index_page import render_index
from xshare.html.session_page import render_session
from xshare.measure import tokens as tokenizers
from xshare.measure.ids import path_key
from xshare.measure.prices import PriceTable
from xshare.measure.row import SessionRow
from xshare.measure.timestamps import stamp
from xshare.report.periods import read_marks
from xshare.state.paths import home as user_home
from xshare.state.paths import html_file
from xshare.state.store import atomic_write

PAGE_VERSION = 2  # bump when the page's content changes, so --index regenerates every page


# --- measuring a Claude Code transcript --------------------------------------------------------------


def shown_path(path: Path) -> str:
    """A transcript's path as the page shows it: under the home folder as ~/..., which is shorter and
    does not print the user name into a page that may be shared."""
    home = user_home()
    try:
        return "~/" + path.relative_to(home).as_posix() if home else str(path)
    except ValueError:
        return str(path)


def claude_data(
    file: TranscriptFile, choice: tokenizers.TokenizerChoice, origin: Callable[[Path], str] = shown_path,
    copied: frozenset[int] | None = None,
) -> SessionData:
    """A Claude Code transcript's page input; `origin` says how to show where it was read from. Its row is
    `xshare session --json`'s, calls billed but never written (compactions) included."""
    transcript, row, problems = measure_session(file, choice, detail=True, copied=copied)
    current = session_counter.current()
    note = current.choice.note if current else ""
    return from_ledger(transcript.ledger, row, origin=origin(file.path), tokenizer_note=note, problems=problems)


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


def _stamp(files: list[TranscriptFile], tokenizer: str, prices: PriceTable | None = None) -> str:
    """Changes whenever the page would: a transcript (or a subagent's) grew, the method changed, or the
    prices did (another table, a --prices file, dollars turned off)."""
    priced = json.dumps([prices.date, prices.file_date, prices.models], sort_keys=True) if prices else "off"
    parts = [f"{METHOD_VERSION}.{PAGE_VERSION}.{tokenizer}.{hashlib.sha1(priced.encode()).hexdigest()}"]
    for file in files:
        try:
            stat = file.path.stat()
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


def transcript_roots(given: list[str] | None) -> list[Path]:
    """The Claude Code folders to look in: those given, else the default ones."""
    return [claude.resolve_root(root) for root in given] if given else claude.default_roots()


_TIMESTAMP = re.compile(rb'"timestamp"\s*:\s*"([0-9][0-9T:.+\-Z]{9,34})"')


def last_activity(path: Path, tail: int = 256 << 10) -> str | None:
    """The latest timestamp in a transcript's last lines: cheap, with no measuring."""
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, 2)
            handle.seek(max(0, size - tail))
            data = handle.read(tail)  # no further: a file that never ends (a link to /proc/self/pagemap)
    except OSError:
        return None
    # compared in the stored form: offsets converted, junk and 9999 left out (they would always sort first)
    stamps = [found for match in _TIMESTAMP.findall(data) if (found := stamp(match.decode()))]
    return max(stamps) if stamps else None


def most_recent(claude_roots: list[str] | None = None) -> list[TranscriptFile]:
    """Sessions by latest activity, newest first (a subagent's activity counts for its parent)."""
    files = claude.discover(transcript_roots(claude_roots))
    by_id = {file.session_id: file for file in files if file.source == claude.INTERACTIVE}
    latest: dict[str, tuple[str, TranscriptFile]] = {}
    for file in files:
        owner = by_id.get(file.parent_id or "", file)
        when = last_activity(file.path) or ""
        if owner.session_id not in latest or when > latest[owner.session_id][0]:
            latest[owner.session_id] = (when, owner)
    return [owner for _, owner in sorted(latest.values(), key=lambda item: item[0], reverse=True)]


def subagent_files(file: TranscriptFile, files: list[TranscriptFile]) -> list[TranscriptFile]:
    return [other for other in files if other.parent_id and other.parent_id == file.session_id]


# --- writing pages -------------------------------------------------------------------------------


def write_session_page(
    file: TranscriptFile,
    choice: tokenizers.TokenizerChoice,
    out: Path | None = None,
    claude_roots: list[str] | None = None,
    *,
    all_files: list[TranscriptFile] | None = None,
    sub_rows: dict[str, SessionRow] | None = None,
    origin: Callable[[Path], str] = shown_path,
    problems: Counter | None = None,
    subs: list[TranscriptFile] | None = None,
    copied: frozenset[int] | None = None,
    prices: PriceTable | None = None,
) -> Path:
    """Measure one transcript in detail and write its page, and its subagents' pages beside it; what
    went wrong reading them is added to `problems`.

    The page goes to `out`, else to the state directory's html/ folder; links between pages are
    relative, so a folder of pages can be moved as a whole. `sub_rows` (the index's rows by id) means
    the caller writes every page itself: subagents are listed from those rows, not measured again.
    `prices`: the pages' dollars at list price (None: dollars turned off)."""
    render = partial(render_session, prices=prices)
    target = out or page_path(file.session_id)
    folder = target.parent
    if all_files is None:
        all_files = claude.discover(transcript_roots(claude_roots))
    if subs is None:
        subs = subagent_files(file, all_files)
    data = claude_data(file, choice, origin, copied)
    found = Counter(data.problems)
    index_exists = sub_rows is not None or (folder / "index.html").exists()
    data.index_href = "index.html" if index_exists else None
    for sub in subs:
        sub_page = folder / page_name(sub.session_id)
        if sub_rows is not None:
            if sub.session_id in sub_rows:
                data.subagents.append(Linked(sub_rows[sub.session_id], sub_page.name))
            continue
        sub_data = claude_data(sub, choice, origin)
        found.update(sub_data.problems)
        sub_data.parent = Linked(data.row, target.name)
        sub_data.index_href = data.index_href
        _write_page(sub_page, sub_data, [sub], render, prices)
        data.subagents.append(Linked(sub_data.row, sub_page.name))
    if file.parent_id:
        parent = next((f for f in all_files if f.session_id == file.parent_id), None)
        parent_page = folder / page_name(file.parent_id)
        row = cast(SessionRow, {"id": file.parent_id, "agent": claude.AGENT,  # all a parent's link shows
                                "source": parent.source if parent else "interactive"})
        linked = parent is not None and (sub_rows is not None or parent_page.exists())
        data.parent = Linked(row, parent_page.name if linked else None)
    _write_page(target, data, [file, *subs], render, prices)
    if problems is not None:
        problems.update(found)
    return target


def _write_page(path: Path, data: SessionData, files: list[TranscriptFile], render,
                prices: PriceTable | None) -> None:
    stamp = _stamp(files, data.row.get("tokenizer", ""), prices)
    atomic_write(path, render(data, stamp=stamp).encode("utf-8"))


def write_index(
    choice: tokenizers.TokenizerChoice,
    out: Path | None = None,
    claude_roots: list[str] | None = None,
    use_cache: bool = True,
    origin: Callable[[Path], str] = shown_path,
    problems: Counter | None = None,
    others: Callable[[Path, set[str]], list[Linked]] | None = None,
    habits: Callable[[Measured], list[dict]] | None = None,
    prices: PriceTable | None = None,
) -> tuple[Path | None, int]:
    """The index of every Claude Code session (and with `others`, the entries of the other agents' sessions,
    their pages written into the index's folder under names not `taken`) (one that made no API call too:
    its share is unknown), each linked to its page; pages that are missing or older than their transcript
    are (re)written first; a transcript that only copies another's session has none. Returns the index
    path (None, and nothing written, when there is no session to list) and how many pages were written;
    what went wrong is added to `problems` (once per transcript: the pages re-read what the index measured).
    `habits`, given what the index measured (the calls other files bill, the files that copy a session),
    returns the sessions' habits summaries (html/habit_store.py) for the habits table. `prices`: every page's
    dollars at list price (None: dollars turned off)."""
    target = out or html_dir() / "index.html"
    folder = target.parent
    files = claude.discover(transcript_roots(claude_roots))
    measured = measure_claude(files, choice, use_cache=use_cache)
    if problems is not None:
        problems.update(measured.problems)
    rows = {row["id"]: row for row in measured.rows}
    children: dict[str, list[TranscriptFile]] = {}  # by parent id: one pass, not one per session
    for other in files:
        if other.parent_id:
            children.setdefault(other.parent_id, []).append(other)
    written = 0
    entries = []
    taken: set[str] = set()  # the pages' names so far
    for file in files:
        row = rows.get(file.session_id)
        if row is None or path_key(file.path) in measured.copy_files:
            continue  # it vanished or could not be read (counted as a problem), or it copies another file's session
        page = unique_page(folder, file.session_id, taken)
        subs = children.get(file.session_id, [])
        if _page_stamp(page) != _stamp([file, *subs], measured.tokenizer.name, prices):
            write_session_page(file, choice, page, all_files=files, sub_rows=rows, origin=origin, subs=subs,
                               copied=measured.copied.get(path_key(file.path), frozenset()), prices=prices)
            written += 1
        entries.append(Linked(row, page.name))
    if others is not None:
        more = others(folder, taken)
        written += len(more)
        entries += more
    if not entries:
        return None, written
    entries.sort(key=lambda entry: entry.row.get("last_activity") or "", reverse=True)
    summaries = habits(measured) if habits is not None else None
    index = render_index(entries, measured.tokenizer, _chart(entries, prices), summaries, prices)
    atomic_write(target, index.encode("utf-8"))
    return target, written


def _chart(entries: list[Linked], prices: PriceTable | None) -> str:
    """The share over time, each week linked to its sessions and priced (marks: `xshare mark`)."""
    return chart_html([entry.row for entry in entries], read_marks(), {e.row["id"]: e.href for e in entries if e.href},
                      prices=prices)


