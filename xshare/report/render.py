"""Groups, shares and the pre-registered reading, as the user guide prints them and as JSON.

Everything here works on session rows, so stdout can only ever hold aggregates.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from xshare import METHOD_VERSION, __version__
from xshare.agents.common import unseen
from xshare.measure.ledger import CATEGORIES, REREAD, bill_short, share
from xshare.measure.row import SessionRow, kind_order
from xshare.measure.timestamps import (  # parse_time: rows, history, periods, pages import it here
    parse_time,
    session_time,
)
from xshare.printing import pct, printable, printable_lines, table, wrap
from xshare.report.dollars import DollarSums
from xshare.report.words import (
    ANECDOTE_BELOW,
    COLUMN_NOTES,
    NEURALMIND_NOTE,
    REREAD_NOTE,
    next_step,
    notes_lines,
    reading_lines,
    review_note,
    row_unrecorded,
)

# the spec's thresholds on interactive sessions' share of the recorded context, fixed in advance; the
# words say what each band means for the reader's bill, without the method's vocabulary (issue 21)
READINGS = (
    (0.10, "under 10%", "a small part of your bill, so reading less code would barely change what you pay"),
    (0.30, "10% to 30%", "a noticeable part of your bill, worth watching and worth weighing a change that cuts "
     "what the agent reads"),
    (float("inf"), "30% or more", "a large part of your bill, so cutting what the agent reads is where savings are"),
)
# the title names what the headline column measures; the line under it says how the other figures relate
TITLE = "Exploration share of the token bill: how much of what your agents sent the model was code they read"
HEADLINE = ("The headline is \"Exploration of context\" below. Beside it, \"of billed prompt\" is the same tokens "
            "over the prompt tokens you were billed for, \"Median session\" a typical session's share, and the "
            "dollars line prices the same share.")
NOISE_POINTS = 0.01  # a pooled share this close to a threshold says nothing about the threshold
UNDATED = "undated"  # Window.place: a session with no plausible start time


# --- time and the window ------------------------------------------------------------------------


def parse_cli_time(value: str, end_of_day: bool = False) -> datetime:
    """--since/--until/--at: a date (whole UTC day) or a timestamp, UTC unless it names an offset; the
    moment is returned in UTC (09:00+02:00 is 07:00 UTC), as everything is stored and printed."""
    moment = parse_time(value)
    if moment is None:
        raise ValueError(f"not a date or ISO timestamp (years 1 to 9999 in UTC): {value!r}")
    if end_of_day and len(value.strip()) == 10:
        moment += timedelta(days=1, microseconds=-1)
    return moment


@dataclass(frozen=True)
class Window:
    since: datetime | None
    until: datetime
    label: str

    @classmethod
    def build(
        cls,
        now: datetime,
        since_days: int = 30,
        since: str | None = None,
        until: str | None = None,
        everything: bool = False,
        lag_hours: float = 0.0,
    ) -> Window:
        """The spec's window: an explicit --until is capped at now minus --lag-hours."""
        latest = now - timedelta(hours=lag_hours)
        end = min(parse_cli_time(until, end_of_day=True), latest) if until else latest
        if everything:
            return cls(None, end, "all sessions")
        if since:
            start, label = parse_cli_time(since), ""
        else:
            start = (now - timedelta(days=since_days)).replace(hour=0, minute=0, second=0, microsecond=0)
            label = f"last {since_days} days"
        if start > end:
            raise ValueError(f"the window starts ({start:%Y-%m-%d %H:%M}) after it ends ({end:%Y-%m-%d %H:%M})")
        return cls(start, end, label)

    def place(self, row: SessionRow) -> str:
        """'in', 'out', 'deferred' (started inside but still active at the window's end), or 'undated': no
        plausible start time (xshare.measure.timestamps), so no window can hold it; only --all (no start) counts it."""
        started = session_time(row.get("started_at"))
        if started is None:
            return "in" if self.since is None else UNDATED
        if (self.since and started < self.since) or started > self.until:
            return "out"
        last = session_time(row.get("last_activity")) or session_time(row.get("ended_at"))
        return "deferred" if last and last > self.until else "in"

    @staticmethod
    def undated(row: SessionRow) -> bool:
        return session_time(row.get("started_at")) is None

    def undated_note(self, count: int) -> str:
        """The stderr line on sessions no window can place (their records hold no plausible time)."""
        counted = "counted, as --all asks for every session" if self.since is None else "counted only with --all"
        return f"sessions with no plausible time (2020 to a day from now) in their records: {count:,}, {counted}"

    def describe(self) -> str:
        until = self.until.date().isoformat()  # not %Y: year 1 would print as "1"
        if self.since is None:
            return f"Sessions started up to {until} ({self.label or 'all sessions'})"
        label = f" ({self.label})" if self.label else ""
        return f"Sessions started {self.since.date().isoformat()} to {until}{label}"

    def to_json(self) -> dict:
        return {
            "since": self.since.isoformat() if self.since else None,
            "until": self.until.isoformat(),
            "label": self.label,
        }


