"""`xshare html`: one session's page (any agent's, found through the registry by path, id or id prefix), the
most recent session's, or --index (every agent's sessions); --demo on the invented corpus."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from xshare.agents.claude_code.files import discover
from xshare.agents.hermes import state_db as hermes
from xshare.agents.protocol import Ambiguous, Looking
from xshare.html.agents import ledger_pages, write_found_page
from xshare.html.habit_store import habit_summaries
from xshare.html.write import (
    html_dir,
    most_recent,
    shown_path,
    subagent_files,
    transcript_roots,
    write_index,
    write_session_page,
)
from xshare.measure import tokens as tokenizers
from xshare.measure.prices import PriceTable
from xshare.report.outputs import refusal
from xshare.sessions.registry import find, names
from xshare.text import printable, problem_lines


@dataclass(frozen=True)
class HtmlOptions:
    """What `xshare html` was asked for (built from the command line in commands/session.py)."""

    looking: Looking  # where each agent's sessions are, the tokenizer, whether to use the cache
    session: str | None = None  # a path, an id or the start of one; None: the most recent session
    output: str | None = None
    index: bool = False
    open: bool = False
    demo: bool = False
    estimate: bool = False  # for the demo's own tokenizer choice
    vocab: str | None = None
    prices: PriceTable | None = None  # the pages' dollars at list price; None: dollars turned off

    @property
    def claude_roots(self) -> list[str] | None:
        return self.looking.given("claude-code")


def _found_html(args: HtmlOptions, looking: Looking, out: Path | None, origin: Callable[[Path], str],
                say: Callable[[str], None], problems: Counter) -> int:
    """`xshare html SESSION`: whichever agent's session it names."""
    assert args.session is not None  # the caller's: a session named
    found = find(args.session, looking, problems, detail=True)
    if found is None or isinstance(found, Ambiguous):
        locked = any(hermes.LOCKED in kind for kind in problems)
        _say_problems(problems, say)  # first, so the verdict below is the last line
        if isinstance(found, Ambiguous):
            say(ambiguous_line(found))
        elif locked:
            say(f"could not look for {args.session!r}: a Hermes database is locked by another program; "
                "try again when it is free")
        else:
            say(f"no session of {names()} matches {args.session!r}")
        return 2
    try:
        if found.transcript is not None:  # measured with its subagents' files, their pages beside it
            all_files = discover(transcript_roots(args.claude_roots))
            subs = subagent_files(found.transcript, all_files)
            path = write_session_page(found.transcript, looking.choice, out, args.claude_roots, origin=origin,
                                      problems=problems, all_files=all_files, subs=subs, prices=args.prices)
            _say_subagent_pages(subs, say)
        else:
            path = write_found_page(found, out, prices=args.prices)
    except OSError as error:
        say(f"could not write the page: {error.strerror or error}")
        return 1
    return _done(path, args.open)


def ambiguous_line(ambiguous: Ambiguous) -> str:
    """Why an id, a prefix or a database is refused, with the candidates (as git lists them), on one line
    (`html`, `session`)."""
    shown = ", ".join(ambiguous.candidates[:20])
    more = f" and {len(ambiguous.candidates) - 20:,} more" if len(ambiguous.candidates) > 20 else ""
    count = len(ambiguous.candidates)
    if ambiguous.why == "same id":
        return (f"{ambiguous.wanted!r} is the id of {count:,} sessions in different files; give its file instead (a "
                f"database's session: the id, with only that database named): {shown}{more}")
    what = (f"{count:,} subagent sessions (the file of the session that ran them is gone)"
            if ambiguous.why == "subagents" else f"{count:,} sessions")
    return f"{ambiguous.wanted!r} names {what}; give more of the id: {shown}{more}"


def _done(path: Path, open_it: bool) -> int:
    print(printable(str(path)))
    if open_it:
        import webbrowser  # only with --open

        if not webbrowser.open(path.resolve().as_uri()):
            print("xshare: no browser could be opened; the path is above", file=sys.stderr)
    return 0


