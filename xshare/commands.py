"""What each `xshare` command does (xshare/arguments.py parses, xshare/cli.py picks the command).

Exit codes: 0 done; 1 a file the user asked for could not be written; 2 nothing to measure in the
window, or a bad argument. Stdout carries aggregates only, except where the user asked for one
session (`xshare session`); messages and problems go to stderr.

Every `xshare` run imports this module (the hook and `statusline render` through the installed script
too), so each command imports what it needs inside its function: one command never pays for another's.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from xshare.arguments import build_parser
from xshare.text import json_text, output_width, printable, printable_lines

if TYPE_CHECKING:
    from xshare.measure.tokens import TokenizerChoice


def _say(message: str) -> None:
    print(printable_lines(f"xshare: {message}"), file=sys.stderr)


def _print_json(value: object) -> None:
    print(json_text(value))


def _report_problems(problems: dict, demo: bool = False) -> None:
    """One line per kind of problem, never one per line of input; the demo's are labelled as on purpose."""
    notes: dict[str, str] = {}
    if demo:
        from xshare.demo.corpus import DELIBERATE_ODDITIES as notes
    for kind, count in sorted(problems.items()):
        note = notes.get(kind)
        _say(f"{kind}: {count:,}" + (f" ({note})" if note else ""))


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


def _choice(args: argparse.Namespace) -> TokenizerChoice:
    from xshare.measure import tokens as tokenizers

    return tokenizers.choose(estimate=args.estimate, vocab=args.vocab, remember=not args.no_cache)


def looking(args: argparse.Namespace, choice: TokenizerChoice | None = None, since: datetime | None = None):
    """Where to look for each agent's sessions (its flag, by agent) and how to count: the typed options
    the registry's adapters take (never the Namespace)."""
    from xshare.sessions.registry import REGISTRY
    from xshare.sources.adapter import Looking

    homes = {adapter.agent: getattr(args, adapter.flag, None) for adapter in REGISTRY}
    return Looking(homes, choice or _choice(args), since, not args.no_cache)


def _measure_in_window(args: argparse.Namespace, window):
    from xshare.report.render import CountingPlace
    from xshare.sessions.measure import measure
    from xshare.sessions.packed import in_window

    measured = measure(looking(args, since=window.since))
    _report_problems(measured.problems, getattr(args, "demo", False))
    place = CountingPlace(window)
    rows, deferred = in_window(measured.rows, place)  # a session without API calls is a session
    if place.undated:
        _say(window.undated_note(place.undated))
    return measured, rows, deferred


def cmd_report(args: argparse.Namespace) -> int:
    from xshare.report.periods import sum_rows
    from xshare.report.render import Report, Window
    from xshare.report.rows import write_rows

    if args.from_rows:
        return _report_from_rows(args)
    if args.demo:
        from xshare.demo.corpus import temporary_demo_corpus
        from xshare.sessions.registry import FLAGS

        demo_home, root = temporary_demo_corpus()  # removed when this command returns
        for flag in FLAGS:
            setattr(args, flag, [])  # the demo is the shipped corpus only, never this machine's sessions
        args.claude_root = [str(root)]
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
        outside = _outside_window(args, window, measured)
        for line in outside or [f"looked for {place}" for place in measured.looked_in]:
            _say(line)
        if not outside:
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
        width = output_width()
        sys.stdout.write(report.to_text(width, _over_time_text(args.by, summed, width), by=bool(args.by),
                                        marked=bool(summed.marks)))
    return 0


def _outside_window(args: argparse.Namespace, window, measured) -> list[str]:
    """An empty window's word on what lies outside it: how many sessions started before and after it, the
    newest start, and the flag that takes them in (the sessions are measured again without the window's
    start, from the cache for most of them, so that an empty report never hides what exists)."""
    from xshare.report.words import outside_window
    from xshare.sessions.measure import measure

    if window.since is not None:
        with _quiet_stderr():  # their problems were said, or are outside the window
            measured = measure(looking(args))
    starts = [row.get("started_at") for _, row in measured.rows.pairs()]
    return outside_window(window, starts, datetime.now(timezone.utc))


def _quiet_stderr():
    import contextlib
    import io

    return contextlib.redirect_stderr(io.StringIO())


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
        sys.stdout.write(report.to_text(output_width(), hint=False))  # its next step is the team's to choose
    return 0


def _marks() -> list[dict]:
    from xshare.report.periods import read_marks

    return read_marks()


def _over_time_json(by: str | None, summed) -> dict:
    """--by's periods and the marks' before/after, for the JSON report."""
    from xshare.report.periods import marks_json, periods_json

    return {**({"over_time": periods_json(summed, by)} if by else {}),
            **({"marks": marks_json(summed, summed.marks)} if summed.marks else {})}


