"""`xshare report` (and --from-rows, a team's rollup), `xshare collect` and `xshare mark`, with the
empty window's word on what lies outside it (xshare/commands/common.py says what the commands share).
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone
from pathlib import Path

from xshare.commands.common import looking, named_homes, price_table, print_json, report_problems, say, window_from
from xshare.printing import output_width, printable, printable_lines

TYPE_CHECKING = False  # typing.TYPE_CHECKING without loading typing at the CLI's start-up; checkers see True
if TYPE_CHECKING:
    from collections.abc import Iterable

    from xshare.measure.row import SessionRow


def _refuse_rows_file(args: argparse.Namespace) -> bool:
    """Before measuring: True (after saying why) when --rows names a file xshare must not write."""
    if not args.rows:
        return False
    from xshare.report.outputs import refusal  # what it checks costs a warm report a tenth of its time to import
    from xshare.report.rows import not_rows

    why = refusal(Path(args.rows), named_homes(args)) or not_rows(Path(args.rows))
    if why:
        say(f"could not write the rows file {args.rows}: {why}")
    return why is not None


def measure_in_window(args: argparse.Namespace, window):
    """Every session the flags name, measured (problems said on stderr); those that started in the window,
    and how many are still active at its end."""
    from xshare.agents.common import progress
    from xshare.agents.common.packed import in_window
    from xshare.report.render import CountingPlace
    from xshare.sessions.every_agent import measure

    measured = measure(looking(args, since=window.since))
    progress.doing("summing the sessions")
    report_problems(measured.problems, getattr(args, "demo", False))
    place = CountingPlace(window)
    rows, deferred = in_window(measured.rows, place)  # a session without API calls is a session
    if place.undated:
        say(window.undated_note(place.undated))
    return measured, rows, deferred


def cmd_report(args: argparse.Namespace) -> int:
    from xshare.report.render import Report
    from xshare.report.rows import write_rows

    if args.from_rows:
        return _report_from_rows(args)
    if args.demo:
        window = use_demo(args)
    else:
        window = window_from(args)
        if window is None:
            return 2
    if _refuse_rows_file(args):
        return 1
    try:
        dollars = _dollar_sums(args)
    except ValueError as error:  # prices.PriceError: a --prices file xshare cannot use, said before measuring
        say(str(error))
        return 2
    measured, rows, deferred = measure_in_window(args, window)
    remembered, other = _remembered_in_window(args, measured, window)
    rows.items += remembered.items
    if not rows:
        say_empty_window(args, window, measured, deferred)
        return 2
    if args.rows:
        try:
            from xshare.report.identity import stamped

            write_rows(Path(args.rows), stamped(rows))
        except OSError as error:
            say(f"could not write the rows file: {error.strerror or error}")
            return 1
    choice = measured.tokenizer
    groups, summed = _summed(args, rows, dollars)
    report = Report(groups, window, choice.name, choice.note, measured.sources, deferred,
                    remembered=len(remembered), other_tokenizer=other, dollars=dollars,
                    counter=measured.counted_by[0], counter_note=measured.counted_by[1])
    if args.json:
        print_json({**report.to_json(), **_over_time_json(args.by, summed)})
    else:
        width = output_width()
        sys.stdout.write(report.to_text(width, _over_time_text(args.by, summed, width), by=bool(args.by),
                                        marked=bool(summed.marks)))
    return 0


def _summed(args: argparse.Namespace, rows, dollars):
    """The groups' figures (`dollars` summed on the way), and --by's periods and the marks' sides. With neither,
    the groups come from the last report's memo when it summed the same rows (report/sums_memo.py)."""
    from xshare.report.periods import OverTime, sum_rows

    marks = [] if args.demo else _marks()
    table = dollars.table if dollars is not None else None
    if args.by or marks or args.no_cache:
        tally, summed = sum_rows(_priced(rows, dollars), args.by, marks, table)
        return tally.groups(), summed
    from xshare.report import sums_memo

    groups = sums_memo.summed(rows, dollars, lambda: sum_rows(_priced(rows, dollars), None, [], table)[0].groups())
    return groups, OverTime(None, [], table)


def _dollar_sums(args: argparse.Namespace):
    """The report's dollar sums at list price (None when dollars are turned off); PriceError on a bad file."""
    from xshare.report.dollars import DollarSums

    table = price_table(args)
    return None if table is None else DollarSums(table)


def _priced(rows, dollars):
    """The rows as they pass to the sums, each priced on the way (one pass over packed rows, not two)."""
    for row in rows:
        if dollars is not None:
            dollars.add(row)
        yield row