class CountingPlace:
    """A window's place() for rows streamed from files, counting the rows no window can place."""

    def __init__(self, window: Window) -> None:
        self.window, self.undated = window, 0

    def __call__(self, row: SessionRow) -> str:
        self.undated += self.window.undated(row)
        return self.window.place(row)


# --- groups ---------------------------------------------------------------------------------------


def group_key(row: SessionRow) -> str:
    return f"{row['agent']}/{row['source']}"


def group_order(key: str) -> tuple:
    """Groups in the order the report lists them: by agent, then by kind (measure/row.py `kind_order`)."""
    agent, _, source = key.partition("/")
    return (agent, *kind_order(source))


def reading(pooled: float | None, median: float | None, sessions: int) -> str:
    """The pre-registered reading line for one interactive group."""
    if pooled is None:
        return "unknown: no recorded context to take a share of"

    def band(value: float) -> str:
        return next(f"{name}: {words}" for limit, name, words in READINGS if value < limit)

    text = band(pooled)
    near = [limit for limit, _, _ in READINGS[:-1] if abs(pooled - limit) < NOISE_POINTS]
    if near:
        text += f" (within a point of the {near[0]:.0%} line: too close to say which side it is on)"
    if median is not None and band(median) != band(pooled):
        text += f"; a typical session (the median, {median:.1%}) is {band(median).split(':')[0]}"
    if sessions < ANECDOTE_BELOW:
        text += f"; only {sessions} session{'s' if sessions != 1 else ''}: too few to go by ({ANECDOTE_BELOW} or more)"
    return text


def summarize(rows: Iterable[SessionRow]) -> dict[str, dict]:
    """Pooled figures per agent/source group, in report order."""
    tally = Tally()
    for row in rows:
        tally.add(row)
    return tally.groups()


