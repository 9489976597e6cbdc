"""The per-session HTML summary: measure one session in detail and write its self-contained page.

The figures come from the same reader and the same tokenizer choice as `xshare session <id> --json`, so
the page and the row agree to the token. What the page shows is worked out in `html_analysis` and drawn
by `html_page`; this module sits above both (its analysis names are re-exported for callers).
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from xshare import METHOD_VERSION
from xshare.html.analysis import (
    CAUSES,
    WEIGHTS,
    Compaction,
    Linked,
    Rebuild,
    ResultCost,
    SessionData,
    compaction_economics,
    compaction_now,
    exploration_costs,
    find_compactions,
    find_rebuilds,
    from_ledger,
    rebuild_weight,
)
from xshare.html.session_page import render_index, render_session
from xshare.measure import tokens as tokenizers
from xshare.measure.ids import path_key
from xshare.measure.timestamps import stamp
from xshare.report.outputs import refusal
from xshare.sources.claude import transcript as claude
from xshare.sources.claude.transcript import ClaudeTranscript, TranscriptFile
from xshare.state.paths import home as user_home
from xshare.state.paths import html_file
from xshare.state.store import atomic_write
from xshare.text import printable

__all__ = [
    "CAUSES", "WEIGHTS", "Compaction", "Linked", "Rebuild", "ResultCost", "SessionData", "cli_html",
    "claude_data", "compaction_economics", "compaction_now", "exploration_costs", "find_compactions",
    "find_rebuilds", "from_ledger", "html_dir", "most_recent", "page_name", "page_path", "rebuild_weight",
    "shown_path", "write_hermes_page", "write_index", "write_session_page",
]
PAGE_VERSION = 1  # bump when the page's content changes, so --index regenerates every page


# --- measuring a Claude Code transcript --------------------------------------------------------------


def measure_detail(file: TranscriptFile, choice: tokenizers.TokenizerChoice,
                   copied: frozenset[str] | None = None) -> tuple[ClaudeTranscript, dict, dict]:
    """A session measured as `xshare session` measures it (same reader, tokenizer, copies and calls its
    files did not record), with the per-call log kept: the reader, the row and the problems."""
    from xshare.sessions import measure as sessions

    return sessions.measure_session(file, choice, detail=True, copied=copied)


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
    copied: frozenset[str] | None = None,
) -> SessionData:
    """A Claude Code transcript's page input; `origin` says how to show where it was read from. Its row is
    `xshare session --json`'s, calls billed but never written (compactions) included."""
    transcript, row, problems = measure_detail(file, choice, copied)
    from xshare.sessions import measure as sessions

    note = sessions._counter.choice.note if sessions._counter else ""
    return from_ledger(transcript.ledger, row, origin=origin(file.path), tokenizer_note=note, problems=problems)


# --- files and names -----------------------------------------------------------------------------


def html_dir() -> Path:
    return html_file("x").parent


def page_path(session_id: str) -> Path:
    """Where `xshare html` writes a session's page: the path the status line and /exploration-share
    already point at (xshare.paths.html_file), so the two can never disagree."""
    return html_file(session_id)


def page_name(session_id: str) -> str:
    """The file name of a session's page, in any folder of pages (only [A-Za-z0-9._-]: safe everywhere)."""
    return html_file(session_id).name


def _stamp(files: list[TranscriptFile], tokenizer: str) -> str:
    """Changes whenever the page would: a transcript (or a subagent's) grew, or the method changed."""
    parts = [f"{METHOD_VERSION}.{PAGE_VERSION}.{tokenizer}"]
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


def _roots(claude_roots: list[str] | None) -> list[Path]:
    return [claude.resolve_root(root) for root in claude_roots] if claude_roots else claude.default_roots()


_TIMESTAMP = re.compile(rb'"timestamp"\s*:\s*"([0-9][0-9T:.+\-Z]{9,34})"')


def last_activity(path: Path, tail: int = 256 << 10) -> str | None:
    """The latest timestamp in a transcript's last lines: cheap, with no measuring."""
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, 2)
            handle.seek(max(0, size - tail))
            data = handle.read()
    except OSError:
        return None
    # compared in the stored form: offsets converted, junk and 9999 left out (they would always sort first)
    stamps = [found for match in _TIMESTAMP.findall(data) if (found := stamp(match.decode()))]
    return max(stamps) if stamps else None