def use_demo(args: argparse.Namespace):
    """Point the flags at the demo corpus (the shipped corpus only, never this machine's sessions; removed
    when the command returns); its window, which holds all of it."""
    from xshare.demo.corpus import demo_homes, temporary_demo_corpus
    from xshare.report.render import Window
    from xshare.sessions.registry import REGISTRY

    args.demo_folder, root = temporary_demo_corpus()  # kept on args: removed when the command is done with it
    homes = demo_homes(root)
    for adapter in REGISTRY:
        setattr(args, adapter.flag, homes.get(adapter.agent, []))
    args.no_cache = True
    return Window(None, datetime.now(timezone.utc), "the demo corpus that ships with xshare")


def sessions_in_window(args: argparse.Namespace, command: str):
    """The window and what `report` measures in it, for the commands that look at its sessions one by one
    (`sessions`, `advice`); None when there is no window or nothing in it (said on stderr: exit 2)."""
    window = use_demo(args) if args.demo else window_from(args)
    if window is None:
        return None
    measured, rows, deferred = measure_in_window(args, window)
    if not rows:
        say_empty_window(args, window, measured, deferred, command=command)
        return None
    return window, measured, rows


def say_empty_window(args: argparse.Namespace, window, measured, deferred: int, command: str = "report") -> None:
    """Why there is nothing to show: the window, what lies outside it and the flag that takes it in, or
    where xshare looked."""
    still = f"; {deferred} still active at its end" if deferred else ""
    say(f"no session started in the window ({window.describe()}){still}")
    outside = _outside_window(args, window, measured)
    for line in outside or [f"looked for {place}" for place in measured.looked_in]:
        say(line)
    if not outside:
        say("try " + ", ".join(_empty_window_hints(args, command)) + " or `xshare report --demo` for a sample report")


def _empty_window_hints(args: argparse.Namespace, command: str) -> list[str]:
    """What else to try, leaving out what was given (`--all` suggested to a run that had it helps no one)."""
    from xshare.sessions.registry import FLAGS

    hints = [] if getattr(args, "all", False) else [f"`xshare {command} --all`", "a longer --since-days"]
    if any(getattr(args, flag, None) for flag in FLAGS):
        hints.append("another folder than the one named")
    return hints


def _outside_window(args: argparse.Namespace, window, measured) -> list[str]:
    """An empty window's word on what lies outside it: how many sessions started before and after it, the
    newest start, and the flag that takes them in (the sessions are measured again without the window's
    start, from the cache for most of them, so that an empty report never hides what exists)."""
    from xshare.report.words import outside_window
    from xshare.sessions.every_agent import measure

    if window.since is not None:
        with _quiet_stderr():  # their problems were said, or are outside the window
            measured = measure(looking(args, warn=False))
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
        say("--from-rows takes the window flags and --json (not --by, --rows or --demo)")
        return 2
    window = window_from(args)
    if window is None:
        return 2
    place = CountingPlace(window)
    rollup = read_rows_files([Path(path) for path in args.from_rows], place)
    if place.undated:
        say(f"rows files: {window.undated_note(place.undated)}")
    for kind, count in (("unreadable lines", rollup.bad_lines), ("sessions given twice, counted once",
                        rollup.duplicates), ("rows outside the window", rollup.outside_window)):
        if count:
            say(f"rows files: {kind}: {count:,}")
    if rollup.impossible:
        why = ", ".join(f"{reason}: {count:,}" for reason, count in rollup.impossible.most_common())
        say(f"rows files: rows with impossible figures or wrong types left out: "
             f"{sum(rollup.impossible.values()):,} ({why})")
    if not rollup.rows:
        say(f"no session in the rows files started in the window ({window.describe()})")
        return 2
    left_out = rollup.left_out()
    note = "; ".join(f"{count:,} sessions counted with {name} left out" for name, count in left_out.items())
    sources = {"rows files": f"{rollup.files:,} read", "machines": f"{len(rollup.machines):,}",
               "people": f"{len(rollup.people):,}"}
    tokenizer = rollup.tokenizer()
    assert tokenizer is not None  # rows were summed, each counted with a tokenizer
    report = Report(rollup.groups(), window, tokenizer, note, sources)
    if args.json:
        print_json({**report.to_json(), "rollup": rollup.to_json()})
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
            say('no marks yet; `xshare mark "what changed"` adds one')
        for number, mark in enumerate(read_marks(), 1):  # numbered for --remove; in UTC, whatever was stored
            print(f"{number}  {mark_line(mark)}")
        return 0
    label = " ".join(args.label).strip()
    if not label:  # `xshare mark ""`: a mark no one could tell apart in a report
        say('a mark needs words that say what changed, e.g. `xshare mark "CLAUDE.md: search before reading"`')
        return 2
    try:
        at = parse_cli_time(args.at) if args.at else datetime.now(timezone.utc)
    except ValueError as error:
        say(str(error))
        return 2
    try:
        mark = add_mark(label, at)
    except OSError as error:
        say(f"could not store the mark: {error.strerror or error}")
        return 1
    print(f"marked {mark_line(mark)}")
    return 0


