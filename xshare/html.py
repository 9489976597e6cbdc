"""The per-session HTML summary: measure one session in detail, analyse it, write one self-contained page.

The page is built from a neutral input (`SessionData`: the session row, the ledger's per-call log, its
markers and the tool results with the calls they rode along) so any source whose ledger keeps detail can
use it; what a source cannot supply (Hermes bills per session, so it has no per-call usage) is flagged and
the page says which sections it cannot have. The figures come from the same reader and the same tokenizer
choice as `xshare session <id> --json`, so the page and the row agree to the token.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from xshare import METHOD_VERSION
from xshare import tokens as tokenizers
from xshare.ledger import SPREAD, Ledger
from xshare.paths import html_file
from xshare.report import parse_time
from xshare.sources import claude
from xshare.sources.claude import ClaudeTranscript, TranscriptFile
from xshare.store import atomic_write

PAGE_VERSION = 1  # bump when the page's content changes, so --index regenerates every page
# token weights in multiples of fresh input (the essay's table); the page shows them and lets them change
WEIGHTS = {"input": 1.0, "cache_read": 0.1, "cache_write_5m": 1.25, "cache_write_1h": 2.0, "output": 5.0}
# Anthropic caches nothing shorter than 1,024 tokens, so a smaller drop in cache reads is not a rebuild;
# nor is a drop under 5% of what was cached: in real transcripts that is a call made in parallel with
# the previous one, missing only that call's own write
MIN_REBUILD = 1024
MIN_REBUILD_SHARE = 0.05
TTL_5M_S, TTL_1H_S = 300, 3600
# "what a summary or a narrower read would have removed": a summary replaces a result after the first
# call that carried it; a narrower read (a line range, a grep for the verdict line) caps it from the start
SUMMARY_TOKENS, NARROW_TOKENS = 500, 1000
TOP_RESULTS = 20
CAUSES = ("compaction", "model switch", "idle", "turn boundary", "other")


@dataclass
class Linked:
    """Another session this page points at (a subagent, the parent), with the page it has, if any."""

    row: dict
    href: str | None = None


@dataclass
class SessionData:
    """Everything the page shows, independent of the agent that recorded it."""

    row: dict  # ledger.session_row(...), the same row `xshare session --json` prints
    calls: list[dict]  # ledger.call_log
    markers: list[dict]  # ledger.markers
    carried: list[list]  # ledger.still_carried()
    origin: str = ""  # what it was read from (a transcript path; a database and session id)
    per_call_usage: bool = True  # the provider's usage per API call (Claude Code), not per session
    overhead_spread: bool = False  # overhead known only for the whole session (Hermes)
    turn_markers: bool = True  # a person's prompts are marked (turn boundaries can be a rebuild cause)
    tokenizer_note: str = ""
    problems: dict = field(default_factory=dict)
    subagents: list[Linked] = field(default_factory=list)
    parent: Linked | None = None
    index_href: str | None = None


def from_ledger(ledger: Ledger, row: dict, **options) -> SessionData:
    """A page input from any source's detailed ledger; options are SessionData's other fields.

    A Hermes ledger (SPREAD overhead) has no per-call usage and no prompt markers, and says so."""
    if ledger.overhead_mode == SPREAD:
        options.setdefault("per_call_usage", False)
        options.setdefault("overhead_spread", True)
        options.setdefault("turn_markers", False)
    return SessionData(row, ledger.call_log, ledger.markers, ledger.still_carried(), **options)


# --- measuring a Claude Code transcript --------------------------------------------------------------


def measure_detail(file: TranscriptFile, choice: tokenizers.TokenizerChoice) -> ClaudeTranscript:
    """Read a transcript with the per-call log kept, through the reader and tokenizer `xshare session` uses."""
    from xshare import sessions

    sessions._init_worker(choice)  # the CLI's counter: same vocabulary, same fallback if it is unusable
    counter = sessions._counter
    transcript = ClaudeTranscript(file, counter.count, counter.name, detail=True)
    transcript.catch_up()
    return transcript


def shown_path(path: Path) -> str:
    """A transcript's path as the page shows it: under the home folder as ~/..., which is shorter and
    does not print the user name into a page that may be shared."""
    try:
        return "~/" + path.relative_to(Path.home()).as_posix()
    except ValueError:
        return str(path)


def claude_data(
    file: TranscriptFile, choice: tokenizers.TokenizerChoice, origin: Callable[[Path], str] = shown_path
) -> SessionData:
    """A Claude Code transcript's page input; `origin` says how to show where it was read from."""
    transcript = measure_detail(file, choice)
    from xshare import sessions

    note = sessions._counter.choice.note if sessions._counter else ""
    return from_ledger(transcript.ledger, transcript.row(), origin=origin(file.path), tokenizer_note=note,
                       problems=dict(transcript.problems))