def most_recent(claude_roots: list[str] | None = None) -> list[TranscriptFile]:
    """Sessions by latest activity, newest first (a subagent's activity counts for its parent)."""
    files = claude.discover(_roots(claude_roots))
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
    sub_rows: dict[str, dict] | None = None,
    origin: Callable[[Path], str] = shown_path,
    problems: Counter | None = None,
    subs: list[TranscriptFile] | None = None,
    copied: frozenset[str] | None = None,
) -> Path:
    """Measure one transcript in detail and write its page, and its subagents' pages beside it; what
    went wrong reading them is added to `problems`.

    The page goes to `out`, else to the state directory's html/ folder; links between pages are
    relative, so a folder of pages can be moved as a whole. `sub_rows` (the index's rows by id) means
    the caller writes every page itself: subagents are listed from those rows, not measured again."""
    target = out or page_path(file.session_id)
    folder = target.parent
    if all_files is None:
        all_files = claude.discover(_roots(claude_roots))
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
        _write_page(sub_page, sub_data, [sub], render_session)
        data.subagents.append(Linked(sub_data.row, sub_page.name))
    if file.parent_id:
        parent = next((f for f in all_files if f.session_id == file.parent_id), None)
        parent_page = folder / page_name(file.parent_id)
        row = {"id": file.parent_id, "agent": claude.AGENT, "source": parent.source if parent else "interactive"}
        linked = parent is not None and (sub_rows is not None or parent_page.exists())
        data.parent = Linked(row, parent_page.name if linked else None)
    _write_page(target, data, [file, *subs], render_session)
    if problems is not None:
        problems.update(found)
    return target


def _write_page(path: Path, data: SessionData, files: list[TranscriptFile], render) -> None:
    stamp = _stamp(files, data.row.get("tokenizer", ""))
    atomic_write(path, render(data, stamp=stamp).encode("utf-8"))


def write_hermes_page(session_id: str, databases: list[Path], choice: tokenizers.TokenizerChoice,
                      out: Path | None = None, problems: Counter | None = None) -> Path | None:
    """A Hermes session's page, with what its data supports: Hermes records the bill per session, not
    per call, so the page says it cannot have the cache sections. None if no database holds the id;
    what went wrong in each database looked in (one locked, say) is added to `problems`."""
    from xshare.sessions import measure as sessions
    from xshare.sources.hermes import state_db as hermes

    sessions._init_worker(choice)
    counter = sessions._counter
    for database in databases:
        found: Counter = Counter()
        ledgers: dict = {}
        rows = hermes.read_database(database, counter.count, counter.name, found, only=session_id,
                                    ledgers=ledgers)
        counter.flush()
        if problems is not None:
            problems.update(found)
        if rows:
            data = from_ledger(ledgers[session_id], rows[0], origin=f"Hermes {shown_path(database)}",
                               tokenizer_note=counter.choice.note, problems=dict(found))
            target = out or page_path(session_id)
            atomic_write(target, render_session(data).encode("utf-8"))
            return target
    return None


def write_index(
    choice: tokenizers.TokenizerChoice,
    out: Path | None = None,
    claude_roots: list[str] | None = None,
    use_cache: bool = True,
    origin: Callable[[Path], str] = shown_path,
    problems: Counter | None = None,
) -> tuple[Path, int]:
    """The index of every Claude Code session (one that made no API call too: its share is unknown), each
    linked to its page; pages that are missing or older than their transcript are (re)written first.
    Returns the index path and how many pages were written; what went wrong is added to `problems`
    (once per transcript: the pages re-read what the index measured)."""
    from xshare.sessions.measure import measure_claude

    target = out or html_dir() / "index.html"
    folder = target.parent
    files = claude.discover(_roots(claude_roots))
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
    for file in files:
        row = rows.get(file.session_id)
        if row is None:
            continue  # it vanished or could not be read (measure_claude counted it as a problem)
        page = folder / page_name(file.session_id)
        subs = children.get(file.session_id, [])
        if _page_stamp(page) != _stamp([file, *subs], measured.tokenizer.name):
            write_session_page(file, choice, page, all_files=files, sub_rows=rows, origin=origin, subs=subs,
                               copied=measured.copied.get(path_key(file.path), frozenset()))
            written += 1
        entries.append(Linked(row, page.name))
    entries.sort(key=lambda entry: entry.row.get("last_activity") or "", reverse=True)
    atomic_write(target, render_index(entries, measured.tokenizer, _chart(entries)).encode("utf-8"))
    return target, written


def _chart(entries: list[Linked]) -> str:
    """The share over time, each week linked to its sessions (marks: `xshare mark`)."""
    from xshare.html.chart import chart_html
    from xshare.report.periods import read_marks

    return chart_html([entry.row for entry in entries], read_marks(), {e.row["id"]: e.href for e in entries if e.href})