def _remove_mark(args: argparse.Namespace) -> int:
    """`xshare mark --remove N`: N as `xshare mark` numbers them."""
    from xshare.report.periods import mark_line, read_marks, remove_mark

    count = len(read_marks())
    if args.label or args.at:
        say("--remove takes only the mark's number; to correct a mark, remove it and mark again with --at")
        return 2
    if not 1 <= args.remove <= count:
        say(f"no mark {args.remove}: " + (f"the marks are 1 to {count} (`xshare mark` lists them)" if count
                                           else "there are no marks"))
        return 2
    try:
        removed = remove_mark(args.remove)
    except OSError as error:
        say(f"could not store the marks: {error.strerror or error}")
        return 1
    if removed is None:  # another run removed it since they were counted
        say(f"no mark {args.remove}: `xshare mark` lists them")
        return 2
    print(f"removed {mark_line(removed)}")
    return 0


def _remembered_in_window(args: argparse.Namespace, measured, window):
    """Keep the measured rows in the history (never the demo's); the remembered sessions in the window
    whose transcript is gone, and how many more were left out for their tokenizer. None with
    --no-history, nor for a report on folders or databases the user named (a report on them alone)."""
    from xshare.agents.common.packed import PackedRows, in_window
    from xshare.report.history import gone_sessions, keep
    from xshare.sessions.registry import FLAGS

    if args.demo:
        return PackedRows(), 0
    remembered = keep(measured.rows)
    if getattr(args, "no_history", False) or any(getattr(args, flag, None) for flag in FLAGS):
        return PackedRows(), 0
    same, other = gone_sessions((), remembered, measured.tokenizer.name)  # keep() left out the measured
    return in_window(same, window.place)[0], sum(1 for row in other if window.place(row) == "in")


def cmd_collect(args: argparse.Namespace) -> int:
    from xshare.report.rows import merge_into

    if not args.rows and args.otlp is None:
        say("collect needs --rows FILE, --otlp [ENDPOINT] or both")
        return 2
    window = window_from(args)
    if window is None:
        return 2
    if _refuse_rows_file(args):
        return 1
    measured, rows, deferred = measure_in_window(args, window)
    from xshare.report.history import keep

    keep(measured.rows)
    if args.otlp is not None and not _export_otlp(args.otlp, rows):
        return 1
    if not args.rows:
        return 0
    path = Path(args.rows)
    from xshare.report.identity import stamped

    try:
        merged, added, replaced = merge_into(path, stamped(rows))  # under a lock: another run's rows stay
    except OSError as error:
        say(f"could not write the rows file: {error.strerror or error}")
        return 1
    to_date = "; ".join(_shares_to_date(merged)) or "no interactive share yet"
    later = f", {deferred} still active (next run)" if deferred else ""
    line = f"{datetime.now(timezone.utc):%Y-%m-%d}: {added} sessions added, {replaced} replaced{later}; {to_date}"
    print(printable(line))
    return 0


def _export_otlp(endpoint: str, rows) -> bool:
    """`collect --otlp`: the window's sessions as OpenTelemetry counters (export/otlp.py); whether it worked
    (said on stdout with the endpoint, or why not on stderr)."""
    from xshare.export.otlp import ExportError, disabled, export, shown, target

    if disabled():
        say("OTEL_SDK_DISABLED=true: nothing exported over OpenTelemetry")
        return True
    try:
        sessions, points = export(rows, endpoint or None)
    except ExportError as error:
        say(f"could not export over OpenTelemetry: {error}")
        return False
    where = shown(target(endpoint or None))
    print(printable(f"exported {sessions:,} sessions ({points:,} points) over OTLP to {where}"))
    return True


def _shares_to_date(rows: Iterable[SessionRow]) -> list[str]:
    """Each agent's interactive share over every row collected so far, in the registry's order."""
    from xshare.report.render import group_key, summarize
    from xshare.sessions.registry import REGISTRY

    interactive = summarize(row for row in rows if group_key(row).endswith("/interactive"))
    groups = [(key, interactive.get(key)) for key in (f"{adapter.agent}/interactive" for adapter in REGISTRY)]
    return [f"{key} share to date {group['exploration_share_of_context']:.1%} ({group['sessions']:,} sessions)"
            for key, group in groups if group and group["exploration_share_of_context"] is not None]