# --- analysis ------------------------------------------------------------------------------------


def _markers_by_call(markers: list[dict]) -> dict[int, list[dict]]:
    found: dict[int, list[dict]] = {}
    for marker in markers:
        found.setdefault(marker["at"], []).append(marker)
    return found


def _write(usage: dict) -> int:
    return usage.get("cache_write_5m", 0) + usage.get("cache_write_1h", 0)


def _seconds(before: str | None, after: str | None) -> float | None:
    start, end = parse_time(before), parse_time(after)
    return (end - start).total_seconds() if start and end else None


@dataclass
class Rebuild:
    call: int  # index in the call log (0-based; the page shows it 1-based)
    time: str | None
    cause: str
    detail: str
    also: list[str]
    expected: int  # what the previous call of the same conversation left in the cache (its read + write)
    read: int  # the surviving floor
    written: int
    rewritten: int  # the part of the drop written again: min(written, expected - read)
    rewritten_1h: int  # of which at the 1-hour rate (in proportion to the call's own write split)


def find_rebuilds(data: SessionData) -> list[Rebuild]:
    """Calls whose cache read fell at least MIN_REBUILD tokens and MIN_REBUILD_SHARE below what the
    previous call of the same conversation left cached, while they wrote at least MIN_REBUILD: the
    cache was rebuilt. The cause
    is the first that applies of: a compaction or microcompaction since the previous call, a model
    switch, a gap longer than the cache lifetime (1 hour when the conversation writes mostly 1-hour
    entries, else 5 minutes), a person's prompt (turn boundary); else other."""
    if not data.per_call_usage:
        return []
    marks = _markers_by_call(data.markers)
    previous: dict[str, int] = {}
    written_by_ttl: dict[str, list[int]] = {}
    found = []
    for index, call in enumerate(data.calls):
        thread = call.get("thread") or "main"
        usage = call["usage"]
        before = previous.get(thread)
        previous[thread] = index
        ttl_sums = written_by_ttl.setdefault(thread, [0, 0])
        ttl = TTL_1H_S if ttl_sums[1] > ttl_sums[0] else TTL_5M_S
        ttl_sums[0] += usage.get("cache_write_5m", 0)
        ttl_sums[1] += usage.get("cache_write_1h", 0)
        if before is None:
            continue  # a cold start: nothing of this conversation was cached yet
        last = data.calls[before]["usage"]
        expected = last.get("cache_read", 0) + _write(last)
        read, written = usage.get("cache_read", 0), _write(usage)
        drop = expected - read
        if drop < MIN_REBUILD or drop < MIN_REBUILD_SHARE * expected or written < MIN_REBUILD:
            continue
        causes: list[tuple[str, str]] = []
        between = [m for at in range(before + 1, index + 1) for m in marks.get(at, ())]
        compactions = sum(1 for m in between if m["kind"] == "compaction")
        cleared = sum(m["value"] or 0 for m in between if m["kind"] == "trimmed")
        if compactions:
            causes.append(("compaction", "/compact or auto-compact"))
        elif cleared:
            causes.append(("compaction", f"microcompaction cleared {cleared:,} tool result(s)"))
        old, new = data.calls[before].get("model"), call.get("model")
        if old and new and old != new:
            causes.append(("model switch", f"{old} \u2192 {new}"))
        gap = _seconds(data.calls[before].get("time"), call.get("time"))
        if gap is not None and gap > ttl:
            life = "1 h" if ttl == TTL_1H_S else "5 min"
            causes.append(("idle", f"{_duration(gap)} since the previous call (cache lifetime {life})"))
        if any(m["kind"] == "prompt" for m in between):
            causes.append(("turn boundary", "a prompt was sent"))
        cause, detail = causes[0] if causes else ("other", "no compaction, switch, idle gap or prompt")
        rewritten = min(written, expected - read)
        rewritten_1h = round(rewritten * usage.get("cache_write_1h", 0) / written)
        found.append(Rebuild(index, call.get("time"), cause, detail, [name for name, _ in causes[1:]],
                             expected, read, written, rewritten, rewritten_1h))
    return found


