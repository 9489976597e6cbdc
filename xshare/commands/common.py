"""What the `xshare` commands share: their messages on stderr, JSON on stdout, the window and the
tokenizer the flags ask for, and where to look for each agent's sessions.

Exit codes (every command): 0 done; 1 a file the user asked for could not be written; 2 nothing to
measure in the window, or a bad argument. Stdout carries aggregates only, except where the user asked for
one session (`xshare session`); messages and problems go to stderr.

Every `xshare` run imports these modules (the hook and `statusline render` through the installed script
too), so each command imports what it needs inside its function: one command never pays for another's.
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from xshare.printing import json_text, printable_lines, problem_lines

if TYPE_CHECKING:
    from xshare.measure.tokens import TokenizerChoice


def say(message: str) -> None:
    print(printable_lines(f"xshare: {message}"), file=sys.stderr)


def print_json(value: object) -> None:
    print(json_text(value))


def report_problems(problems: dict, demo: bool = False) -> None:
    """One line per kind of problem, never one per line of input; the demo's are labelled as on purpose."""
    notes: dict[str, str] = {}
    if demo:
        from xshare.demo.corpus import DELIBERATE_ODDITIES as notes
    for line in problem_lines(problems, notes):
        say(line)


def window_from(args: argparse.Namespace):
    """The window the flags ask for, or None (after saying why) for a date that does not parse."""
    from xshare.report.render import Window

    try:
        return Window.build(datetime.now(timezone.utc), since_days=args.since_days, since=args.since,
                            until=args.until, everything=args.all, lag_hours=args.lag_hours)
    except ValueError as error:
        say(str(error))
        return None


def price_table(args: argparse.Namespace):
    """The list prices the flags ask for (--prices laid over the shipped table), or None when dollars are
    turned off (--no-dollars, XSHARE_DOLLARS); measure.prices.PriceError for a --prices file xshare cannot use."""
    from xshare.measure import prices

    if not prices.dollars_enabled(getattr(args, "no_dollars", False)):
        return None
    return prices.load(getattr(args, "prices", None))


def tokenizer_choice(args: argparse.Namespace) -> TokenizerChoice:
    from xshare.measure import tokens as tokenizers

    return tokenizers.choose(estimate=args.estimate, vocab=args.vocab, remember=not args.no_cache)


def looking(args: argparse.Namespace, choice: TokenizerChoice | None = None, since: datetime | None = None,
            warn: bool = True):
    """Where to look for each agent's sessions (its flag, by agent) and how to count: the typed options
    the registry's adapters take (never the Namespace). `warn=False` for a command's second look at the
    same places: their warnings were said at the first."""
    from xshare.agents.protocol import Looking

    homes = named_homes(args)
    if any(given is not None for given in homes.values()):  # a report on named folders is on those alone
        homes = {agent: [] if given is None else given for agent, given in homes.items()}
        if warn:
            _warn_named(homes)
    return Looking(homes, choice or tokenizer_choice(args), since, not args.no_cache)


def _warn_named(homes: dict) -> None:
    """One line per named folder or database that does not exist or holds none of its agent's sessions (a
    typo must not read as "no sessions"), naming the flag it was given to."""
    from xshare.sessions.registry import BY_AGENT

    for agent, given in homes.items():
        adapter = BY_AGENT[agent]
        flag = "--" + adapter.flag.replace("_", "-")
        for place in given:
            if not Path(place).expanduser().exists():
                say(f"{flag} {place}: no such file or folder{_did_you_mean(Path(place).expanduser())}")
            elif not adapter.has_records(place):
                say(f"{flag} {place}: no {adapter.name} sessions in it")


def _did_you_mean(missing: Path) -> str:
    """A sibling whose name is close to the one given (`~/.claud` -> `~/.claude`), as a hint; else nothing."""
    import difflib  # only when a word went wrong: every run builds these

    try:
        names = [entry.name for entry in os.scandir(missing.parent)]
    except OSError:
        return ""
    close = difflib.get_close_matches(missing.name, names, n=1, cutoff=0.75)
    return f" (did you mean {missing.parent / close[0]}?)" if close else ""


def named_homes(args: argparse.Namespace) -> dict[str, list[str] | None]:
    """The folders and databases named for each agent (None: none named), as the flags give them."""
    from xshare.sessions.registry import REGISTRY

    return {adapter.agent: getattr(args, adapter.flag, None) for adapter in REGISTRY}
