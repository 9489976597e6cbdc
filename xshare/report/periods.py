"""The share over time: the report's groups per week or month, and the changes a user marked
(`xshare mark "added NeuralMind"`) with the sessions on either side of each.

Periods are taken from when a session started, in UTC (a session written with a -05:00 offset late in
the evening belongs to the next UTC day); weeks are ISO weeks (Monday to Sunday). A session with no
plausible start time (xshare.measure.timestamps) has no period.
"""

from __future__ import annotations

import errno
import sys
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

from xshare.measure.prices import PriceTable, row_cost
from xshare.measure.row import SessionRow
from xshare.measure.timestamps import session_time, to_utc
from xshare.printing import pct, printable, table, wrap
from xshare.report.render import ANECDOTE_BELOW, Tally, group_key, parse_time, reading
from xshare.report.session_dollars import PARTLY, PARTLY_NOTE, PeriodDollars
from xshare.state.store import atomic_write, dumps, loads, read_json, read_regular, state_dir


def period_of(moment: datetime, by: str) -> str:
    """'2026-11' for a month, '2026-W48' for an ISO week; an aware moment is taken in UTC."""
    moment = to_utc(moment) or moment  # only year 1 or 9999 with an offset has no UTC form: kept as given
    if by == "month":
        return f"{moment:%Y-%m}"
    year, week, _ = moment.isocalendar()
    return f"{year}-W{week:02d}"


def split_by_period(rows: list[SessionRow], by: str) -> dict[str, list[SessionRow]]:
    """The rows per period, oldest first; a row with no plausible start time has no period and is left out."""
    members: dict[str, list[SessionRow]] = defaultdict(list)
    for row in rows:
        started = session_time(row.get("started_at"))
        if started is not None:
            members[period_of(started, by)].append(row)
    return dict(sorted(members.items()))


class OverTime:
    """--by's periods and the marks' two sides, summed as rows come (never the rows themselves); with a
    price table, each period's groups' dollars too."""

    def __init__(self, by: str | None, marks: list[dict], prices: PriceTable | None = None) -> None:
        self.by, self.marks, self.prices = by, marks, prices
        self.periods: dict[str, Tally] = {}
        self.dollars: dict[tuple[str, str], PeriodDollars] = {}  # by period and group
        self.moments = [_moment(mark) for mark in marks]
        self.sides = [(Tally(), Tally()) for _ in marks]  # interactive sessions before, and at or after
        self.undated = 0  # sessions with no plausible start: in no period, on neither side of a mark

    def add(self, row: SessionRow) -> None:
        started = session_time(row.get("started_at"))
        if started is None:
            self.undated += 1
            return
        if self.by:
            period = period_of(started, self.by)
            tally = self.periods.get(period)
            if tally is None:
                tally = self.periods[period] = Tally()
            tally.add(row)
            if self.prices is not None:
                self.dollars.setdefault((period, group_key(row)), PeriodDollars()).add(row_cost(row, self.prices))
        if row.get("source") == "interactive":
            for moment, (before, after) in zip(self.moments, self.sides, strict=True):
                (before if started < moment else after).add(row)

    def ordered(self) -> list[tuple[str, Tally]]:
        return sorted(self.periods.items())


def over_time(rows: Iterable[SessionRow], by: str | None, marks: list[dict],
              prices: PriceTable | None = None) -> OverTime:
    summed = OverTime(by, marks, prices)
    for row in rows:
        summed.add(row)
    return summed


def sum_rows(rows: Iterable[SessionRow], by: str | None, marks: list[dict],
             prices: PriceTable | None = None) -> tuple[Tally, OverTime]:
    """The report's groups, and --by's periods (priced with `prices`) and the marks' sides, in one pass over
    the rows (each decoded in turn when they are packed): sums and a share per session are kept, never the rows."""
    tally, summed = Tally(), OverTime(by, marks, prices)
    for row in rows:
        tally.add(row)
        summed.add(row)
    return tally, summed


def periods_json(rows: Iterable[SessionRow] | OverTime, by: str) -> dict:
    summed = rows if isinstance(rows, OverTime) else over_time(rows, by, [])
    return {"by": by, "periods": {period: {"sessions": tally.sessions, "groups": _priced_groups(summed, period, tally)}
                                  for period, tally in summed.ordered()},
            "undated_sessions": summed.undated, "prices": summed.prices.to_json() if summed.prices else None}


def _priced_groups(summed: OverTime, period: str, tally: Tally) -> dict[str, dict]:
    """A period's groups, each with its dollars when the report is priced."""
    groups = tally.groups()
    if summed.prices is None:
        return groups
    return {key: {**group, "dollars": summed.dollars[period, key].to_json()} for key, group in groups.items()}


def _period_lines(period: str, groups: dict[str, dict], summed: OverTime) -> list[tuple[str, ...]]:
    return [(f"{period}  {key.replace('/', ' / ', 1)}", f"{g['sessions']:,}", pct(g["exploration_share_of_context"]),
             pct(g["median_session_share"]), pct(g["recorded_over_billed"]),
             *((summed.dollars[period, key].cell(),) if summed.prices else ())) for key, g in groups.items()]


def periods_text(rows: Iterable[SessionRow] | OverTime, by: str, width: int | None = None) -> str:
    """One line per period and group: its sessions, pooled and median share, calibration."""
    summed = rows if isinstance(rows, OverTime) else over_time(rows, by, [])
    lines = []
    for period, tally in summed.ordered():
        lines += _period_lines(period, tally.groups(), summed)
    header = ("Period  agent / source", "Sessions", "Exploration of context", "Median session",
              "Recorded / billed", *(("Dollars",) if summed.prices else ()))
    few = f"A period of fewer than {ANECDOTE_BELOW} sessions in a group is an anecdote, not a finding."
    undated = summed.undated
    without = [f"{undated:,} session{'s' if undated != 1 else ''} with no plausible start time: in no period."]
    return "\n".join([f"By {by} (when sessions started, UTC):", "", *table(header, lines, width), "", *wrap(few, width),
                      *(without if undated else []), *_dollars_words(summed, lines, width), ""])


