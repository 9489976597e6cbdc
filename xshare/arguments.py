"""The command line's arguments: every `xshare` command, its flags and their help.

Only the parser: what each command does is in xshare/commands/ (report.py, session.py, plugin.py,
common.py), which command runs which is in xshare/cli.py. Stdlib only, as every `xshare` run builds it.
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap

from xshare import __version__
from xshare.agents.table import AGENTS, names_listed
from xshare.printing import columns_set

DESCRIPTION = textwrap.fill(
    "How much of your coding agent's token bill went to reading and searching code (exploration), measured from "
    f"the sessions {names_listed()} recorded on this machine. Your data stays here; the report prints totals "
    "only, never a prompt, path or session id.", 99)
EXAMPLES = """\
start here:
  xshare report --demo          a report on the invented sample that ships with xshare
  xshare report                 your sessions of the last 30 days
  xshare sessions               the list of them, newest first, with their ids
  xshare advice                 what each habit cost you, and what changing it would save
  xshare html                   a page on your latest session, call by call
  xshare statusline install     the share of the session you're in, under Claude Code's prompt

`xshare COMMAND --help` says more about each command."""
# what bare `xshare` prints: a short orientation instead of argparse's "arguments are required"
ORIENTATION = f"{DESCRIPTION}\n\n{EXAMPLES}\n"


def _terminal_columns() -> int:
    """The terminal's width as shutil.get_terminal_size finds it ($COLUMNS, else the terminal, else 80)."""
    columns = columns_set()
    if columns is None:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _Raw(argparse.RawDescriptionHelpFormatter):
    """Keeps the examples' lines as written. Its width is found here: argparse would import shutil for it
    (with bz2 and lzma: 3 ms of every command's start)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position,
                         _terminal_columns() - 2 if width is None else width)


_RAW = _Raw


def _command(commands, name: str, summary: str, description: str, examples: str) -> argparse.ArgumentParser:
    """A command whose --help says what it does for the user, with examples."""
    return commands.add_parser(name, help=summary, description=description, epilog=f"examples:\n{examples}",
                               formatter_class=_RAW)


def add_measure_options(parser: argparse.ArgumentParser) -> None:
    for line in AGENTS:
        parser.add_argument(line.option, action="append", metavar=line.metavar, help=line.help)
    parser.add_argument("--estimate", action="store_true",
                        help="count characters / 4 instead of o200k_base tokens (quicker, rougher)")
    parser.add_argument("--vocab", metavar="FILE",
                        help="another o200k_base.tiktoken file to count with (or $XSHARE_VOCAB); the one "
                             "xshare ships is used otherwise")
    parser.add_argument("--no-cache", action="store_true",
                        help="read every transcript and count every text again (no cache, no count store)")


def add_price_options(parser: argparse.ArgumentParser, instead: str = "tokens only") -> None:
    """--prices and --no-dollars, as every command that shows dollars takes them."""
    parser.add_argument("--prices", metavar="FILE",
                        help="a price table (prices.json's shape: dollars per million tokens by model) laid over "
                             "the one xshare ships")
    parser.add_argument("--no-dollars", action="store_true",
                        help=f"{instead}, no dollars (for a subscription; or set XSHARE_DOLLARS=off)")


MAX_DAYS = 36_525  # a century: any longer window is --all, and dates before year 1 do not exist


def _days(text: str) -> int:
    """--since-days: a whole number of days a date can reach back to (argparse turns the error into exit 2)."""
    try:
        days = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number of days: {text!r}") from None
    if not 0 <= days <= MAX_DAYS:
        raise argparse.ArgumentTypeError(f"{days} is not between 0 and {MAX_DAYS:,} days (--all takes every session)")
    return days


def _count(text: str) -> int:
    """--limit: a whole number, 0 or more."""
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if number < 0:
        raise argparse.ArgumentTypeError(f"{number} is below 0 (0 lists every session)")
    return number


def _hours(text: str) -> float:
    """--lag-hours: a finite number of hours from 0 up to MAX_DAYS' worth (nan and inf are not hours)."""
    try:
        hours = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of hours: {text!r}") from None
    if not 0 <= hours <= MAX_DAYS * 24:  # also false for nan
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and {MAX_DAYS * 24:,} hours")
    return hours


