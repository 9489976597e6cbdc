"""`xshare html`: one session's page (any agent's, found through the registry by path, id or id prefix), the
most recent session's (every adapter asked), or --index (every agent's sessions); --demo on the invented corpus.
The pages themselves are built and written by html/."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from xshare.commands.common import looking, price_table, say
from xshare.printing import printable, problem_lines

if TYPE_CHECKING:  # every `xshare` run imports this module: the registry and the readers only when `html` runs
    from xshare.agents.protocol import Ambiguous, Found, Looking
    from xshare.measure.prices import PriceTable


@dataclass(frozen=True)
class HtmlOptions:
    """What `xshare html` was asked for (built from the command line by `html_options`)."""

    looking: Looking  # where each agent's sessions are, the tokenizer, whether to use the cache
    session: str | None = None  # a path, an id or the start of one; None: the most recent session
    output: str | None = None
    index: bool = False
    open: bool = False
    demo: bool = False
    estimate: bool = False  # for the demo's own tokenizer choice
    vocab: str | None = None
    prices: PriceTable | None = None  # the pages' dollars at list price; None: dollars turned off


def cmd_html(args: argparse.Namespace) -> int:
    """One session's HTML summary (or --index: every session's), written to a file whose path is printed."""
    try:  # a --prices file xshare cannot use is refused before anything is read, as the report does
        options = html_options(args)
    except ValueError as error:
        say(str(error))
        return 2
    return cli_html(options, say)


def html_options(args: argparse.Namespace) -> HtmlOptions:
    """`xshare html`'s options (the price table; PriceError for a bad --prices file)."""
    return HtmlOptions(looking(args), args.session, args.output, args.index, args.open, getattr(args, "demo", False),
                       args.estimate, args.vocab, price_table(args))


def cli_html(args: HtmlOptions, say: Callable[[str], None]) -> int:
    """`xshare html [SESSION] [-o FILE] [--open] [--index] [--demo]`; `say` prints a message to stderr,
    including what went wrong reading the sessions (as `xshare report` does)."""
    problems: Counter = Counter()
    try:
        return _cli_html(args, say, problems)
    finally:
        _say_problems(problems, say, args.demo)


def _cli_html(args: HtmlOptions, say: Callable[[str], None], problems: Counter) -> int:
    from xshare.agents.protocol import Looking
    from xshare.html.write import html_dir, shown_path
    from xshare.measure import tokens as tokenizers
    from xshare.report.outputs import refusal

    out = Path(args.output).expanduser() if args.output else None
    why = refusal(out, args.looking.homes) if out else None
    if why:
        say(f"could not write the page {out}: {why}")
        return 1
    origin, demo = shown_path, None
    if args.demo:
        # the invented corpus lives in a temporary folder; its pages go to html/demo/, apart from real ones
        from xshare.demo.corpus import demo_homes, showcase, temporary_demo_corpus  # 40 ms to import

        demo, root = temporary_demo_corpus()  # removed when this command returns
        choice = tokenizers.choose(estimate=args.estimate, vocab=args.vocab, remember=False)
        homes: dict[str, list[str] | None] = {agent: [] for agent in args.looking.homes}
        homes.update(demo_homes(root))
        # the demo's most recent session is a short one; its largest shows every section
        args = replace(args, looking=Looking(homes, choice, use_cache=False),
                       session=args.session or (None if args.index else str(showcase(root))))
        out = out or html_dir() / "demo" / ("index.html" if args.index else "session.html")

        def origin(path: Path) -> str:
            return f"xshare's invented demo corpus: {path.relative_to(root).as_posix()}"

    if args.index:
        return _index(args, out, origin, say, problems)
    found = _session(args, say, problems) if args.session else _latest(args.looking, say, problems)
    if found is None:
        return 2
    return _write(found, args, out, origin, say, problems)


def _index(args: HtmlOptions, out: Path | None, origin: Callable[[Path], str], say: Callable[[str], None],
           problems: Counter) -> int:
    from xshare.html.habit_store import habit_summaries
    from xshare.html.write import write_index

    if args.session:
        say("give a SESSION or --index, not both")
        return 2
    looking = args.looking
    try:
        # the habits' detailed reads repeat the pages' (their problems were counted there)
        path, written = write_index(looking, out, origin, problems,
                                    habits=lambda: habit_summaries(looking, None, Counter()), prices=args.prices)
    except OSError as error:
        say(f"could not write the index: {error.strerror or error}")
        return 1
    if path is None:  # an index of nothing is no page: said, as `report` says an empty window
        _say_looked(looking, say)
        say("no session to list, so no index was written; try --demo for the sample's index")
        return 2
    if written:
        say(f"wrote {written:,} session page(s) beside the index")
    return _done(path, args.open)


def _session(args: HtmlOptions, say: Callable[[str], None], problems: Counter) -> Found | None:
    """`xshare html SESSION`: whichever agent's session it names, with its ledger."""
    from xshare.agents.common.sqlite import LOCKED
    from xshare.agents.protocol import Ambiguous, Found
    from xshare.sessions import registry

    found = registry.find(args.session or "", args.looking, problems, detail=True)
    if isinstance(found, Found):
        return found
    locked = any(LOCKED in kind for kind in problems)
    _say_problems(problems, say)  # first, so the verdict below is the last line
    if isinstance(found, Ambiguous):
        say(ambiguous_line(found))
    elif locked:
        say(f"could not look for {args.session!r}: a database is locked by another program; try again when it is free")
    else:
        say(f"no session of {registry.names()} matches {args.session!r}")
    return None


def _latest(looking: Looking, say: Callable[[str], None], problems: Counter) -> Found | None:
    """The bare `xshare html`: the most recently active session of any agent, with its ledger."""
    from xshare.sessions import registry

    latest = [(found, adapter) for adapter in registry.REGISTRY if looking.given(adapter.agent) != []
              if (found := adapter.latest(looking, problems)) is not None]
    if latest:
        found, adapter = max(latest, key=lambda pair: pair[0].row.get("last_activity") or "")
        detailed = adapter.detail(found, looking, problems)
        if detailed is not None:
            return detailed
    _say_looked(looking, say)
    say("no session found; give a session's file or its id (or try --demo)")
    return None


def _write(found: Found, args: HtmlOptions, out: Path | None, origin: Callable[[Path], str],
           say: Callable[[str], None], problems: Counter) -> int:
    from xshare.html.write import write_page
    from xshare.sessions import registry

    try:
        path = write_page(found, registry.BY_AGENT[found.agent], args.looking, out, origin=origin, problems=problems,
                          prices=args.prices)
    except OSError as error:
        say(f"could not write the page: {error.strerror or error}")
        return 1
    if found.children:  # pages written beside the one asked for are said, not left to be found
        say(f"wrote {len(found.children):,} subagent page(s) beside it, linked from its page")
    return _done(path, args.open)


def _say_looked(looking: Looking, say: Callable[[str], None]) -> None:
    from xshare.sessions import registry

    for adapter in registry.REGISTRY:
        if looking.given(adapter.agent) != []:
            for place in adapter.describe(looking.given(adapter.agent)):
                say(f"looked for {place}")


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