def rebuild_weight(rebuild: Rebuild, weights: dict[str, float] = WEIGHTS) -> float:
    """What re-writing cost beyond reading the same tokens from the cache."""
    five = rebuild.rewritten - rebuild.rewritten_1h
    return (five * (weights["cache_write_5m"] - weights["cache_read"])
            + rebuild.rewritten_1h * (weights["cache_write_1h"] - weights["cache_read"]))


@dataclass
class Compaction:
    number: int
    at: int  # the first call after it
    time: str | None
    before: int  # prompt of the last call before it
    after: int  # prompt of the first call after it
    write_5m: int  # what that first call wrote to the cache
    write_1h: int
    followed: int  # calls after that first one, up to the next compaction or the end


def find_compactions(data: SessionData) -> tuple[list[Compaction], int]:
    """Each compaction with a call on both sides; and how many had no call before or after."""
    cards, skipped = [], 0
    ats = [m["at"] for m in data.markers if m["kind"] == "compaction"]
    n = len(data.calls)
    for number, at in enumerate(ats, 1):
        if at <= 0 or at >= n or not data.per_call_usage:
            skipped += 1
            continue
        ends = [later for later in ats if later > at]
        end = min(ends) if ends else n
        first = data.calls[at]
        cards.append(Compaction(number, at, first.get("time"), data.calls[at - 1]["prompt"], first["prompt"],
                                first["usage"].get("cache_write_5m", 0), first["usage"].get("cache_write_1h", 0),
                                end - at - 1))
    return cards, skipped


def compaction_economics(card: Compaction, weights: dict[str, float] = WEIGHTS) -> dict:
    """Write cost (weighted), saving per later call (weighted), calls to break even, paid off or not."""
    cost = card.write_5m * weights["cache_write_5m"] + card.write_1h * weights["cache_write_1h"]
    saving = (card.before - card.after) * weights["cache_read"]
    even = math.ceil(cost / saving) if saving > 0 else None
    return {"cost": cost, "saving": saving, "break_even": even,
            "paid_off": None if even is None else card.followed >= even}


def compaction_now(data: SessionData, cards: list[Compaction]) -> tuple[Compaction, str] | None:
    """A compaction after the last call, as a card (`compaction_economics` prices it), and its basis.

    After a compaction the context is the system overhead plus a summary, all written to the cache again
    (at the session's usual cache lifetime). With a compaction in the session, the first call after the
    latest one measured exactly that ("measured"); without one, the conversation text present at the last
    call (prompts and replies, which a summary condenses) stands in for the summary ("floor": the saving
    is at least this)."""
    if not data.per_call_usage or not data.calls:
        return None
    last = data.calls[-1]
    if cards:
        after, basis = cards[-1].after, "measured"
    else:
        after, basis = last["overhead"] + last["present"].get("conversation", 0), "floor"
    one_hour = sum(c["usage"].get("cache_write_1h", 0) for c in data.calls)
    five = sum(c["usage"].get("cache_write_5m", 0) for c in data.calls)
    write = (0, after) if one_hour > five else (after, 0)
    return Compaction(0, len(data.calls), last.get("time"), max(last["prompt"], after), after, *write, 0), basis