def add_window_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--since-days", type=_days, default=30, metavar="N",
                        help="sessions started in the last N days (default 30)")
    parser.add_argument("--since", metavar="DATE", help="sessions started on or after DATE (UTC unless offset)")
    parser.add_argument("--until", metavar="DATE", help="sessions started up to DATE (a date means its whole UTC day)")
    parser.add_argument("--all", action="store_true", help="every session, whenever it started")
    parser.add_argument("--lag-hours", type=_hours, default=0.0, metavar="H",
                        help="end the window H hours ago; sessions still active then wait for a later run")


# the status line's actions: what each does, and an example
STATUSLINE_ACTIONS = {
    "render": ("print the line for the session Claude Code describes on stdin (what the installed line runs)",
               "  xshare statusline render --no-color < payload.json"),
    "install": ("add the line to Claude Code's settings.json (the file as it was is kept beside it)",
                "  xshare statusline install --format 'explore {context} · {calls} calls'"),
    "command": ("print the command that shows only the --fields chosen, for another status line's custom-command "
                "widget or segment (ccstatusline, claude-powerline)",
                "  xshare statusline command --fields context,fill"),
    "remove": ("take xshare's line out of Claude Code's settings", "  xshare statusline remove"),
    "status": ("say whether the line is installed, and what it runs", "  xshare statusline status"),
}
# what the line is and what it reads: the contract with Claude Code (and with anyone who pipes JSON into it)
STATUSLINE_ABOUT = """\
Under Claude Code's prompt, the exploration share of the session you're in,
kept up to date by the hook. Claude Code runs the line with its status JSON on
stdin; xshare reads two of its fields: `session_id` (whose figures to show) and
`transcript_path` (that session's transcript, measured when no hook has yet).
A session not measured yet says what the line waits for."""


def add_statusline_options(parser: argparse.ArgumentParser, action: str) -> None:
    """The status line's flags that `action` takes ("all": every one, as `xshare statusline` parses them)."""
    from xshare.live.status_render import DEFAULT_LINE2, FIELD_NAMES  # only for the status line's own flags

    fields = " ".join(FIELD_NAMES)  # every field live/status_render.py fills, as its help names them
    if action in ("all", "render", "install"):
        parser.add_argument("--format", help="the first line's fields in braces, e.g. 'explore {context} · {calls} "
                            f"calls'; fields: {fields}")
        parser.add_argument("--line2", help=f"the second line's fields (default: '{DEFAULT_LINE2}'); "
                            f"fields: {fields}")
        parser.add_argument("--no-line2", action="store_true", help="one line only: no second line")
    if action in ("all", "render", "command"):
        parser.add_argument("--fields", metavar="NAMES", help="only these fields, labelled, on one line without "
                            f"colours (e.g. context,fill), for another program's status line; fields: {fields}")
    if action in ("all", "render"):
        parser.add_argument("--no-color", action="store_true", help="no ANSI colours (NO_COLOR also works)")
    if action in ("all", "install"):
        parser.add_argument("--force", action="store_true", help="install: replace another program's status line")


