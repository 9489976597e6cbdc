"""The `xshare` command: parse arguments, call the package, choose the exit code.

Exit codes: 0 done; 1 a file the user asked for could not be written; 2 nothing to measure in the
window, or a bad argument. Stdout carries aggregates only, except where the user asked for one
session (`xshare session`); messages and problems go to stderr.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone
from pathlib import Path

from xshare import __version__
from xshare.measure import tokens as tokenizers
from xshare.text import json_text, printable, printable_lines


def _say(message: str) -> None:
    print(printable_lines(f"xshare: {message}"), file=sys.stderr)


def _print_json(value: object) -> None:
    print(json_text(value))


def _report_problems(problems: dict) -> None:
    """One line per kind of problem, never one per line of input."""
    for kind, count in sorted(problems.items()):
        _say(f"{kind}: {count:,}")


def _refuse_rows_file(args: argparse.Namespace) -> bool:
    """Before measuring: True (after saying why) when --rows names a file xshare must not write."""
    from xshare.report.outputs import refusal

    why = refusal(Path(args.rows), args.claude_root) if args.rows else None
    if why:
        _say(f"could not write the rows file {args.rows}: {why}")
    return why is not None


def _window(args: argparse.Namespace):
    """The window the flags ask for, or None (after saying why) for a date that does not parse."""
    from xshare.report.render import Window

    try:
        return Window.build(datetime.now(timezone.utc), since_days=args.since_days, since=args.since,
                            until=args.until, everything=args.all, lag_hours=args.lag_hours)
    except ValueError as error:
        _say(str(error))
        return None


def _choice(args: argparse.Namespace) -> tokenizers.TokenizerChoice:
    return tokenizers.choose(estimate=args.estimate, vocab=args.vocab, remember=not args.no_cache)


def _measure_in_window(args: argparse.Namespace, window):
    from xshare.report.render import CountingPlace
    from xshare.sessions.measure import measure_all
    from xshare.sessions.packed import in_window

    measured = measure_all(args.claude_root, _choice(args), window.since, not args.no_cache,
                           hermes_dbs=args.hermes_db, agent_homes=_agent_homes(args))
    _report_problems(measured.problems)
    place = CountingPlace(window)
    rows, deferred = in_window(measured.rows, place)  # a session without API calls is a session
    if place.undated:
        _say(window.undated_note(place.undated))
    return measured, rows, deferred


def _agent_homes(args: argparse.Namespace) -> dict[str, list[str] | None]:
    from xshare.sources.agents import homes_given

    return homes_given(args)


def cmd_report(args: argparse.Namespace) -> int:
    from xshare.report.periods import sum_rows
    from xshare.report.render import Report, Window
    from xshare.report.rows import write_rows

    if args.from_rows:
        return _report_from_rows(args)
    if args.demo:
        import tempfile

        from xshare.demo import write_demo_corpus

        demo_home = tempfile.TemporaryDirectory(prefix="xshare-demo-")
        args.claude_root = [str(write_demo_corpus(Path(demo_home.name)))]
        args.hermes_db = []  # the demo is the shipped corpus only, never this machine's Hermes sessions
        for flag in ("codex_home", "gemini_home", "opencode_db", "openclaw_home"):
            setattr(args, flag, [])  # nor any other agent's
        args.no_cache = True
        window = Window(None, datetime.now(timezone.utc), "the demo corpus that ships with xshare")
    else:
        window = _window(args)
        if window is None:
            return 2
    if _refuse_rows_file(args):
        return 1
    measured, rows, deferred = _measure_in_window(args, window)
    remembered, other = _remembered_in_window(args, measured, window)
    rows.items += remembered.items
    if not rows:
        still = f"; {deferred} still active at its end" if deferred else ""
        _say(f"no session started in the window ({window.describe()}){still}")
        for place in measured.looked_in:
            _say(f"looked for {place}")
        _say("try `xshare report --all`, a longer --since-days, or `xshare report --demo` for a sample report")
        return 2
    if args.rows:
        try:
            from xshare.report.identity import stamped

            write_rows(Path(args.rows), stamped(rows))
        except OSError as error:
            _say(f"could not write the rows file: {error.strerror or error}")
            return 1
    choice = measured.tokenizer
    tally, summed = sum_rows(rows, args.by, [] if args.demo else _marks())
    report = Report(tally.groups(), window, choice.name, choice.note, measured.sources, deferred,
                    remembered=len(remembered), other_tokenizer=other)
    if args.json:
        _print_json({**report.to_json(), **_over_time_json(args.by, summed)})
    else:
        sys.stdout.write(report.to_text() + _over_time_text(args.by, summed))
    return 0


def _report_from_rows(args: argparse.Namespace) -> int:
    """A team's rollup from rows files (no transcripts read): the same groups and reading, plus how
    many machines and people the rows came from."""
    from xshare.report.render import CountingPlace, Report
    from xshare.report.rollup import read_rows_files

    if args.by or args.rows or args.demo:
        _say("--from-rows takes the window flags and --json (not --by, --rows or --demo)")
        return 2
    window = _window(args)
    if window is None:
        return 2
    place = CountingPlace(window)
    rollup = read_rows_files([Path(path) for path in args.from_rows], place)
    if place.undated:
        _say(f"rows files: {window.undated_note(place.undated)}")
    for kind, count in (("unreadable lines", rollup.bad_lines), ("sessions given twice, counted once",
                        rollup.duplicates), ("rows outside the window", rollup.outside_window)):
        if count:
            _say(f"rows files: {kind}: {count:,}")
    if rollup.impossible:
        why = ", ".join(f"{reason}: {count:,}" for reason, count in rollup.impossible.most_common())
        _say(f"rows files: rows with impossible figures or wrong types left out: "
             f"{sum(rollup.impossible.values()):,} ({why})")
    if not rollup.rows:
        _say(f"no session in the rows files started in the window ({window.describe()})")
        return 2
    left_out = rollup.left_out()
    note = "; ".join(f"{count:,} sessions counted with {name} left out" for name, count in left_out.items())
    sources = {"rows files": f"{rollup.files:,} read", "machines": f"{len(rollup.machines):,}",
               "people": f"{len(rollup.people):,}"}
    report = Report(rollup.groups(), window, rollup.tokenizer(), note, sources)
    if args.json:
        _print_json({**report.to_json(), "rollup": rollup.to_json()})
    else:
        sys.stdout.write(report.to_text())
    return 0


def _marks() -> list[dict]:
    from xshare.report.periods import read_marks

    return read_marks()


def _over_time_json(by: str | None, summed) -> dict:
    """--by's periods and the marks' before/after, for the JSON report."""
    from xshare.report.periods import marks_json, periods_json

    return {**({"over_time": periods_json(summed, by)} if by else {}),
            **({"marks": marks_json(summed, summed.marks)} if summed.marks else {})}


def _over_time_text(by: str | None, summed) -> str:
    from xshare.report.periods import marks_text, periods_text

    parts = [periods_text(summed, by)] if by else []
    parts += [marks_text(summed, summed.marks)] if summed.marks else []
    return printable_lines("\n".join(["", *parts])) if parts else ""


def cmd_mark(args: argparse.Namespace) -> int:
    """Name a change (a CLAUDE.md rule, an index, another model): reports split before and after it."""
    from xshare.report.periods import add_mark, read_marks
    from xshare.report.render import parse_cli_time, parse_time

    if not args.label:
        for mark in read_marks():  # in UTC, whatever offset an older version stored
            print(printable(f"{parse_time(mark['at']).isoformat()}  {mark['label']}"))
        return 0
    try:
        at = parse_cli_time(args.at) if args.at else datetime.now(timezone.utc)
    except ValueError as error:
        _say(str(error))
        return 2
    label = " ".join(args.label)
    try:
        add_mark(label, at)
    except OSError as error:
        _say(f"could not store the mark: {error.strerror or error}")
        return 1
    print(printable(f"marked {at:%Y-%m-%d %H:%M} UTC: {label}"))
    return 0


def _remembered_in_window(args: argparse.Namespace, measured, window):
    """Keep the measured rows in the history (never the demo's); the remembered sessions in the window
    whose transcript is gone, and how many more were left out for their tokenizer. None with
    --no-history, nor for a report on folders or databases the user named (a report on them alone)."""
    from xshare.report.history import gone_sessions, keep
    from xshare.sessions.packed import PackedRows, in_window

    if args.demo:
        return PackedRows(), 0
    remembered = keep(measured.rows)
    named = (args.claude_root, args.hermes_db, args.codex_home, args.gemini_home, args.opencode_db,
             args.openclaw_home)
    if getattr(args, "no_history", False) or any(named):
        return PackedRows(), 0
    same, other = gone_sessions((), remembered, measured.tokenizer.name)  # keep() left out the measured
    return in_window(same, window.place)[0], sum(1 for row in other if window.place(row) == "in")


def cmd_collect(args: argparse.Namespace) -> int:
    from xshare.report.render import group_key, summarize
    from xshare.report.rows import merge_packed, read_packed, write_rows

    window = _window(args)
    if window is None:
        return 2
    if _refuse_rows_file(args):
        return 1
    measured, rows, deferred = _measure_in_window(args, window)
    from xshare.report.history import keep

    keep(measured.rows)
    path = Path(args.rows)
    from xshare.report.identity import stamped

    merged, added, replaced = merge_packed(read_packed(path), stamped(rows))
    try:
        write_rows(path, merged)
    except OSError as error:
        _say(f"could not write the rows file: {error.strerror or error}")
        return 1
    interactive = summarize(row for row in merged if group_key(row) == "claude-code/interactive")
    group = interactive.get("claude-code/interactive")
    to_date = (
        f"claude-code/interactive share to date {group['exploration_share_of_context']:.1%} "
        f"({group['sessions']:,} sessions)"
        if group and group["exploration_share_of_context"] is not None
        else "no interactive share yet"
    )
    later = f", {deferred} still active (next run)" if deferred else ""
    line = f"{datetime.now(timezone.utc):%Y-%m-%d}: {added} sessions added, {replaced} replaced{later}; {to_date}"
    print(printable(line))
    return 0


def cmd_session(args: argparse.Namespace) -> int:
    """A session by transcript path (read now), or by id (the live state if the hook keeps one), else a
    Hermes session by id from state.db."""
    from xshare.live.session_state import live_row
    from xshare.sessions.measure import find_hermes_session, find_session, measure_one

    row = None if args.session.endswith(".jsonl") or args.claude_root else live_row(args.session, _choice(args))
    if row is None:
        file = find_session(args.session, args.claude_root)
        problems: dict = {}
        if file is not None:
            row, problems = measure_one(file, _choice(args))
        elif not args.session.endswith(".jsonl"):
            row, problems = find_hermes_session(args.session, _choice(args), args.hermes_db)
            if row is None:  # another agent's session id (Codex, Gemini CLI, OpenCode, OpenClaw)
                from xshare.sessions.measure import find_agent_session

                row, more, _ = find_agent_session(args.session, _choice(args), _agent_homes(args))
                problems = {**problems, **more}
        _report_problems(problems)
        if row is None:
            _say(f"no Claude Code transcript or Hermes session matches {args.session!r}, nor any Codex, Gemini CLI, "
                 "OpenCode or OpenClaw session (give a transcript path or a session id)")
            return 2
    if args.json:
        _print_json(row)
    else:
        from xshare.report.render import session_summary

        sys.stdout.write(session_summary(row))
    return 0


def _tool_verdict(call: dict, classify_tool) -> tuple[str, str]:
    """A tool call's category and why: another agent's by its own tools (an argv list shown as the
    command it runs), else Claude Code's and Hermes's."""
    from xshare.measure.agent_tools import AGENT_TOOLS, explain_tool
    from xshare.measure.classify import command_of, explain_command

    agent, name, tool_input = call.get("agent"), call["tool"], call.get("input")
    if agent in AGENT_TOOLS:
        verdict = explain_tool(agent, name, tool_input)
        shown = f"; the command: {_one_line(verdict.command)}" if verdict.command is not None else ""
        return verdict.category, f"{verdict.reason}{shown}"
    if agent not in (None, "claude", "claude-code", "hermes"):
        raise ValueError(agent)
    category = classify_tool(name, tool_input)
    command = command_of(name, tool_input)
    if command is not None and name in ("Bash", "terminal"):
        verdict = explain_command(command)
        return category, f"{verdict.reason} (stage {verdict.stage!r}, word {verdict.word!r})"
    return category, f"tool {name!r} is {category}"


def _one_line(text: str) -> str:
    """One line for the terminal: control characters shown, never run."""
    return text.encode("unicode_escape").decode("ascii") if not text.isprintable() else text


def cmd_classify(args: argparse.Namespace) -> int:
    from xshare.measure.classify import classify_tool, explain_command
    from xshare.state.store import loads

    if args.jsonl:
        for number, line in enumerate(sys.stdin, 1):
            if not line.strip():
                continue
            try:
                call = loads(line)
                category, why = _tool_verdict(call, classify_tool)
                print(f"{category}\t{why}" if args.why else category)
            except (ValueError, KeyError, TypeError, AttributeError):
                _say(f'line {number}: expected {{"tool": NAME, "input": {{...}}}} (and optionally "agent": '
                     f'codex, gemini, opencode or openclaw)')
                print("invalid")
        return 0
    if not args.commands:
        _say("give one or more shell commands, or --jsonl to read tool calls on stdin")
        return 2
    for command in args.commands:
        verdict = explain_command(command)
        why = f"\t{verdict.reason} (stage {verdict.stage!r}, word {verdict.word!r})" if args.why else ""
        print(f"{verdict.category}\t{command}{why}")
    return 0


def cmd_hook(args: argparse.Namespace) -> int:
    from xshare.live.hook import main as hook_main

    return hook_main()


def cmd_statusline(args: argparse.Namespace) -> int:
    if args.action == "render":
        from xshare.live.statusline import main as render

        options = ["--no-color"] if args.no_color else []
        options += ["--format", args.format] if args.format else []
        options += ["--no-line2"] if args.no_line2 else []
        return render(options + (["--line2", args.line2] if args.line2 else []))
    from xshare.install import statusline_setup

    if args.action == "install":
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

    from xshare.live.session_state import live_row
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
        where = f"{page}" if page.exists() else f"not written yet: `xshare html {args.session}` writes it"
        print(f"Its HTML summary: {where}")
    if note:
        print(f"\nNote: {note}.")
    return 0


def cmd_html(args: argparse.Namespace) -> int:
    """One session's HTML summary (or --index: every session's), written to a file whose path is printed."""
    from xshare.html.write import cli_html

    if args.hermes_db and (args.index or not args.session):
        _say("give the id of the Hermes session to summarise (an index of Hermes sessions is not supported)")
        return 2
    return cli_html(args, _say)


def _add_measure_options(parser: argparse.ArgumentParser) -> None:
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


def _add_window_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--since-days", type=_days, default=30, metavar="N",
                        help="sessions started in the last N days (default 30)")
    parser.add_argument("--since", metavar="DATE", help="sessions started on or after DATE (UTC unless offset)")
    parser.add_argument("--until", metavar="DATE", help="sessions started up to DATE (a date means its whole UTC day)")
    parser.add_argument("--all", action="store_true", help="every session, whenever it started")
    parser.add_argument("--lag-hours", type=_hours, default=0.0, metavar="H",
                        help="end the window H hours ago; sessions still active then wait for a later run")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="xshare", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"xshare {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    report = commands.add_parser("report", help="the exploration-share report over your sessions")
    _add_measure_options(report)
    _add_window_options(report)
    report.add_argument("--json", action="store_true", help="the report as JSON")
    report.add_argument("--rows", metavar="FILE", help="also write one JSON line per session to FILE")
    report.add_argument("--demo", action="store_true", help="run on the sample corpus that ships with xshare")
    report.add_argument("--no-history", action="store_true",
                        help="leave out remembered sessions whose transcript is gone")
    report.add_argument("--from-rows", nargs="+", metavar="FILE",
                        help="a team's rollup: rows files from `collect --rows` on many machines, no transcripts")
    report.add_argument("--by", choices=("week", "month"),
                        help="also the groups per week or month (of start times, in UTC)")
    report.set_defaults(handler=cmd_report)

    mark = commands.add_parser("mark", help="name a change; reports split before and after it (no label: list)")
    mark.add_argument("label", nargs="*", help='what changed, e.g. "added NeuralMind"')
    mark.add_argument("--at", metavar="DATE",
                      help="when (a date or ISO timestamp, UTC unless offset; stored in UTC); default now")
    mark.set_defaults(handler=cmd_mark)

    collect = commands.add_parser("collect", help="nightly: add new sessions to a rows file, replace grown ones")
    _add_measure_options(collect)
    _add_window_options(collect)
    collect.add_argument("--rows", metavar="FILE", required=True, help="the rows file to update")
    collect.set_defaults(handler=cmd_collect)

    session = commands.add_parser("session", help="one session's row and a short summary")
    session.add_argument("session", metavar="PATH_OR_ID", help="a transcript path or a session id")
    _add_measure_options(session)
    session.add_argument("--json", action="store_true", help="the row as JSON")
    session.set_defaults(handler=cmd_session)

    classify = commands.add_parser("classify", help="show how commands or tool calls are categorised")
    classify.add_argument("commands", nargs="*", metavar="COMMAND")
    classify.add_argument("--why", action="store_true", help="name the stage and word that decided")
    classify.add_argument("--jsonl", action="store_true",
                          help='read {"tool": NAME, "input": {...}} lines on stdin, print one category each; '
                               'add "agent": codex, gemini, opencode or openclaw for their tools')
    classify.set_defaults(handler=cmd_classify)
    hook = commands.add_parser("hook", help="Claude Code hook: update the live session state (reads stdin)")
    hook.set_defaults(handler=cmd_hook)

    status = commands.add_parser("statusline", help="render the status line, or install / remove / status")
    status.add_argument("action", nargs="?", default="render", choices=["render", "install", "remove", "status"])
    status.add_argument("--format", help="the line's fields, e.g. 'explore {context} · {calls} calls'")
    status.add_argument("--line2", help="the second line's fields (default: '{rebuilt} · {nudge} · {last}'); "
                        "fields: context bill calib calls compactions window last session nudge rebuilds rebuilt html")
    status.add_argument("--no-line2", action="store_true", help="one line only: no second line")
    status.add_argument("--no-color", action="store_true", help="no ANSI colours (NO_COLOR also works)")
    status.add_argument("--force", action="store_true", help="install: replace another status line")
    status.set_defaults(handler=cmd_statusline)

    slash = commands.add_parser("slash", help="what /exploration-share prints (always exits 0)")
    slash.add_argument("--session", help="the current session's id, for its live figures")
    slash.add_argument("report_args", nargs=argparse.REMAINDER, help="arguments for `xshare report`")
    slash.set_defaults(handler=cmd_slash)

    page = commands.add_parser("html", help="write a session's HTML summary and print its path")
    page.add_argument("session", nargs="?", metavar="SESSION",
                      help="a session id or a transcript path; default: the session with the latest activity")
    page.add_argument("-o", "--output", metavar="FILE",
                      help="write here (subagents' pages go beside it); default: html/ in xshare's state folder")
    page.add_argument("--open", action="store_true", help="also open the page in a browser")
    page.add_argument("--index", action="store_true",
                      help="write html/index.html listing every session, and the pages it links to")
    page.add_argument("--demo", action="store_true", help="use the invented demo corpus that ships with xshare")
    _add_measure_options(page)
    page.set_defaults(handler=cmd_html)
    return parser


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
    return args.handler(args)


def _parse(argv: list[str] | None) -> argparse.Namespace:
    """The arguments; `slash` hands whatever it does not know to `report` (which explains it), so that
    /exploration-share never fails on a flag."""
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown and args.command != "slash":
        parser.parse_args(argv)  # argparse's own message and exit 2
    if unknown:
        args.report_args = [*unknown, *args.report_args]
    return args


def main(argv: list[str] | None = None) -> int:
    from xshare.state.private import with_state

    args = _parse(argv)
    try:
        return with_state(args.command, bool(getattr(args, "output", None)), lambda: args.handler(args))
    except KeyboardInterrupt:
        return 130