@dataclass
class ResultCost:
    tool: str
    target: str
    tokens: int
    calls: int
    added: int
    removed: int

    @property
    def billed(self) -> int:
        return self.tokens * self.calls


def exploration_costs(data: SessionData) -> dict:
    """The costliest exploration results and what a summary or a narrower read would have removed."""
    results = []
    for label, category, tokens, added, removed in data.carried:
        if category != "exploration":
            continue
        tool, _, target = str(label).partition(": ")
        results.append(ResultCost(tool, target, tokens, max(0, removed - added), added, removed))
    summary = narrow = both = carried = 0
    by_tool: dict[str, list[int]] = {}
    for result in results:
        t, c = result.tokens, result.calls
        if c <= 0:
            continue
        carried += t * c
        summary += max(0, t - SUMMARY_TOKENS) * (c - 1)
        narrow += max(0, t - NARROW_TOKENS) * c
        both += t * c - (min(t, NARROW_TOKENS) + min(t, SUMMARY_TOKENS) * (c - 1))
        entry = by_tool.setdefault(result.tool, [0, 0, 0])
        entry[0] += 1
        entry[1] += t
        entry[2] += t * c
    results.sort(key=lambda r: (-r.billed, r.added))
    return {"top": results[:TOP_RESULTS], "results": len(results), "carried": carried, "summary": summary,
            "narrow": narrow, "both": both, "by_tool": sorted(by_tool.items(), key=lambda kv: -kv[1][2])}


def _duration(seconds: float) -> str:
    minutes = int(seconds // 60)
    if minutes < 1:
        return f"{int(seconds)} s"
    if minutes < 120:
        return f"{minutes} min"
    hours = minutes / 60
    return f"{hours:.1f} h" if hours < 48 else f"{hours / 24:.1f} days"


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
    stamps = [match.decode() for match in _TIMESTAMP.findall(data)]
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
) -> Path:
    """Measure one transcript in detail and write its page, and its subagents' pages beside it.

    The page goes to `out`, else to the state directory's html/ folder; links between pages are
    relative, so a folder of pages can be moved as a whole. `sub_rows` (the index's rows by id) means
    the caller writes every page itself: subagents are listed from those rows, not measured again."""
    from xshare.html_page import render_session

    target = out or page_path(file.session_id)
    folder = target.parent
    if all_files is None:
        all_files = claude.discover(_roots(claude_roots))
    subs = subagent_files(file, all_files)
    data = claude_data(file, choice, origin)
    index_exists = sub_rows is not None or (folder / "index.html").exists()
    data.index_href = "index.html" if index_exists else None
    for sub in subs:
        sub_page = folder / page_name(sub.session_id)
        if sub_rows is not None:
            if sub.session_id in sub_rows:
                data.subagents.append(Linked(sub_rows[sub.session_id], sub_page.name))
            continue
        sub_data = claude_data(sub, choice, origin)
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
    return target


def _write_page(path: Path, data: SessionData, files: list[TranscriptFile], render) -> None:
    stamp = _stamp(files, data.row.get("tokenizer", ""))
    atomic_write(path, render(data, stamp=stamp).encode("utf-8"))


