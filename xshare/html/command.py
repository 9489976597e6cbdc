"""`xshare html`: one session's page (Claude Code, Hermes or another agent's, found by id or path), the most
recent session's, or --index (every Claude Code session); --demo on the invented corpus."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from xshare.html.agents import write_agent_page, write_hermes_page
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
from xshare.report.outputs import refusal
from xshare.sessions.claude_code import find_session
from xshare.sources.agents import homes_given
from xshare.sources.claude.files import discover
from xshare.sources.hermes import state_db as hermes
from xshare.text import printable


def _hermes_html(args: argparse.Namespace, choice: tokenizers.TokenizerChoice, out: Path | None,
                 say: Callable[[str], None], problems: Counter) -> int:
    """`xshare html ID` for an id that no Claude Code transcript has: a Hermes session, if one has it."""
    databases = [Path(path).expanduser() for path in args.hermes_db] if args.hermes_db else hermes.default_databases()
    try:
        path = write_hermes_page(args.session, databases, choice, out, problems)
    except OSError as error:
        say(f"could not write the page: {error.strerror or error}")
        return 1
    if path is None:  # another agent's session (Codex, Gemini CLI, OpenCode, OpenClaw)?
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
    for kind, count in sorted(problems.items()):
        say(f"{kind}: {count:,}" + (f" ({notes[kind]})" if kind in notes else ""))
    problems.clear()


def cli_html(args: argparse.Namespace, say: Callable[[str], None]) -> int:
    """`xshare html [SESSION] [-o FILE] [--open] [--index] [--demo]`; `say` prints a message to stderr,
    including what went wrong reading the sessions (as `xshare report` does)."""
    problems: Counter = Counter()
    try:
        return _cli_html(args, say, problems)
    finally:
        _say_problems(problems, say, getattr(args, "demo", False))


def _cli_html(args: argparse.Namespace, say: Callable[[str], None], problems: Counter) -> int:
    out = Path(args.output).expanduser() if args.output else None
    why = refusal(out, args.claude_root) if out else None
    if why:
        say(f"could not write the page {out}: {why}")
        return 1
    origin, demo = shown_path, None
    if getattr(args, "demo", False):
        # the invented corpus lives in a temporary folder; its pages go to html/demo/, apart from real ones
        from xshare.demo.corpus import temporary_demo_corpus  # its invented projects cost 40 ms to import

        demo, root = temporary_demo_corpus()  # removed when this command returns
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
        if args.session:
            file = find_session(args.session, args.claude_root) if not args.hermes_db else None
            if file is None:
                return _hermes_html(args, choice, out, say, problems)
        else:
            recent = most_recent(args.claude_root)
            if not recent:
                for folder in transcript_roots(args.claude_root):
                    say(f"looked for Claude Code transcripts under {folder}")
                say("no session found; give a transcript path or a session id (or try --demo)")
                return 2
            # the demo's most recent session is a short one; its largest shows every section
            file = max(recent, key=lambda f: f.path.stat().st_size) if demo else recent[0]
        all_files = discover(transcript_roots(args.claude_root))
        subs = subagent_files(file, all_files)  # their pages go beside it, linked from it: said, not quiet
        try:
            path = write_session_page(file, choice, out, args.claude_root, origin=origin, problems=problems,
                                      all_files=all_files, subs=subs)
        except OSError as error:
            say(f"could not write the page: {error.strerror or error}")
            return 1
        if subs:
            say(f"wrote {len(subs):,} subagent page(s) beside it, linked from its page")
    return _done(path, args.open)
