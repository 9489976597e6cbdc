"""`xshare sessions`: the sessions that started in the window, newest first, with what a person needs to
recognise one (its start in UTC, agent and source, calls, billed prompt, exploration share, project folder)
and an id `xshare session` and `xshare html` take. A command a person runs to look, like `xshare session`:
unlike the report it shows ids and project folder names, never a prompt.
"""

from __future__ import annotations

import argparse
import sys

from xshare.commands.common import looking, print_json
from xshare.text import output_width, pct, printable, printable_lines, table

PROJECT_WIDTH = 28  # a project folder longer than this keeps its end, which tells projects apart


def cmd_sessions(args: argparse.Namespace) -> int:
    from xshare.commands.report import sessions_in_window
    from xshare.measure.ids import short_ids
    from xshare.measure.row import RUN_INSIDE, count_kinds
    from xshare.sessions.projects import project_names

    found = sessions_in_window(args, "sessions")
    if found is None:
        return 2
    window, measured, rows = found
    rows = list(rows)
    # by kind, as the report counts them: a Hermes session continuing another is still its platform's session
    listed = sorted((row for row in rows if args.subagents or row["source"] not in RUN_INSIDE),
                    key=lambda row: row.get("started_at") or "", reverse=True)
    not_listed = count_kinds(row for row in rows if not args.subagents and row["source"] in RUN_INSIDE)
    shown = listed[:args.limit] if args.limit else listed
    names = project_names(looking(args, measured.tokenizer, window.since, warn=False))
    short = short_ids(row["id"] for _, row in measured.rows.pairs())  # once: every measured id, not per entry
    entries = [_entry(row, names, short) for row in shown]
    if args.json:
        print_json({"window": window.describe(), "sessions_in_window": len(rows), "by_kind": count_kinds(rows),
                    "listed": len(listed), "shown": len(entries), "not_listed": not_listed, "sessions": entries})
        return 0
    sys.stdout.write(_text(entries, output_width()))
    more = len(listed) - len(shown)
    if more:
        print(f"{more:,} more in the window: `--limit {len(listed)}` lists them all")
    if not_listed:
        print(f"{_kinds_words(not_listed)} not listed: `--subagents` lists them too")
    return 0


def _kinds_words(counts: dict[str, int]) -> str:
    """Sessions by kind in words: "86 subagent and 16 internal sessions"."""
    from xshare.measure.row import kinds_text  # with the command: the CLI's start-up imports no measuring

    total = sum(counts.values())
    return f"{kinds_text(counts)} session{'s' if total != 1 else ''}"


def _entry(row: dict, names: dict, short: dict[str, str]) -> dict:
    from xshare.sessions.projects import project_of

    return {"id": row["id"], "short_id": short.get(row["id"], row["id"]), "started_at": row.get("started_at"),
            "agent": row["agent"], "source": row["source"], "parent": row.get("parent"), "api_calls": row["api_calls"],
            "prompt_tokens_billed": row["prompt_tokens_billed"],
            "exploration_share_of_context": row.get("exploration_share_of_context"),
            "project": project_of(names, row["agent"], row["id"])}


def _started(value: object) -> str:
    from xshare.measure.timestamps import session_time

    moment = session_time(value)
    return f"{moment:%Y-%m-%d %H:%M}" if moment else "-"


def _project(name: str | None) -> str:
    if not name:
        return "-"
    return name if len(name) <= PROJECT_WIDTH else "…" + name[-(PROJECT_WIDTH - 1):]


def _text(entries: list[dict], width: int | None) -> str:
    header = ("session", "started (UTC)", "agent/source", "calls", "billed prompt", "exploration", "project")
    lines = [(printable(entry["short_id"]), _started(entry["started_at"]),
              printable(f"{entry['agent']}/{entry['source']}"), f"{entry['api_calls']:,}",
              f"{entry['prompt_tokens_billed']:,}", pct(entry["exploration_share_of_context"], "-"),
              printable(_project(entry["project"]))) for entry in entries]
    return printable_lines("\n".join(table(header, lines, width))) + "\n"