def write_hermes_page(session_id: str, databases: list[Path], choice: tokenizers.TokenizerChoice,
                      out: Path | None = None) -> Path | None:
    """A Hermes session's page, with what its data supports: Hermes records the bill per session, not
    per call, so the page says it cannot have the cache sections. None if no database holds the id."""
    from collections import Counter

    from xshare import sessions
    from xshare.html_page import render_session
    from xshare.sources import hermes

    sessions._init_worker(choice)
    counter = sessions._counter
    for database in databases:
        problems: Counter = Counter()
        ledgers: dict = {}
        rows = hermes.read_database(database, counter.count, counter.name, problems, only=session_id,
                                    ledgers=ledgers)
        if rows:
            data = from_ledger(ledgers[session_id], rows[0], origin=f"Hermes {shown_path(database)}",
                               tokenizer_note=counter.choice.note, problems=dict(problems))
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
) -> tuple[Path, int]:
    """The index of every Claude Code session (one that made no API call too: its share is unknown), each
    linked to its page; pages that are missing or older than their transcript are (re)written first.
    Returns the index path and how many pages were written."""
    from xshare.html_page import render_index
    from xshare.sessions import measure_claude

    target = out or html_dir() / "index.html"
    folder = target.parent
    files = claude.discover(_roots(claude_roots))
    measured = measure_claude(files, choice, use_cache=use_cache)
    rows = {row["id"]: row for row in measured.rows}
    written = 0
    entries = []
    for file in files:
        row = rows.get(file.session_id)
        if row is None:
            continue  # it vanished or could not be read (measure_claude counted it as a problem)
        page = folder / page_name(file.session_id)
        subs = subagent_files(file, files)
        if _page_stamp(page) != _stamp([file, *subs], measured.tokenizer.name):
            write_session_page(file, choice, page, all_files=files, sub_rows=rows, origin=origin)
            written += 1
        entries.append(Linked(row, page.name))
    entries.sort(key=lambda entry: entry.row.get("last_activity") or "", reverse=True)
    atomic_write(target, render_index(entries, measured.tokenizer).encode("utf-8"))
    return target, written


def _hermes_html(args: argparse.Namespace, choice: tokenizers.TokenizerChoice, out: Path | None,
                 say: Callable[[str], None]) -> int:
    """`xshare html ID` for an id that no Claude Code transcript has: a Hermes session, if one has it."""
    from xshare.sources import hermes

    databases = [Path(path).expanduser() for path in args.hermes_db] if args.hermes_db else hermes.default_databases()
    try:
        path = write_hermes_page(args.session, databases, choice, out)
    except OSError as error:
        say(f"could not write the page: {error.strerror or error}")
        return 1
    if path is None:  # another agent's session (Codex, Gemini CLI, OpenCode, OpenClaw)?
        from xshare.cli import _agent_homes
        from xshare.html_agents import write_agent_page

        try:
            path, problems = write_agent_page(args.session, _agent_homes(args), choice, out)
        except OSError as error:
            say(f"could not write the page: {error.strerror or error}")
            return 1
        for kind, count in sorted(problems.items()):
            say(f"{kind}: {count:,}")
    if path is None:
        say(f"no Claude Code transcript or Hermes session matches {args.session!r}, nor any Codex, Gemini CLI, "
            "OpenCode or OpenClaw session")
        return 2
    return _done(path, args.open)


def _done(path: Path, open_it: bool) -> int:
    print(path)
    if open_it:
        import webbrowser

        if not webbrowser.open(path.resolve().as_uri()):
            print("xshare: no browser could be opened; the path is above", file=sys.stderr)
    return 0


def cli_html(args: argparse.Namespace, say: Callable[[str], None]) -> int:
    """`xshare html [SESSION] [-o FILE] [--open] [--index] [--demo]`; `say` prints a message to stderr."""
    choice = tokenizers.choose(estimate=args.estimate, vocab=args.vocab)
    out = Path(args.output).expanduser() if args.output else None
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

    if args.index:
        if args.session:
            say("give a SESSION or --index, not both")
            return 2
        try:
            path, written = write_index(choice, out, args.claude_root, not args.no_cache, origin)
        except OSError as error:
            say(f"could not write the index: {error.strerror or error}")
            return 1
        if written:
            say(f"wrote {written:,} session page(s) beside the index")
    else:
        from xshare.sessions import find_session

        if args.session:
            file = find_session(args.session, args.claude_root) if not args.hermes_db else None
            if file is None:
                return _hermes_html(args, choice, out, say)
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
            path = write_session_page(file, choice, out, args.claude_root, origin=origin)
        except OSError as error:
            say(f"could not write the page: {error.strerror or error}")
            return 1
    return _done(path, args.open)
