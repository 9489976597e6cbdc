"""The `xshare` command: parse arguments, call the package, choose the exit code.

Exit codes: 0 done; 1 a file the user asked for could not be written; 2 nothing to measure in the
window, or a bad argument. Stdout carries aggregates only, except where the user asked for one
session (`xshare session`); messages and problems go to stderr.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import sys

from xshare.arguments import (
    ORIENTATION,
    STATUSLINE_ACTIONS,
    build_parser,
    command_parser,
    statusline_parser,
    unknown_words,
)

# each command's handler (module, function), imported when its command runs: a report imports no other command
HANDLERS = {
    "report": ("report", "cmd_report"), "mark": ("report", "cmd_mark"), "collect": ("report", "cmd_collect"),
    "sessions": ("sessions", "cmd_sessions"), "advice": ("advice", "cmd_advice"), "session": ("session", "cmd_session"),
    "classify": ("session", "cmd_classify"), "html": ("html", "cmd_html"),
    "hook": ("plugin", "cmd_hook"), "statusline": ("plugin", "cmd_statusline"), "slash": ("plugin", "cmd_slash"),
}

MEASURING = {"report", "collect", "sessions", "advice", "html", "session"}


def _parse(argv: list[str] | None) -> argparse.Namespace:
    """The arguments; `slash` hands whatever it does not know to `report` (which explains it), so that
    /exploration-share never fails on a flag."""
    words = sys.argv[1:] if argv is None else argv
    parser = build_parser(words[0] if words else None)
    if words[:1] == ["statusline"] and words[1:2] and words[1] in STATUSLINE_ACTIONS and \
            {"-h", "--help"} & set(words[2:]):
        statusline_parser(words[1]).parse_args(["--help"])  # that action's help, not the status line's (exits)
    args, unknown = parser.parse_known_args(argv)
    if unknown and args.command != "slash":
        command = command_parser(args.command) if args.command else None
        if command is None:
            parser.parse_args(argv)  # argparse's own message and exit 2
        else:  # the command's usage, not the top level's, and the flag each word was likely meant to be
            command.error(unknown_words(command, unknown))
    if unknown:
        args.report_args = [*unknown, *args.report_args]
    return args


def run() -> None:
    """The `xshare` script (and `python -m xshare`, bin/xshare): main, then exit. What lives until then is frozen
    first: Python's last collection at exit no longer walks every object the command made or imported (a sixth of
    a warm report's CPU). Not done by `main`, which a caller in the same process (the tests, a plugin) may run
    again."""
    code = main()
    gc.freeze()
    sys.exit(code)


def main(argv: list[str] | None = None) -> int:
    # the collector's default pace (a pass every 700 new objects) spent a twentieth of a warm report scanning
    # modules and rows that live until the command ends; a pass every 50,000 spends next to nothing. A caller
    # in the same process (the tests, a plugin) gets its own pace back.
    pace = gc.get_threshold()
    gc.set_threshold(50_000, 10, 10)
    try:
        return _run(argv)
    finally:
        gc.set_threshold(*pace)


def _run(argv: list[str] | None) -> int:
    from xshare.state.private import with_state  # after parsing: --help and a bad flag import nothing more

    args = _parse(argv)
    if args.command is None:  # bare `xshare`: what it is and where to start, rather than a usage error
        sys.stdout.write(ORIENTATION)
        return 0
    module, function = HANDLERS[args.command]
    handler = getattr(importlib.import_module(f"xshare.commands.{module}"), function)
    try:
        with _progress_line(args.command):
            code = with_state(args.command, bool(getattr(args, "output", None)), lambda: handler(args))
        sys.stdout.flush()  # a closed pipe is met here, not in Python's own flush at exit
        return code
    except KeyboardInterrupt as stop:  # what was measured before it is kept (agents/claude_code/many.py)
        print(f"xshare: {stop or 'interrupted'}", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader stopped reading (`xshare sessions | head`): no traceback, as `ls` gives none
        _quiet_stdout()
        return 141  # as a shell reports a command a closed pipe stopped (128 + SIGPIPE)


def _progress_line(command: str):
    """A command that may measure many sessions shows what it is doing on stderr when that is a terminal
    (agents/common/progress.py); the others, the hook's and the status line's among them, start no thread."""
    import contextlib

    if command not in MEASURING:
        return contextlib.nullcontext()
    from xshare.agents.common import progress

    return progress.shown()


def _quiet_stdout() -> None:
    """Point stdout at the null device, so that Python's own flush at exit meets no closed pipe either."""
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # no real stdout to point anywhere: nothing will be flushed to it
        pass