@dataclass
class GroupSums:
    """One group's running sums: a few numbers, and one float per session for the median, whatever the
    number of sessions (a report over many sessions keeps these, never the rows)."""

    sessions: int = 0
    with_calls: int = 0
    api_calls: int = 0
    prompt: int = 0
    context: int = 0
    unrecorded_calls: int = 0
    unrecorded_prompt: int = 0
    unrecorded_reviews: int = 0
    usage_unknown: int = 0
    bill_short: int = 0  # sessions whose records show more sent than was billed (ledger.bill_short)
    covered_prompt: int = 0  # the bill of the other sessions, which the shares are taken over
    covered_context: int = 0
    covered_exploration: int = 0
    covered_reread: int = 0
    tasks: Counter = field(default_factory=Counter)
    unseen: Counter = field(default_factory=Counter)  # calls billed that no file records (agents/common/unseen.py)
    billed: list = field(default_factory=lambda: [0] * len(CATEGORIES))
    first_time: list = field(default_factory=lambda: [0] * len(CATEGORIES))
    shares: array = field(default_factory=lambda: array("d"))  # 8 bytes a session, not a float object's 32

    def add(self, row: SessionRow) -> None:
        """Raises KeyError or TypeError on a row missing a figure or holding a non-number, before any
        sum changes (a rows file's reader then counts the row as unreadable)."""
        billed = [row["billed_tokens"][category] for category in CATEGORIES]
        first = [row["first_time_tokens"][category] for category in CATEGORIES]
        calls = row["api_calls"]
        sum(billed) + sum(first) + calls + row["prompt_tokens_billed"] + row["context_tokens"]
        row.get("unrecorded_calls", 0) + row.get("unrecorded_prompt_tokens", 0)
        self.sessions += 1
        self.with_calls += 1 if calls else 0
        self.api_calls += calls
        self.prompt += row["prompt_tokens_billed"]
        self.context += row["context_tokens"]
        self.unrecorded_calls += row.get("unrecorded_calls", 0)
        self.unrecorded_prompt += row.get("unrecorded_prompt_tokens", 0)
        self.unrecorded_reviews += row.get("unrecorded_reviews", 0)
        self.usage_unknown += 1 if row.get("usage_unknown") else 0
        if bill_short(row["context_tokens"], row["prompt_tokens_billed"]):
            self.bill_short += 1
        else:
            self.covered_prompt += row["prompt_tokens_billed"]
            self.covered_context += row["context_tokens"]
            self.covered_exploration += row["billed_tokens"]["exploration"]
            self.covered_reread += row["billed_tokens"][REREAD]
        tasks = row.get("unrecorded_tasks")
        if isinstance(tasks, dict) and all(type(count) is int for count in tasks.values()):
            self.tasks.update(tasks)
        self.unseen.update(unseen.counts(row.get(unseen.FIELD)))
        for index in range(len(CATEGORIES)):
            self.billed[index] += billed[index]
            self.first_time[index] += first[index]
        value = row["exploration_share_of_context"]
        if isinstance(value, (int, float)):
            self.shares.append(value)

    def figures(self, agent: str, source: str) -> dict:
        """The group's figures, as the report prints them."""
        billed = dict(zip(CATEGORIES, self.billed, strict=True))
        first_time = dict(zip(CATEGORIES, self.first_time, strict=True))
        pooled = share(self.covered_exploration, self.covered_context)
        median = _median(self.shares) if self.shares else None
        return {
            "agent": agent,
            "source": source,
            "sessions": self.sessions,
            "sessions_with_api_calls": self.with_calls,
            "api_calls": self.api_calls,
            "prompt_tokens_billed": self.prompt,
            # billed calls the record does not show (Claude Code's compactions, Hermes's title and compression
            # calls): part of the two figures above and of the context, counted here so they can be told apart
            "unrecorded_calls": self.unrecorded_calls,
            "unrecorded_prompt_tokens": self.unrecorded_prompt,
            "unrecorded_tasks": dict(sorted(self.tasks.items())),
            # Hermes's background reviews: billed, recorded nowhere, so estimated and not counted above
            "unrecorded_reviews": self.unrecorded_reviews,
            # Codex's TUI title requests, Gemini's router requests: billed, recorded nowhere, not counted above
            unseen.FIELD: dict(sorted(self.unseen.items())),
            # sessions whose agent recorded no token usage (Codex before 0.3x): counted, share unknown
            "usage_unknown_sessions": self.usage_unknown,
            # sessions whose records show more sent than was billed: their shares unknown, out of the group's
            "bill_short_sessions": self.bill_short,
            "context_tokens": self.context,
            # over the sessions the shares are taken over: one whose records exceed its bill is said apart (the
            # header, bill_short_sessions), not folded into the group's calibration, as the index's chart does
            "recorded_over_billed": share(self.covered_context, self.covered_prompt),
            "exploration_share_of_context": pooled,
            "exploration_share_of_prompt": share(self.covered_exploration, self.covered_prompt),
            "median_session_share": median,
            # files the agent re-sent on its own after a compaction: beside exploration, not in it (README)
            "reread_share_of_context": share(self.covered_reread, self.covered_context),
            "reread_share_of_prompt": share(self.covered_reread, self.covered_prompt),
            "shares_of_context": {category: share(billed[category], self.context) for category in CATEGORIES},
            "billed_tokens": billed,
            "first_time_tokens": first_time,
            "reading": reading(pooled, median, self.sessions) if source == "interactive" else None,
        }


