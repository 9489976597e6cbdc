"""What the report says in plain words: the notes under its tables, what its columns mean, and the one
next step that fits the figures. A reader who never saw the method should follow every line (issue 21).

Works on the groups' figures only (report/render.py sums them), so nothing here can print a session.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from xshare.agents.common import unseen
from xshare.agents.table import line_of
from xshare.measure.timestamps import session_time
from xshare.printing import printable

ANECDOTE_BELOW = 10  # sessions; fewer is an anecdote, not a finding

COLUMN_NOTES = (
    "Exploration of context: of everything the agent sent the model, the part that was code it read or "
    "searched (file reads, searches, read-only shell commands, and those calls' arguments). Every API call "
    "sends the conversation again, so a file read early counts again on each later call that carried it.",
    "of billed prompt: the same tokens as a share of the prompt tokens you were billed for.",
    "Recorded / billed: how much of that bill the records account for; near 100% means the shares cover the "
    "whole bill (the rest is the system prompt and tool definitions, which no record holds).",
    "Median session: the share of a typical session, half above it and half below, so one long session "
    "cannot set it.",
    "Edits: file edits and writes. Other shell: shell commands that change something.",
    "Only the sessions a person drove (interactive) are read against the bands; those a program drove "
    "(claude -p, the SDKs), subagents and the agent's own internal calls (summaries, side questions) are "
    "shown beside them.",
)
REREAD_NOTE = ("Re-sent reads: files Claude Code sent again on its own after it summarised a long conversation; "
               "shown beside exploration, not in it.")
NEURALMIND_NOTE = "NeuralMind block: what the NeuralMind code index added to the prompts."
# the unrecorded calls of rows whose agent no table line names (a rows file from elsewhere, a team's rollup)
COMPACTIONS_UNRECORDED = "compactions (the agent summarising a long conversation), from the agent's own usage totals"


def unrecorded_note(agent: str, calls: int, tokens: int, tasks: dict | None = None) -> str:
    """What the figures include that no transcript or database row shows, and where it comes from (the
    agent's line in agents/table.py says)."""
    what = f"{calls:,} call{'s' if calls != 1 else ''}" if calls else "calls"
    return f"{what} ({tokens:,} prompt tokens) billed but not in the record: {unrecorded_source(agent, tasks)}"


def unrecorded_source(agent: str, tasks: dict | None = None) -> str:
    """What an agent's calls no record holds are, and where the figures take them from (its table line)."""
    line = line_of(agent)
    named = ", ".join(f"{printable(task)} {count:,}" for task, count in (tasks or {}).items()) or "unnamed"
    return line.unrecorded.format(tasks=named) if line is not None and line.unrecorded else COMPACTIONS_UNRECORDED


def row_unrecorded(row: Mapping[str, Any]) -> str:
    """The unrecorded-calls note of a session row or a group (both carry the same fields)."""
    return unrecorded_note(row["agent"], row.get("unrecorded_calls", 0), row["unrecorded_prompt_tokens"],
                           row.get("unrecorded_tasks"))


def review_note(reviews: int) -> str:
    """Hermes's background memory/skill reviews: calls that exist but no record holds (agents/hermes/review.py)."""
    return (f"about {reviews:,} background memory/skill review{'s' if reviews != 1 else ''} Hermes started after "
            "long turns, each re-sending the whole conversation (a one-shot `hermes chat -q` may exit first); "
            "Hermes records neither their calls nor their tokens, so they are not counted")


def _section(title: str, notes: list[str]) -> list[str]:
    return ["", title, "", *notes] if notes else []


def reading_lines(groups: dict[str, dict], bands: tuple) -> list[str]:
    """Each band's meaning once, then each interactive group's band (and what qualifies it): the meaning is
    not repeated for every agent."""
    readings = {key: group["reading"] for key, group in groups.items() if group.get("reading")}
    meanings = [f"  {name}: {words}" for _, name, words in bands
                if any(text.startswith(f"{name}: {words}") for text in readings.values())]
    return [*meanings, *(
        f"  {printable(key)} ({groups[key]['sessions']:,} session{'s' if groups[key]['sessions'] != 1 else ''}): "
        + _band_only(text, bands) for key, text in readings.items())]


def _band_only(text: str, bands: tuple) -> str:
    for _, name, words in bands:
        if text.startswith(f"{name}: {words}"):
            return name + text[len(f"{name}: {words}"):]
    return text


def notes_lines(groups: dict[str, dict]) -> list[str]:
    """The sections under the reading: calls billed that the records show only in total, or not at all,
    sessions with no token counts, and sessions whose bill is too small to take a share of."""
    lines = _section(
        "Calls you were billed for that the records show only in total (counted in the figures above):",
        [f"  {printable(key)}: includes {row_unrecorded(group)}"
         for key, group in groups.items() if group.get("unrecorded_prompt_tokens")])
    reviews = [f"  {printable(key)}: {review_note(count)}"
               for key, group in groups.items() if (count := group.get("unrecorded_reviews"))]
    reviews += [f"  {printable(key)}: {note}" for key, group in groups.items()
                for note in unseen.notes(group.get(unseen.FIELD))]
    lines += _section("Calls you were billed for that no record holds (so not in the figures above):", reviews)
    lines += _section("Sessions whose agent recorded no token counts:", [
        f"  {key}: {count:,} session{'' if count == 1 else 's'} (an agent version that wrote none): counted, "
        f"{'its' if count == 1 else 'their'} share unknown"
        for key, group in groups.items() if (count := group.get("usage_unknown_sessions"))])
    lines += _section("Sessions whose shares are unknown (the records cannot explain the bill):", [
        f"  {printable(key)}: {count:,} session{'' if count == 1 else 's'} whose own records show more sent "
        "than was billed (the agent kept only part of the bill, or counted another way): left out of the "
        "shares, still counted in the calls and the bill"
        for key, group in groups.items() if (count := group.get("bill_short_sessions"))])
    return lines


def next_step(groups: dict[str, dict], everything: bool, by: bool, marked: bool) -> str:
    """The one thing to do next that fits the figures: more sessions when there are too few to go by,
    a look at the sessions when the share is large, the trend or a mark when it is middling."""
    read = [group for group in groups.values() if group.get("reading")
            and group["exploration_share_of_context"] is not None]
    sessions = sum(group["sessions"] for group in read)
    share = max((group["exploration_share_of_context"] for group in read), default=None)
    if share is None:
        return ("Next: `xshare html --index` writes a page for every session, showing what each one read and "
                "what it cost.")
    if sessions < ANECDOTE_BELOW and not everything:
        return (f"Next: {sessions:,} session{'s are' if sessions != 1 else ' is'} too few to go by; "
                "`xshare report --all` counts every session on this machine, not only the recent ones.")
    if share >= 0.30:
        return ("Next: `xshare html --index` writes a page for every session; open the one that cost most to "
                "see which reads filled its context, then try a change (a code index, a map of the code in "
                "CLAUDE.md) and `xshare mark` it.")
    if share < 0.10:
        return ("Next: nothing to change for the bill's sake; `xshare html` shows your latest session call by "
                "call if you want to see where the tokens went.")
    if not by and not marked:
        return "Next: `xshare report --by week` shows whether the share is rising or falling."
    return ('Next: when you try a change (a code index, a map of the code in CLAUDE.md), `xshare mark "what '
            'changed"` and later reports compare before and after.')


def outside_window(window, starts: Iterable[object], now: datetime) -> list[str]:
    """For an empty window (a report/render.py Window): how many sessions started before and after it,
    when the newest of those before started, and the flag that takes them in; [] when there are none."""
    times = [moment for moment in map(session_time, starts) if moment is not None]
    before = [moment for moment in times if window.since and moment < window.since]
    after = [moment for moment in times if moment > window.until]
    lines = []
    if before:
        newest = max(before)
        days = (now.date() - newest.date()).days  # the window starts at midnight, N days back
        flag = f"--since-days {days:,}" if window.label.startswith("last ") else f"--since {newest:%Y-%m-%d}"
        every = f"all {len(before):,}" if len(before) > 1 else "it"
        lines.append(f"{len(before):,} session{'s' if len(before) != 1 else ''} started before it, the newest on "
                     f"{newest:%Y-%m-%d %H:%M} UTC: `{flag}` takes that one in, `--all` takes {every}")
    if after:
        lines.append(f"{len(after):,} session{'s' if len(after) != 1 else ''} started after it (it ends "
                     f"{window.until:%Y-%m-%d %H:%M} UTC): a later --until, or none, takes them in")
    return lines
