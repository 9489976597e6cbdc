"""`xshare sessions`: the sessions that started in the window, newest first, with what a person needs to
recognise one (its start in UTC, agent and source, calls, billed prompt, exploration share, dollars at list
price, project folder) and an id `xshare session` and `xshare html` take; `--sort cost` puts the costliest
first, those with no price last. A command a person runs to look, like `xshare session`:
unlike the report it shows ids and project folder names, never a prompt.
"""

from __future__ import annotations

import argparse
import sys

from xshare.commands.common import looking, price_table, print_json, say
from xshare.printing import fitted_table, output_width, pct, printable, printable_lines, table, wrap

TYPE_CHECKING = False  # typing.TYPE_CHECKING without loading typing at the CLI's start-up
if TYPE_CHECKING:
    from xshare.measure.row import SessionRow

# a project folder longer than the first keeps its end, which tells projects apart; narrower terminals cut more
PROJECT_CUTS = (28, 20, 14, 10)


def cmd_sessions(args: argparse.Namespace) -> int:
    from xshare.commands.report import sessions_in_window
    from xshare.measure.ids import short_ids
    from xshare.measure.row import RUN_INSIDE, count_kinds
    from xshare.sessions.projects import project_names

    try:  # a --prices file xshare cannot use is refused before anything is read, as the report does
        table = price_table(args)
    except ValueError as error:
        say(str(error))
        return 2
    found = sessions_in_window(args, "sessions")
    if found is None:
        return 2
    window, measured, rows = found
    rows = list(rows)
    # by kind, as the report counts them: a Hermes session continuing another is still its platform's session
    listed = _ordered([row for row in rows if args.subagents or row["source"] not in RUN_INSIDE], table,
                      getattr(args, "sort", "started"))
    not_listed = count_kinds(row for row in rows if not args.subagents and row["source"] in RUN_INSIDE)
    shown = listed[:args.limit] if args.limit else listed
    names = project_names(looking(args, measured.tokenizer, window.since, warn=False), shown)
    short = short_ids(row["id"] for _, row in measured.rows.pairs())  # once: every measured id, not per entry
    entries = [_entry(row, names, short, table) for row in shown]
    if args.json:
        print_json({"window": window.describe(), "sessions_in_window": len(rows), "by_kind": count_kinds(rows),
                    "listed": len(listed), "shown": len(entries), "not_listed": not_listed,
                    "prices": table.to_json() if table is not None else None, "sessions": entries})
        return 0
    width = output_width()
    text, left_out = _text(entries, width, table)
    sys.stdout.write(text)
    more = len(listed) - len(shown)
    notes = [f"{more:,} more in the window: `--limit {len(listed)}` lists them all"] if more else []
    if left_out:
        notes.append(f"Left out to fit {width} columns: {', '.join(left_out)} (a wider terminal, `xshare session "
                     "ID` or `--json` shows them).")
    notes += [_dollars_note(entries, table)] if table is not None else []
    notes += [f"{_kinds_words(not_listed)} not listed: `--subagents` lists them too"] if not_listed else []
    for note in notes:
        print(printable_lines("\n".join(wrap(note, width, "  "))))
    return 0


def _kinds_words(counts: dict[str, int]) -> str:
    """Sessions by kind in words: "86 subagent and 16 internal sessions"."""
    from xshare.measure.row import kinds_text  # with the command: the CLI's start-up imports no measuring

    total = sum(counts.values())
    return f"{kinds_text(counts)} session{'s' if total != 1 else ''}"


def _ordered(rows: list[SessionRow], table, sort: str) -> list[SessionRow]:
    """Newest first; by cost: costliest first, those with no price after them (newest first among them)."""
    from xshare.measure.prices import row_cost

    newest = sorted(rows, key=lambda row: row.get("started_at") or "", reverse=True)
    if sort != "cost" or table is None:
        return newest
    costs = [row_cost(row, table).dollars for row in newest]
    order = sorted(range(len(newest)), key=lambda index: (costs[index] is None, -(costs[index] or 0.0), index))
    return [newest[index] for index in order]


def _entry(row: SessionRow, names: dict, short: dict[str, str], table) -> dict:
    entry = {"id": row["id"], "short_id": short.get(row["id"], row["id"]), "started_at": row.get("started_at"),
             "agent": row["agent"], "source": row["source"], "parent": row.get("parent"),
             "api_calls": row["api_calls"], "prompt_tokens_billed": row["prompt_tokens_billed"],
             "exploration_share_of_context": row.get("exploration_share_of_context"),
             "project": names.get((row["agent"], row["id"]))}
    if table is not None:
        from xshare.measure.prices import row_cost

        entry["cost"] = row_cost(row, table).to_json()
    return entry


def _dollars_note(entries: list[dict], table) -> str:
    """What the $ column is: the table it was priced with; what `unknown` and a partial figure mean."""
    from xshare.report.session_dollars import PARTLY_NOTE

    unknown = sum(entry["cost"]["dollars"] is None for entry in entries)
    partly = any(entry["cost"]["unpriced_calls"] and entry["cost"]["dollars"] is not None for entry in entries)
    return " ".join([f"$: {table.describe()}.",
                     *([f"unknown: no list price or no usage recorded ({unknown:,}); `xshare session ID` "
                        "says which."] if unknown else []),
                     *([PARTLY_NOTE + "."] if partly else [])])


def _started(value: object) -> str:
    from xshare.measure.timestamps import session_time

    moment = session_time(value)
    return f"{moment:%Y-%m-%d %H:%M}" if moment else "-"


def _project(name: str | None, width: int = 28) -> str:
    if not name:
        return "-"
    return name if len(name) <= width else "…" + name[-(width - 1):]


def _text(entries: list[dict], width: int | None, prices=None) -> tuple[str, list[str]]:
    """The list, one line a session, and the columns it left out to fit `width`."""
    from xshare.measure.prices import RowCost
    from xshare.report.session_dollars import cost_cell

    dollars = ("$",) if prices is not None else ()
    header = ("session", "started (UTC)", "agent/source", "calls", "billed prompt", "exploration", *dollars,
              "project")
    lines = [(printable(entry["short_id"]), _started(entry["started_at"]),
              printable(f"{entry['agent']}/{entry['source']}"), f"{entry['api_calls']:,}",
              f"{entry['prompt_tokens_billed']:,}", pct(entry["exploration_share_of_context"], "-"),
              *((cost_cell(RowCost(**entry["cost"])),) if dollars else ()), entry["project"]) for entry in entries]
    # given up first: the figures `xshare session ID` repeats, then the agent; the project, which tells sessions
    # apart, is cut to its end before it goes; never the id, the started time, the share or $
    billed, calls, agent, project = 4, 3, 2, len(header) - 1
    for project_width in (*PROJECT_CUTS, 0):
        cut = [(*row[:project], printable(_project(row[project], project_width))) for row in lines]
        fitted = fitted_table(header, cut, width, (billed, calls, agent) if project_width else
                              (billed, calls, agent, project))
        if fitted is not None:
            return printable_lines("\n".join(fitted[0])) + "\n", fitted[1]
    return printable_lines("\n".join(table(header, cut, width))) + "\n", []