def _median(values: Iterable[float]) -> float:
    """statistics.median's answer, the same float, without importing statistics (fractions, decimal, random:
    a twentieth of a warm report's start-up)."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


class Tally:
    """Session rows summed per agent/source group as they come: summarize() without keeping the rows."""

    def __init__(self) -> None:
        self.by_group: dict[str, GroupSums] = {}

    def add(self, row: SessionRow) -> None:
        key = group_key(row)
        group = self.by_group.get(key)
        if group is None:
            group = self.by_group[key] = GroupSums()
        group.add(row)

    @property
    def sessions(self) -> int:
        return sum(group.sessions for group in self.by_group.values())

    def groups(self) -> dict[str, dict]:
        """Pooled figures per group, in report order."""
        ordered = sorted(self.by_group, key=group_order)
        return {key: self.by_group[key].figures(*key.split("/", 1)) for key in ordered}


# --- output ---------------------------------------------------------------------------------------


@dataclass
class Report:
    groups: dict[str, dict]
    window: Window
    tokenizer: str
    tokenizer_note: str
    sources: dict[str, str]
    deferred: int = 0
    remembered: int = 0  # sessions counted from xshare's history: their transcript is gone
    other_tokenizer: int = 0  # remembered sessions left out: counted with another tokenizer
    dollars: DollarSums | None = None  # None: dollars turned off (or a rollup, which does not price)
    # which counter counted this run's new texts (fastokens, tiktoken; None: none loaded) and why, in plain words;
    # both "" for a rollup of rows files, which counts nothing
    counter: str | None = None
    counter_note: str = ""

    @property
    def sessions(self) -> int:
        return sum(group["sessions"] for group in self.groups.values())

    def to_json(self) -> dict:
        return {
            "tool": "xshare",
            "version": __version__,
            "method": METHOD_VERSION,
            "tokenizer": self.tokenizer,
            "tokenizer_note": self.tokenizer_note or None,
            "counter": self.counter,
            "counter_note": self.counter_note or None,
            "window": {**self.window.to_json(), "deferred_sessions": self.deferred},
            "sources": self.sources,
            "sessions": self.sessions,
            "sessions_bill_unexplained": self.unexplained,
            "remembered_sessions": self.remembered,
            "remembered_other_tokenizer": self.other_tokenizer,
            "groups": self.groups,
            "dollars": self.dollars.to_json() if self.dollars else None,
        }

    def to_text(self, width: int | None = None, appendix: str = "", by: bool = False, marked: bool = False,
                hint: bool = True) -> str:
        """The report for a person, laid out in `width` columns (None: one line per table row); `appendix`
        (the periods, the marks) goes before the closing next step, which `by`/`marked` help choose."""
        line_width = min(width or 105, 105)  # the column notes stay readable on a wide screen or in a file
        found = "; ".join(f"{name}: {status}" for name, status in self.sources.items())
        deferred = f" ({self.deferred} more still active at the window's end, left for a later run)"
        groups = self.groups.items()
        neuralmind = any(g["billed_tokens"]["neuralmind"] for _, g in groups)  # a column only when it says something
        reread = any(g["reread_share_of_context"] for _, g in groups)  # Claude Code's alone: shown when it has some
        lines = [
            *wrap(TITLE, width),
            *wrap(f"{self.window.describe()}. {found}{self._history_note()}.", width),
            "",
            *wrap(HEADLINE, width),
            "",
            f"Sessions: {self.sessions:,}{deferred if self.deferred else ''}",
            *(wrap(note, width) if (note := self._unexplained_note()) else []),
            *(self.dollars.lines(width) if self.dollars else []),
            "",
            *wrap("Exploration share (reading and searching code):", width),
            "",
            *table(
                ("Agent / source", "Sessions", "API calls", "Exploration of context", "of billed prompt",
                 "Median session", *(["Re-sent reads"] if reread else [])),
                [(_label(key), f"{g['sessions']:,}", f"{g['api_calls']:,}", pct(g["exploration_share_of_context"]),
                  pct(g["exploration_share_of_prompt"]), pct(g["median_session_share"]),
                  *([pct(g["reread_share_of_context"])] if reread else [])) for key, g in groups], width,
            ),
            "",
            *wrap("What else the recorded context holds, and how much of the bill it covers:", width),
            "",
            *table(
                ("Agent / source", "Prompt tokens billed", "Recorded / billed",
                 *(["NeuralMind block"] if neuralmind else []), "Edits", "Other shell"),
                [(_label(key), f"{g['prompt_tokens_billed']:,}", pct(g["recorded_over_billed"]),
                  *([pct(g["shares_of_context"]["neuralmind"])] if neuralmind else []),
                  pct(g["shares_of_context"]["edit"]), pct(g["shares_of_context"]["shell"])) for key, g in groups],
                width,
            ),
            "",
            *wrap("What it means for your bill (sessions a person drove; the three bands were set before any "
                  "measuring: under 10%, 10% to 30%, 30% or more of what was sent):", width),
            "",
        ]
        prose = [*(reading_lines(self.groups, READINGS) or ["  no interactive sessions in the window"]),
                 *notes_lines(self.groups)]
        lines += [part for line in prose for part in wrap(line, width, "    ")]
        notes = (*COLUMN_NOTES[:4], *([REREAD_NOTE] if reread else []), *([NEURALMIND_NOTE] if neuralmind else []),
                 *COLUMN_NOTES[4:])
        lines += ["", *wrap(f"Tokenizer: {self._tokenizer_text()}", width), ""]
        lines += [part for line in notes for part in wrap(line, line_width, "  ")]
        if appendix:
            lines += appendix.rstrip("\n").split("\n")
        if hint:
            lines += ["", *wrap(next_step(self.groups, self.window.since is None, by, marked), width, "  ")]
        return printable_lines("\n".join(lines)) + "\n"  # the labels were made printable one by one above

    @property
    def unexplained(self) -> int:
        """Sessions whose records show more sent than was billed: their shares are unknown."""
        return sum(group.get("bill_short_sessions", 0) for group in self.groups.values())

    def _unexplained_note(self) -> str:
        count = self.unexplained
        if not count:
            return ""
        return (f"{count:,} session{'s' if count != 1 else ''}: the records cannot explain the bill; "
                f"{'their shares are' if count != 1 else 'its share is'} unknown (below, by agent).")

    def _tokenizer_text(self) -> str:
        """o200k_base and which counter counted the new texts, and why; an estimate with its reason."""
        if self.counter:
            return f"{self.tokenizer}, counted by {self.counter} ({self.counter_note})"
        note = self.tokenizer_note or self.counter_note
        return f"{self.tokenizer} ({note})" if note else self.tokenizer

    def _history_note(self) -> str:
        """The header's word on sessions counted from the history rather than a transcript."""
        note = f"; history: {self.remembered:,} session{'s' if self.remembered != 1 else ''} whose transcript is gone"
        if self.other_tokenizer:
            note += f" ({self.other_tokenizer:,} more counted with another tokenizer, left out)"
        return note if self.remembered or self.other_tokenizer else ""