def statusline_parser(action: str) -> argparse.ArgumentParser:
    """The parser whose --help `xshare statusline ACTION --help` prints: that action's words and flags."""
    what, example = STATUSLINE_ACTIONS[action]
    parser = argparse.ArgumentParser(prog=f"xshare statusline {action}", description=what[:1].upper() + what[1:] + ".",
                                     epilog=f"example:\n{example}", formatter_class=_RAW)
    add_statusline_options(parser, action)
    return parser


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; given the command the words name, only its flags are added."""
    return _build(command if command in COMMAND_NAMES else None)[0]


def command_parser(name: str) -> argparse.ArgumentParser | None:
    """The parser of one command (`report`, `html`, ...): its usage, its flags; None for no such command."""
    return _build()[1].get(name)


def unknown_words(parser: argparse.ArgumentParser, unknown: list[str]) -> str:
    """What argparse would say of words a command does not take, with the flag each was likely meant to be
    (`--sinc-days` -> `--since-days`), as git and pip suggest."""
    import difflib  # only when a word went wrong: every run builds these

    flags = [flag for action in parser._actions for flag in action.option_strings]  # argparse's own list
    said = []
    for word in unknown:
        name = word.split("=", 1)[0]
        close = difflib.get_close_matches(name, flags, n=1, cutoff=0.75) if name.startswith("--") else []
        said.append(f"{word} (did you mean {close[0]}?)" if close else word)
    return "unrecognized arguments: " + " ".join(said)


def _no_flags(parser: argparse.ArgumentParser) -> None:
    """`hook` takes none: Claude Code passes its JSON on stdin."""


def _report_flags(parser: argparse.ArgumentParser) -> None:
    add_measure_options(parser)
    add_window_options(parser)
    parser.add_argument("--json", action="store_true", help="the report as JSON")
    parser.add_argument("--rows", metavar="FILE", help="also write one JSON line per session to FILE")
    parser.add_argument("--demo", action="store_true", help="run on the sample corpus that ships with xshare")
    parser.add_argument("--no-history", action="store_true",
                        help="leave out remembered sessions whose transcript is gone")
    parser.add_argument("--from-rows", nargs="+", metavar="FILE",
                        help="a team's rollup: rows files from `collect --rows` on many machines, no transcripts")
    add_price_options(parser)
    parser.add_argument("--by", choices=("week", "month"),
                        help="also the groups per week or month (of start times, in UTC)")


def _mark_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("label", nargs="*", help='what changed, e.g. "added NeuralMind"')
    parser.add_argument("--at", metavar="DATE",
                        help="when (a date or ISO timestamp, UTC unless offset; stored in UTC); default now")
    parser.add_argument("--remove", metavar="N", type=int,
                        help="remove mark N, as `xshare mark` numbers them (1 is the oldest)")


def _collect_flags(parser: argparse.ArgumentParser) -> None:
    add_measure_options(parser)
    add_window_options(parser)
    parser.add_argument("--rows", metavar="FILE", help="the rows file to update")
    parser.add_argument("--otlp", metavar="ENDPOINT", nargs="?", const="",
                        help="also export the window's sessions as OpenTelemetry counters (OTLP over http/protobuf) "
                             "to ENDPOINT, or where the OTEL_EXPORTER_OTLP_* variables say; needs xshare[otel]")


def _sessions_flags(parser: argparse.ArgumentParser) -> None:
    add_measure_options(parser)
    add_window_options(parser)
    parser.add_argument("--limit", type=_count, default=20, metavar="N",
                        help="list the N newest (default 20; 0: every one)")
    parser.add_argument("--subagents", action="store_true", help="list subagents' sessions too")
    parser.add_argument("--json", action="store_true", help="the list as JSON, with full ids")
    parser.add_argument("--demo", action="store_true", help="list the sample corpus that ships with xshare")
    parser.add_argument("--sort", choices=("started", "cost"), default="started",
                        help="newest first (started, the default) or costliest first at list price (cost; "
                             "sessions with no price last)")
    add_price_options(parser)


def _advice_flags(parser: argparse.ArgumentParser) -> None:
    add_measure_options(parser)
    add_window_options(parser)
    parser.add_argument("--json", action="store_true", help="every figure and its assumption as JSON")
    parser.add_argument("--demo", action="store_true", help="run on the sample corpus that ships with xshare")
    add_price_options(parser, "weights only")


def _session_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session", metavar="PATH_OR_ID", help="a transcript path or a session id")
    add_measure_options(parser)
    parser.add_argument("--json", action="store_true", help="the row as JSON")
    add_price_options(parser)


def _classify_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("commands", nargs="*", metavar="COMMAND",
                        help="a shell command to sort, quoted as one argument (repeatable)")
    parser.add_argument("--why", action="store_true", help="name the stage and word that decided")
    parser.add_argument("--jsonl", action="store_true",
                        help='read {"tool": NAME, "input": {...}} lines on stdin, print one category each; '
                             'add "agent": an agent\'s id as its rows say it ("codex", ...) for its own tools')


def _statusline_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", nargs="?", default="render", choices=list(STATUSLINE_ACTIONS), metavar="ACTION",
                        help=", ".join(STATUSLINE_ACTIONS) + " (render is the default); "
                             "`xshare statusline ACTION --help` says more")
    add_statusline_options(parser, "all")


def _slash_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--session", help="the current session's id, for its live figures")
    parser.add_argument("report_args", nargs=argparse.REMAINDER, help="arguments for `xshare report`")


def _html_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session", nargs="?", metavar="SESSION",
                        help="a session id or a transcript path; default: the session with the latest activity")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="write here (subagents' pages go beside it); default: html/ in xshare's state folder")
    parser.add_argument("--open", action="store_true", help="also open the page in a browser")
    parser.add_argument("--index", action="store_true",
                        help="write html/index.html listing every session, and the pages it links to")
    parser.add_argument("--demo", action="store_true", help="use the invented demo corpus that ships with xshare")
    add_measure_options(parser)
    add_price_options(parser)


_STATUSLINE_HELP = STATUSLINE_ABOUT + "\n\nACTION:\n" + "\n".join(
    textwrap.fill(what, 78, initial_indent=f"  {name:<8} ", subsequent_indent=" " * 11, break_on_hyphens=False)
    for name, (what, _) in STATUSLINE_ACTIONS.items())
# each command: its name, what `xshare --help` says of it, its --help's description and examples, and its flags
_COMMANDS = (
    ("report", "what share of your token bill went to reading and searching code",
     "The share of the prompt tokens you were billed for that went to reading and searching code, per\n"
     "agent and kind of session, over the sessions that started in a window (the last 30 days unless\n"
     "told otherwise), and what that share means for your bill. Totals only: no prompt, path or id.",
     "  xshare report --demo                  the sample that ships with xshare\n"
     "  xshare report --since-days 7          the last week\n"
     "  xshare report --all --by week         every session, and the share week by week\n"
     "  xshare report --json > report.json    the same figures for a script",
     _report_flags),
    ("mark", "name a change you made; reports then compare before and after it",
     "Name a change (a CLAUDE.md rule, a code index, another model) at a moment; later reports show\n"
     "the share before and after it. With no label, lists the marks made, numbered; `--remove N` removes\n"
     "one. To correct one, remove it and mark again (with --at for an earlier moment).",
     '  xshare mark "added a map of the code to CLAUDE.md"\n'
     '  xshare mark "switched to a smaller model" --at 2026-11-13\n'
     "  xshare mark                             list the marks, numbered\n"
     "  xshare mark --remove 2                  remove the second",
     _mark_flags),
    ("collect", "keep a file of per-session rows up to date (e.g. nightly, for a team's rollup)",
     "Add the sessions that started in the window to a rows file (one JSON line per session, figures\n"
     "only), replacing those that grew since, and print the share to date. Teams combine such files\n"
     "with `xshare report --from-rows`.",
     "  xshare collect --rows ~/xshare-rows.jsonl\n"
     "  xshare report --from-rows alice.jsonl bob.jsonl\n"
     "  xshare collect --since-days 7 --otlp http://collector:4318   OpenTelemetry counters, per session",
     _collect_flags),
    ("sessions", "list your sessions, newest first, with ids `session` and `html` take",
     "The sessions that started in the window (the last 30 days unless told otherwise), newest first:\n"
     "when each started (UTC), its agent and source, API calls, billed prompt tokens, exploration share\n"
     "of its context and its project's folder name. The ids are the shortest prefixes that name one\n"
     "session (--json gives them in full). Unlike the report, it shows ids and project names.",
     "  xshare sessions                       the 20 newest of the last 30 days\n"
     "  xshare sessions --all --limit 0       every session\n"
     "  xshare sessions --json | jq -r '.sessions[0].id'\n"
     "  xshare html 1f0c2a9e                  a listed session's page",
     _sessions_flags),
    ("advice", "what each habit (chattiness, idling, big reads, compactions) cost you, and would save",
     "Over the window, one line per habit of the cache essay, costliest first: what it cost by weight\n"
     "(fresh input 1, cache read 0.1, cache write 1.25 or 2, output 5), its share of the weighted bill, and\n"
     "what the change would have saved, with the assumption it rests on. Reads each session in detail\n"
     "(a summary is cached). Figures an agent's records cannot show are said to be unknown.",
     "  xshare advice                         the last 30 days\n"
     "  xshare advice --all --json            every session, every figure with its assumption\n"
     "  xshare advice --demo                  on the sample corpus",
     _advice_flags),
    ("session", "one session's figures, by its id or its transcript's path",
     "A short summary of one session: when it ran, its calls and bill, its exploration share and what\n"
     "else its context held. Unlike the report, it names the session you asked about.",
     "  xshare session ~/.claude/projects/my-app/1f0c….jsonl\n"
     "  xshare session 1f0c2a9e-… --json",
     _session_flags),
    ("classify", "how xshare sorts a shell command or tool call (exploration, edit, shell, ...)",
     "Whether a shell command counts as exploration (it only reads) or as other shell, and why; with\n"
     "--jsonl, the category of each tool call given on stdin.",
     "  xshare classify --why 'grep -rn TODO src | head' 'sed -i s/a/b/ f.py'\n"
     '  echo \'{"tool": "Read", "input": {"file_path": "a.py"}}\' | xshare classify --jsonl',
     _classify_flags),
    ("hook", "run by Claude Code after each tool batch (the plugin installs it)",
     "Claude Code's hook: reads the hook's JSON on stdin and updates the live figures of the session\n"
     "that the status line and /exploration-share show. You don't run it yourself.",
     "  (in the plugin's hooks.json) python3 bin/xshare hook",
     _no_flags),
    ("statusline", "Claude Code's status line: install, remove, status, or render it",
     _STATUSLINE_HELP, "\n".join(example for _, example in STATUSLINE_ACTIONS.values()), _statusline_flags),
    ("slash", "what the /exploration-share slash command prints (always exits 0)",
     "The report, then the current session's live figures and its page, for Claude Code's\n"
     "/exploration-share command, which runs it. It takes the report's flags.",
     "  xshare slash --session 1f0c2a9e-… --since-days 7",
     _slash_flags),
    ("html", "a page on one session (or all of them) to open in a browser",
     "Write an HTML page on one session: what each call sent and cost, what filled the context,\n"
     "the cache's rebuilds. Prints the page's path; with --index, a page listing every session.",
     "  xshare html                 your latest session\n"
     "  xshare html --index --open  every session, in the browser\n"
     "  xshare html --demo          a session of the sample that ships with xshare",
     _html_flags),
)


def _build(only: str | None = None) -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """Every command, with its flags; with `only`, that command's flags alone (the others are listed, for
    `xshare --help`, but take none: adding every command's flags was a twentieth of a warm report)."""
    parser = argparse.ArgumentParser(prog="xshare", description=DESCRIPTION, epilog=EXAMPLES, formatter_class=_RAW)
    parser.add_argument("--version", action="version", version=f"xshare {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for name, summary, description, examples, add_flags in _COMMANDS:
        command = _command(commands, name, summary, description, examples)
        if only is None or name == only:
            add_flags(command)
    return parser, dict(commands.choices)


COMMAND_NAMES = frozenset(name for name, *_ in _COMMANDS)