def _dollars_words(summed: OverTime, lines: list[tuple[str, ...]], width: int | None) -> list[str]:
    """What the dollars column is priced with, and what a figure marked as partial leaves out."""
    if summed.prices is None:
        return []
    partly = any(line[-1].endswith(PARTLY) for line in lines)
    return wrap(f"Dollars: {summed.prices.describe()}; unknown where no session of the group was priced."
                + (f" {PARTLY_NOTE}." if partly else ""), width, "  ")


# --- marks ------------------------------------------------------------------------------------------


def marks_path() -> Path:
    return state_dir() / "history" / "marks.json"


def read_marks() -> list[dict]:
    """The marks stored, oldest first; a damaged file is read as no marks (and said so)."""
    data = read_json(marks_path())
    if data is None:
        return []
    marks = [mark for mark in data if _readable(mark)] if isinstance(data, list) else []
    if not isinstance(data, list) or len(marks) != len(data):
        print("xshare: some marks could not be read and are left out", file=sys.stderr)
    return sorted(marks, key=_moment)


def _moment(mark: dict) -> datetime:
    """A readable mark's time (only those are kept)."""
    moment = parse_time(mark["at"])
    assert moment is not None
    return moment


def _readable(mark: object) -> bool:
    return isinstance(mark, dict) and bool(parse_time(mark.get("at"))) and isinstance(mark.get("label"), str)


def _stored() -> list:
    """The marks file's entries as stored, those xshare cannot read (a date typo, a newer format) too: a
    change to the marks keeps them. A file that is no list is left as it is (an OSError saying so)."""
    path = marks_path()
    try:
        data = loads(read_regular(path))
    except FileNotFoundError:
        return []
    except ValueError:
        data = None
    if not isinstance(data, list):
        raise OSError(errno.EINVAL, f"{path} holds no list of marks xshare can read; left as it is (fix or "
                      "remove it)")
    return data


def add_mark(label: str, at: datetime) -> dict:
    mark = {"label": label, "at": at.isoformat()}
    atomic_write(marks_path(), dumps([*_stored(), mark]))
    return mark


def remove_mark(number: int) -> dict | None:
    """Remove the mark `xshare mark` lists as `number` (1 is the oldest); None when there is no such mark.
    The marks it cannot read stay in the file."""
    marks = read_marks()
    if not 1 <= number <= len(marks):
        return None
    removed = marks[number - 1]
    stored = _stored()
    stored.remove(removed)  # an equal copy, if any, is the same mark
    atomic_write(marks_path(), dumps(stored))
    return removed


def mark_line(mark: dict) -> str:
    """A mark as every command prints it: its moment to the minute, in UTC, then its label."""
    return printable(f"{parse_time(mark['at']):%Y-%m-%d %H:%M} UTC  {mark['label']}")


def _side(tally: Tally) -> dict:
    """One side of a mark: the interactive groups' sessions, shares and reading."""
    return {key: {"sessions": g["sessions"], "exploration_share_of_context": g["exploration_share_of_context"],
                  "median_session_share": g["median_session_share"], "recorded_over_billed": g["recorded_over_billed"],
                  "reading": g["reading"]} for key, g in tally.groups().items()}


def marks_json(rows: Iterable[SessionRow] | OverTime, marks: list[dict]) -> list[dict]:
    summed = rows if isinstance(rows, OverTime) else over_time(rows, None, marks)
    return [{**mark, "before": _side(before), "after": _side(after)}
            for mark, (before, after) in zip(marks, summed.sides, strict=True)]


def marks_text(rows: Iterable[SessionRow] | OverTime, marks: list[dict]) -> str:
    """Before and after each mark, with the session counts each side rests on."""
    if not marks:
        return ""
    summed = rows if isinstance(rows, OverTime) else over_time(rows, None, marks)
    lines = ["Before and after the changes you marked (interactive sessions):", ""]
    for mark, (before, after) in zip(marks, summed.sides, strict=True):
        at = parse_time(mark["at"])
        lines.append(f"  {printable(mark['label'])} ({at:%Y-%m-%d %H:%M} UTC):")  # as mark_line has it
        sides = {"before": _side(before), "after": _side(after)}
        for key in sorted(set(sides["before"]) | set(sides["after"])):
            for name, side in sides.items():
                group = side.get(key)
                if group is None:
                    lines.append(f"    {key} {name}: no sessions")
                    continue
                lines.append(f"    {key} {name}: {group['sessions']:,} session{'s' if group['sessions'] != 1 else ''}, "
                             f"exploration {pct(group['exploration_share_of_context'])} of context, median "
                             f"{pct(group['median_session_share'])}; {_short_reading(group)}")
        if not sides["before"] and not sides["after"]:
            lines.append("    no interactive sessions on either side in the window")
    lines.append("  A difference between two sides that rest on few sessions is not a finding about the change.")
    return "\n".join(lines) + "\n"


def _short_reading(group: dict) -> str:
    """The reading's band, and the anecdote caution when the side rests on few sessions."""
    text = reading(group["exploration_share_of_context"], group["median_session_share"], group["sessions"])
    band = text.split(";")[0].split(" (")[0]
    caution = "an anecdote, not a finding" if group["sessions"] < ANECDOTE_BELOW else ""
    return f"{band}{'; ' + caution if caution else ''}"