def _over_time_text(by: str | None, summed, width: int | None = None) -> str:
    from xshare.report.periods import marks_text, periods_text

    parts = [periods_text(summed, by, width)] if by else []
    parts += [marks_text(summed, summed.marks)] if summed.marks else []
    return printable_lines("\n".join(["", *parts])) if parts else ""


def cmd_mark(args: argparse.Namespace) -> int:
    """Name a change (a CLAUDE.md rule, an index, another model): reports split before and after it."""
    from xshare.report.periods import add_mark, mark_line, read_marks
    from xshare.report.render import parse_cli_time

    if args.remove is not None:
        return _remove_mark(args)
    if not args.label:
        if not read_marks():
            _say('no marks yet; `xshare mark "what changed"` adds one')
        for number, mark in enumerate(read_marks(), 1):  # numbered for --remove; in UTC, whatever was stored
            print(f"{number}  {mark_line(mark)}")
        return 0
    try:
        at = parse_cli_time(args.at) if args.at else datetime.now(timezone.utc)
    except ValueError as error:
        _say(str(error))
        return 2
    try:
        mark = add_mark(" ".join(args.label), at)
    except OSError as error:
        _say(f"could not store the mark: {error.strerror or error}")
        return 1
    print(f"marked {mark_line(mark)}")
    return 0


def _remove_mark(args: argparse.Namespace) -> int:
    """`xshare mark --remove N`: N as `xshare mark` numbers them."""
    from xshare.report.periods import mark_line, read_marks, remove_mark

    count = len(read_marks())
    if args.label or args.at:
        _say("--remove takes only the mark's number; to correct a mark, remove it and mark again with --at")
        return 2
    if not 1 <= args.remove <= count:
        _say(f"no mark {args.remove}: " + (f"the marks are 1 to {count} (`xshare mark` lists them)" if count
                                           else "there are no marks"))
        return 2
    try:
        removed = remove_mark(args.remove)
    except OSError as error:
        _say(f"could not store the marks: {error.strerror or error}")
        return 1
    print(f"removed {mark_line(removed)}")
    return 0


def _remembered_in_window(args: argparse.Namespace, measured, window):
    """Keep the measured rows in the history (never the demo's); the remembered sessions in the window
    whose transcript is gone, and how many more were left out for their tokenizer. None with
    --no-history, nor for a report on folders or databases the user named (a report on them alone)."""
    from xshare.report.history import gone_sessions, keep
    from xshare.sessions.packed import PackedRows, in_window
    from xshare.sessions.registry import FLAGS

    if args.demo:
        return PackedRows(), 0
    remembered = keep(measured.rows)
    if getattr(args, "no_history", False) or any(getattr(args, flag, None) for flag in FLAGS):
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
    """A session by the path of its file (whichever agent's, told by its content), its id (the live state
    if the hook keeps one) or a unique prefix of its id, from any agent of the registry."""
    from collections import Counter

    from xshare.live.session_state import live_row
    from xshare.sessions.registry import find, names
    from xshare.sources.adapter import Ambiguous

    as_path = Path(args.session).expanduser().is_file() or args.session.endswith(".jsonl")
    row = None if as_path or args.claude_root else live_row(args.session, _choice(args))
    if row is None:
        problems: Counter = Counter()
        found = find(args.session, looking(args), problems)
        _report_problems(problems)
        if isinstance(found, Ambiguous):
            say_ambiguous(found)
            return 2
        if found is None:
            _say(f"no session of {names()} matches {args.session!r} (give a session's file, its id or the start of "
                 "its id)")
            return 2
        row = found.row
    if args.json:
        _print_json(row)
    else:
        from xshare.report.render import session_summary

        sys.stdout.write(session_summary(row))
    return 0


def say_ambiguous(ambiguous) -> None:
    """Refused, with the candidates (as git lists them), on one line."""
    shown = ", ".join(ambiguous.candidates[:20])
    more = f" and {len(ambiguous.candidates) - 20:,} more" if len(ambiguous.candidates) > 20 else ""
    _say(f"{ambiguous.wanted!r} names {len(ambiguous.candidates):,} sessions; give more of the id: {shown}{more}")


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
        from xshare.live.statusline import install_refusal

        if refused := install_refusal(args.format, args.line2):
            _say(refused)
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
    from xshare.html.command import cli_html

    return cli_html(html_options(args), _say)


def html_options(args: argparse.Namespace):
    """`xshare html`'s options as the html package takes them."""
    from xshare.html.command import HtmlOptions

    return HtmlOptions(looking(args), args.session, args.output, args.index, args.open, getattr(args, "demo", False),
                       args.estimate, args.vocab)


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


