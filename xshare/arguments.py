"""The command line's arguments: every `xshare` command, its flags and their help.

Only the parser: what each command does is in xshare/commands.py, which command runs which is in
xshare/cli.py. Stdlib only, as every `xshare` run builds it.
"""

from __future__ import annotations

import argparse

from xshare import __version__

DESCRIPTION = "The `xshare` command: parse arguments, call the package, choose the exit code."  # its --help line


def add_measure_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--claude-root", action="append", metavar="DIR",
                        help="a Claude Code config or projects folder (repeatable); default: $CLAUDE_CONFIG_DIR, "
                             "else ~/.claude and ~/.config/claude")
    parser.add_argument("--hermes-db", action="append", metavar="PATH",
                        help="a Hermes state.db, opened read-only (repeatable); default: $HERMES_HOME/state.db, "
                             "else ~/.hermes/state.db, plus ~/.hermes/profiles/*/state.db")
    for flag, what, default in (
        ("--codex-home", "a Codex CLI home", "$CODEX_HOME, else ~/.codex"),
        ("--gemini-home", "a Gemini CLI home (the .gemini folder)", "$GEMINI_CLI_HOME/.gemini, else ~/.gemini"),
        ("--opencode-db", "an OpenCode opencode.db, or its data folder",
         "$XDG_DATA_HOME/opencode, else ~/.local/share/opencode"),
        ("--openclaw-home", "an OpenClaw state folder",
         "$OPENCLAW_STATE_DIR, else $OPENCLAW_HOME/.openclaw, else ~/.openclaw"),
    ):
        parser.add_argument(flag, action="append", metavar="PATH",
                            help=f"{what}, read-only (repeatable); default: {default}")
    parser.add_argument("--estimate", action="store_true", help="count characters / 4 instead of o200k_base")
    parser.add_argument("--vocab", metavar="FILE", help="o200k_base.tiktoken file to use (or $XSHARE_VOCAB)")
    parser.add_argument("--no-cache", action="store_true",
                        help="read every transcript and count every text again (no cache, no count store)")


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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="xshare", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"xshare {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    report = commands.add_parser("report", help="the exploration-share report over your sessions")
    add_measure_options(report)
    add_window_options(report)
    report.add_argument("--json", action="store_true", help="the report as JSON")
    report.add_argument("--rows", metavar="FILE", help="also write one JSON line per session to FILE")
    report.add_argument("--demo", action="store_true", help="run on the sample corpus that ships with xshare")
    report.add_argument("--no-history", action="store_true",
                        help="leave out remembered sessions whose transcript is gone")
    report.add_argument("--from-rows", nargs="+", metavar="FILE",
                        help="a team's rollup: rows files from `collect --rows` on many machines, no transcripts")
    report.add_argument("--by", choices=("week", "month"),
                        help="also the groups per week or month (of start times, in UTC)")

    mark = commands.add_parser(
        "mark", help="name a change; reports split before and after it (no label: list them, numbered)",
        description="Name a change, e.g. `xshare mark \"added NeuralMind\"`; reports then show the share before "
                    "and after it. `xshare mark` alone lists the marks, numbered; `xshare mark --remove 2` removes "
                    "the second. To correct one, remove it and mark again (with --at for an earlier moment).")
    mark.add_argument("label", nargs="*", help='what changed, e.g. "added NeuralMind"')
    mark.add_argument("--at", metavar="DATE",
                      help="when (a date or ISO timestamp, UTC unless offset; stored in UTC); default now")
    mark.add_argument("--remove", metavar="N", type=int,
                      help="remove mark N, as `xshare mark` numbers them (1 is the oldest)")

    collect = commands.add_parser("collect", help="nightly: add new sessions to a rows file, replace grown ones")
    add_measure_options(collect)
    add_window_options(collect)
    collect.add_argument("--rows", metavar="FILE", required=True, help="the rows file to update")

    session = commands.add_parser("session", help="one session's row and a short summary")
    session.add_argument("session", metavar="PATH_OR_ID", help="a transcript path or a session id")
    add_measure_options(session)
    session.add_argument("--json", action="store_true", help="the row as JSON")

    classify = commands.add_parser("classify", help="show how commands or tool calls are categorised")
    classify.add_argument("commands", nargs="*", metavar="COMMAND")
    classify.add_argument("--why", action="store_true", help="name the stage and word that decided")
    classify.add_argument("--jsonl", action="store_true",
                          help='read {"tool": NAME, "input": {...}} lines on stdin, print one category each; '
                               'add "agent": codex, gemini, opencode or openclaw for their tools')
    commands.add_parser("hook", help="Claude Code hook: update the live session state (reads stdin)")

    status = commands.add_parser("statusline", help="render the status line, or install / remove / status")
    status.add_argument("action", nargs="?", default="render", choices=["render", "install", "remove", "status"])
    status.add_argument("--format", help="the line's fields, e.g. 'explore {context} · {calls} calls'")
    status.add_argument("--line2", help="the second line's fields (default: '{rebuilt} · {nudge} · {last}'); "
                        "fields: context bill calib calls compactions window last session nudge rebuilds rebuilt html")
    status.add_argument("--no-line2", action="store_true", help="one line only: no second line")
    status.add_argument("--no-color", action="store_true", help="no ANSI colours (NO_COLOR also works)")
    status.add_argument("--force", action="store_true", help="install: replace another status line")

    slash = commands.add_parser("slash", help="what /exploration-share prints (always exits 0)")
    slash.add_argument("--session", help="the current session's id, for its live figures")
    slash.add_argument("report_args", nargs=argparse.REMAINDER, help="arguments for `xshare report`")

    page = commands.add_parser("html", help="write a session's HTML summary and print its path")
    page.add_argument("session", nargs="?", metavar="SESSION",
                      help="a session id or a transcript path; default: the session with the latest activity")
    page.add_argument("-o", "--output", metavar="FILE",
                      help="write here (subagents' pages go beside it); default: html/ in xshare's state folder")
    page.add_argument("--open", action="store_true", help="also open the page in a browser")
    page.add_argument("--index", action="store_true",
                      help="write html/index.html listing every session, and the pages it links to")
    page.add_argument("--demo", action="store_true", help="use the invented demo corpus that ships with xshare")
    add_measure_options(page)
    return parser