def _say_problems(problems: Counter, say: Callable[[str], None], demo: bool = False) -> None:
    """One line per kind of problem, as `xshare report` prints them (the demo's labelled as on purpose);
    each said once."""
    notes: dict[str, str] = {}
    if demo:
        from xshare.demo.corpus import DELIBERATE_ODDITIES as notes
    for line in problem_lines(problems, notes):
        say(line)
    problems.clear()


def cli_html(args: HtmlOptions, say: Callable[[str], None]) -> int:
    """`xshare html [SESSION] [-o FILE] [--open] [--index] [--demo]`; `say` prints a message to stderr,
    including what went wrong reading the sessions (as `xshare report` does)."""
    problems: Counter = Counter()
    try:
        return _cli_html(args, args.looking, say, problems)
    finally:
        _say_problems(problems, say, getattr(args, "demo", False))


def _cli_html(args: HtmlOptions, looking: Looking, say: Callable[[str], None], problems: Counter) -> int:
    out = Path(args.output).expanduser() if args.output else None
    why = refusal(out, args.claude_roots) if out else None
    if why:
        say(f"could not write the page {out}: {why}")
        return 1
    origin, demo = shown_path, None
    if getattr(args, "demo", False):
        # the invented corpus lives in a temporary folder; its pages go to html/demo/, apart from real ones
        from xshare.demo.corpus import temporary_demo_corpus  # its invented projects cost 40 ms to import

        demo, root = temporary_demo_corpus()  # removed when this command returns
        choice = tokenizers.choose(estimate=args.estimate, vocab=args.vocab, remember=False)
        looking = Looking({agent: [] for agent in looking.homes} | {"claude-code": [str(root)]}, choice,
                          use_cache=False)
        args = replace(args, looking=looking)
        out = out or html_dir() / "demo" / ("index.html" if args.index else "session.html")

        def origin(path: Path) -> str:
            return f"xshare's invented demo corpus: {path.relative_to(root).as_posix()}"

    choice = looking.choice
    if args.index:
        if args.session:
            say("give a SESSION or --index, not both")
            return 2
        try:
            # the habits' detailed reads repeat the pages' (their problems were counted there)
            path, written = write_index(choice, out, args.claude_roots, looking.use_cache, origin, problems,
                                        others=lambda folder, taken: ledger_pages(looking, folder, problems, taken,
                                                                                  args.prices),
                                        habits=lambda measured: habit_summaries(looking, None, measured, Counter()),
                                        prices=args.prices)
        except OSError as error:
            say(f"could not write the index: {error.strerror or error}")
            return 1
        if path is None:  # an index of nothing is no page: said, as `report` says an empty window
            for folder in transcript_roots(args.claude_roots):
                say(f"looked for Claude Code transcripts under {folder}")
            say("no session to list, so no index was written; try --demo for the sample's index")
            return 2
        if written:
            say(f"wrote {written:,} session page(s) beside the index")
    else:
        if args.session:
            return _found_html(args, looking, out, origin, say, problems)
        else:
            recent = most_recent(args.claude_roots)
            if not recent:
                for folder in transcript_roots(args.claude_roots):
                    say(f"looked for Claude Code transcripts under {folder}")
                say("no session found; give a transcript path or a session id (or try --demo)")
                return 2
            # the demo's most recent session is a short one; its largest shows every section
            file = max(recent, key=lambda f: f.path.stat().st_size) if demo else recent[0]
        all_files = discover(transcript_roots(args.claude_roots))
        subs = subagent_files(file, all_files)  # their pages go beside it, linked from it: said, not quiet
        try:
            path = write_session_page(file, choice, out, args.claude_roots, origin=origin, problems=problems,
                                      all_files=all_files, subs=subs, prices=args.prices)
        except OSError as error:
            say(f"could not write the page: {error.strerror or error}")
            return 1
        _say_subagent_pages(subs, say)
    return _done(path, args.open)


def _say_subagent_pages(subs: list, say: Callable[[str], None]) -> None:
    """Pages written beside the one asked for are said, not left to be found."""
    if subs:
        say(f"wrote {len(subs):,} subagent page(s) beside it, linked from its page")
