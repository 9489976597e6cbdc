"""What the Claude Code plugin runs: the hook, the status line and the /exploration-share slash command.
"""

from __future__ import annotations

import argparse
import sys

from xshare.arguments import build_parser
from xshare.commands.common import say
from xshare.commands.report import cmd_report
from xshare.printing import printable


def cmd_hook(args: argparse.Namespace) -> int:
    from xshare.live.hook import main as hook_main

    return hook_main()


def cmd_statusline(args: argparse.Namespace) -> int:
    if args.action == "render":
        from xshare.live.status_render import main as render

        options = ["--no-color"] if args.no_color else []
        options += ["--fields", args.fields] if args.fields is not None else []
        options += ["--format", args.format] if args.format else []
        options += ["--no-line2"] if args.no_line2 else []
        return render(options + (["--line2", args.line2] if args.line2 else []))
    from xshare.install import statusline_setup

    if args.fields is not None and args.action != "command":  # else silently ignored
        say(f"--fields is for `statusline command` and `render`, not {args.action}: another status line runs "
            "the fields alone; `install --format` picks xshare's own line's fields")
        return 2
    if args.action == "command":
        from xshare.live.status_render import fields_problem

        if refused := fields_problem(args.fields or ""):
            say(refused)
            return 2
        print(statusline_setup.command(fields=args.fields))
        return 0
    if args.action == "install":
        from xshare.live.status_render import install_refusal

        if refused := install_refusal(args.format, args.line2):
            say(refused)
            return 2
        code, message = statusline_setup.install(args.force, args.format, "" if args.no_line2 else args.line2)
    else:
        code, message = getattr(statusline_setup, args.action)()
    print(message, file=sys.stderr if code else sys.stdout)
    return code


def _messages(captured: str) -> list[str]:
    """What the report said on stderr, one message a line, its 'xshare: ' prefixes dropped."""
    return [line.removeprefix("xshare: ").strip() for line in captured.splitlines() if line.strip()]


def _problems_note(messages: list[str], limit: int = 300) -> str:
    note = "; ".join(messages)
    return note if len(note) <= limit else note[: limit - 1] + "…"


def cmd_slash(args: argparse.Namespace) -> int:
    """What /exploration-share shows: the report, then this session's live figures, then the report's
    problems as one short note (Claude Code puts the command's stderr before its stdout, so they are
    captured here instead). Always exits 0, since a failing command would abort the slash command
    instead of explaining why."""
    import contextlib
    import io

    from xshare.agents.claude_code.live_state import live_row
    from xshare.state.paths import html_file

    report_args = args.report_args[1:] if args.report_args[:1] == ["--"] else args.report_args
    messages = io.StringIO()
    with contextlib.redirect_stderr(messages):
        code = _slash_report(report_args)
    said = _messages(messages.getvalue())
    note = _problems_note(said)
    if code == 2:  # no report: the messages are the explanation, not a footnote
        print("\n".join(line[:1].upper() + line[1:] for line in said) or "No session started in the window.")
        note = ""
    if args.session:
        row = live_row(args.session)
        if row and row["api_calls"]:
            share = row["exploration_share_of_context"]
            bill = row["exploration_share_of_prompt"]
            print(f"\nThis session so far: {row['api_calls']:,} API calls; exploration {share:.1%} of the recorded "
                  f"context, {bill:.1%} of the bill; calibration {row['recorded_over_billed']:.0%}.")
        else:
            print("\nThis session: no live figures yet (the hook updates them after each tool batch).")
        page = html_file(args.session)
        # the session id is what the host passed: escaped, as every printed field from outside is
        where = printable(page if page.exists() else f"not written yet: `xshare html {args.session}` writes it")
        print(f"Its HTML summary: {where}")
    if note:
        print(f"\nNote: {note}.")
    return 0


def _slash_report(report_args: list[str]) -> int:
    """`xshare report` for /exploration-share: a bad flag is explained in one line on stdout (where the
    slash command shows it) instead of argparse's exit; 0 then, as the slash command must not fail."""
    import contextlib
    import io

    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said):
            args = build_parser().parse_args(["report", *report_args])
    except SystemExit as stop:
        if not stop.code:
            return 0  # --help: argparse printed it
        lines = said.getvalue().strip().splitlines() or ["not understood"]
        problem = lines[-1].split("error: ", 1)[-1]
        print(f"/exploration-share: {problem}. It takes --since-days N, --since DATE, --until DATE, --all, --json.")
        return 0
    return cmd_report(args)