def _label(key: str) -> str:
    return printable(key.replace("/", " / ", 1))


def session_summary(row: SessionRow) -> str:
    """A few lines on one session, for a person who asked about it."""
    started, last = parse_time(row.get("started_at")), parse_time(row.get("last_activity"))
    when = "No timestamps"
    if started and last:
        minutes = int((last - started).total_seconds() // 60)
        when = f"Started {started:%Y-%m-%d %H:%M} UTC, last activity {last:%Y-%m-%d %H:%M} UTC ({minutes:,} min)"
    context = row["context_tokens"]
    by_category = ", ".join(
        f"{category} {pct(share(tokens, context))}"
        for category, tokens in sorted(row["billed_tokens"].items(), key=lambda item: -item[1])
        if tokens
    )
    model = f", model {printable(row['model'])}" if row.get("model") else ""
    lines = [
        f"Session {printable(row['id'])} ({printable(row['agent'])} / {printable(row['source'])}{model})",
        when,
        f"API calls: {row['api_calls']:,}   Prompt tokens billed: {row['prompt_tokens_billed']:,}   "
        f"Recorded / billed: {pct(row['recorded_over_billed'])}",
        *(["Its records show more sent than it was billed for (the agent kept only part of the bill, or counted "
           "another way): its shares are unknown."] if row.get("bill_short") else []),
        *([f"These figures include {row_unrecorded(row)}"] if row.get("unrecorded_prompt_tokens") else []),
        *([f"Not in these figures: {review_note(row['unrecorded_reviews'])}"] if row.get("unrecorded_reviews")
          else []),
        *[f"Not in these figures: {note}" for note in unseen.notes(row.get(unseen.FIELD))],
        f"Exploration: {pct(row['exploration_share_of_context'])} of the recorded context, "
        f"{pct(row['exploration_share_of_prompt'])} of the billed prompt",
        f"Re-sent reads (files re-sent after a compaction, not in the exploration share): "
        f"{pct(row.get('reread_share_of_context'))} of the recorded context, "
        f"{pct(row.get('reread_share_of_prompt'))} of the billed prompt",
        f"Recorded context by category: {by_category or 'nothing recorded'}",
        f"Exploration read for the first time: {row['first_time_tokens']['exploration']:,} tokens "
        f"(results and arguments, counted once)",
        f"Compactions: {row['compactions']}; tool results cleared by the agent: {row['trimmed_messages']}",
        f"Tokenizer: {printable(row['tokenizer'])}",
    ]
    return printable_lines("\n".join(lines)) + "\n"