def _hermes_html(args: argparse.Namespace, choice: tokenizers.TokenizerChoice, out: Path | None,
                 say: Callable[[str], None], problems: Counter) -> int:
    """`xshare html ID` for an id that no Claude Code transcript has: a Hermes session, if one has it."""
    from xshare.sources.hermes import state_db as hermes

    databases = [Path(path).expanduser() for path in args.hermes_db] if args.hermes_db else hermes.default_databases()
    try:
        path = write_hermes_page(args.session, databases, choice, out, problems)
    except OSError as error:
        say(f"could not write the page: {error.strerror or error}")
        return 1
    if path is None:  # another agent's session (Codex, Gemini CLI, OpenCode, OpenClaw)?
        from xshare.html.agents import write_agent_page
        from xshare.sources.agents import homes_given

        try:
            path, more = write_agent_page(args.session, homes_given(args), choice, out)
        except OSError as error:
            say(f"could not write the page: {error.strerror or error}")
            return 1
        problems.update(more)
    if path is None:
        locked = any(hermes.LOCKED in kind for kind in problems)
        _say_problems(problems, say)  # first, so the verdict below is the last line
        if locked:
            say(f"could not look for {args.session!r}: a Hermes database is locked by another program; "
                "try again when it is free")
        else:
            say(f"no Claude Code transcript or Hermes session matches {args.session!r}, nor any Codex, "
                "Gemini CLI, OpenCode or OpenClaw session")
        return 2
    return _done(path, args.open)


def _done(path: Path, open_it: bool) -> int:
    print(printable(str(path)))
    if open_it:
        import webbrowser

        if not webbrowser.open(path.resolve().as_uri()):
            print("xshare: no browser could be opened; the path is above", file=sys.stderr)
    return 0


def _say_problems(problems: Counter, say: Callable[[str], None]) -> None:
    """One line per kind of problem, as `xshare report` prints them; each said once."""
    for kind, count in sorted(problems.items()):
        say(f"{kind}: {count:,}")
    problems.clear()


def cli_html(args: argparse.Namespace, say: Callable[[str], None]) -> int:
    """`xshare html [SESSION] [-o FILE] [--open] [--index] [--demo]`; `say` prints a message to stderr,
    including what went wrong reading the sessions (as `xshare report` does)."""
    problems: Counter = Counter()
    try:
        return _cli_html(args, say, problems)
    finally:
        _say_problems(problems, say)


def _cli_html(args: argparse.Namespace, say: Callable[[str], None], problems: Counter) -> int:
    out = Path(args.output).expanduser() if args.output else None
    why = refusal(out, args.claude_root) if out else None
    if why:
        say(f"could not write the page {out}: {why}")
        return 1
    origin, demo = shown_path, None
    if getattr(args, "demo", False):
        # the invented corpus lives in a temporary folder; its pages go to html/demo/, apart from real ones
        import tempfile

        from xshare.demo import write_demo_corpus

        demo = tempfile.TemporaryDirectory(prefix="xshare-demo-")
        root = write_demo_corpus(Path(demo.name))
        args.claude_root, args.no_cache = [str(root)], True
        out = out or html_dir() / "demo" / ("index.html" if args.index else "session.html")

        def origin(path: Path) -> str:
            return f"xshare's invented demo corpus: {path.relative_to(root).as_posix()}"

    choice = tokenizers.choose(estimate=args.estimate, vocab=args.vocab, remember=not args.no_cache)
    if args.index:
        if args.session:
            say("give a SESSION or --index, not both")
            return 2
        try:
            path, written = write_index(choice, out, args.claude_root, not args.no_cache, origin, problems)
        except OSError as error:
            say(f"could not write the index: {error.strerror or error}")
            return 1
        if written:
            say(f"wrote {written:,} session page(s) beside the index")
    else:
        from xshare.sessions.measure import find_session

        if args.session:
            file = find_session(args.session, args.claude_root) if not args.hermes_db else None
            if file is None:
                return _hermes_html(args, choice, out, say, problems)
        else:
            recent = most_recent(args.claude_root)
            if not recent:
                for folder in _roots(args.claude_root):
                    say(f"looked for Claude Code transcripts under {folder}")
                say("no session found; give a transcript path or a session id (or try --demo)")
                return 2
            # the demo's most recent session is a short one; its largest shows every section
            file = max(recent, key=lambda f: f.path.stat().st_size) if demo else recent[0]
        try:
            path = write_session_page(file, choice, out, args.claude_root, origin=origin, problems=problems)
        except OSError as error:
            say(f"could not write the page: {error.strerror or error}")
            return 1
    return _done(path, args.open)
