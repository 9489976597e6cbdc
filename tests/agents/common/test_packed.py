"""Packed rows placed in a window by the times kept beside them (measure/row.py PLACED_BY) land exactly where
their decoded rows land, in every window, whatever their times hold; rows whose times are not all kept are
decoded."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from xshare.agents.common.packed import PackedRows, in_window
from xshare.measure.row import PLACED_BY
from xshare.report.render import CountingPlace, Window
from xshare.state.store import dumps

NOW = datetime(2026, 11, 29, 18, 0, tzinfo=timezone.utc)
TIMES = [
    {"started_at": "2026-11-20T10:00:00.000Z", "last_activity": "2026-11-20T11:00:00.000Z"},
    {"started_at": "2026-11-29T09:00:00.000Z", "last_activity": "2026-11-29T10:00:00.000Z"},
    {"started_at": "2026-11-29T17:30:00.000Z", "last_activity": "2026-11-29T18:30:00.000Z"},  # active at the end
    {"started_at": "2026-11-29T12:00:00+05:00", "ended_at": "2026-11-29T19:00:00Z"},  # an offset; no last
    {"started_at": "2026-09-01T00:00:00Z", "last_activity": None},
    {"started_at": "2019-01-01T00:00:00Z", "last_activity": "2019-01-01T01:00:00Z"},  # before any record
    {"started_at": "2099-01-01T00:00:00Z"},  # after now
    {"started_at": None, "last_activity": "2026-11-20T11:00:00.000Z"},
    {"started_at": "yesterday", "last_activity": 17},
    {"last_activity": "2026-11-28T11:00:00.000Z"},  # no start at all
    {"started_at": 1764000000, "ended_at": "2026-11-25T10:00:00Z"},
]
WINDOWS = [Window.build(NOW), Window.build(NOW, since_days=1), Window(None, NOW, "all sessions"),
           Window.build(NOW, since="2026-11-01", until="2026-11-25"), Window.build(NOW, lag_hours=1)]


def packed(with_places: bool) -> PackedRows:
    rows = [{"id": f"s{index}", "agent": "claude-code", "source": "interactive", "api_calls": 1, **times}
            for index, times in enumerate(TIMES)]
    places = [[row.get(key) for key in PLACED_BY] for row in rows] if with_places else None
    return PackedRows((dumps(row) for row in rows), places)


@pytest.mark.parametrize("window", WINDOWS, ids=lambda window: window.describe())
def test_rows_placed_by_their_kept_times_land_where_their_rows_do(window: Window):
    placed = []
    for with_places in (True, False):
        counting = CountingPlace(window)
        inside, deferred = in_window(packed(with_places), counting)
        placed.append((inside.items, deferred, counting.undated))
    assert placed[0] == placed[1]
    assert 0 < len(placed[0][0]) < len(TIMES)  # each window keeps some and leaves some out


def test_rows_whose_times_are_not_all_kept_are_decoded():
    rows = packed(True)
    rows.items.append(dumps({"id": "late", "agent": "claude-code", "source": "interactive",
                             "started_at": "2099-01-01T00:00:00Z"}))  # out of every window: its time is read
    inside, _ = in_window(rows, CountingPlace(Window(None, NOW, "all sessions")))
    assert len(inside) == len(TIMES) - 1  # the two from 2099 out, and no row placed by another's times
    rows.append({"id": "added", "agent": "claude-code", "source": "interactive", "started_at": None})
    known = rows.known_places()  # the rows' times no longer line up with them: none is trusted, the new one's is
    assert known[:-1] == [None] * (len(TIMES) + 1) and known[-1] == [None, None, None]


def test_rows_joined_keep_their_bytes_and_their_times_where_known():
    """Another agent's packed rows join as they are packed (not decoded and packed again: a row written with
    spaces keeps them), rows added as dicts bring their times, and the window places the whole alike."""
    import json

    kept = packed(True)  # as the outcome of measuring Claude Code gives them
    spaced = json.dumps({"id": "other", "agent": "codex", "source": "interactive",
                         "started_at": "2026-11-21T10:00:00Z"}).encode()
    other = PackedRows([spaced])  # another agent's, no times kept
    joined = PackedRows()
    joined += kept
    joined += other
    joined += [{"id": "dict", "agent": "hermes", "source": "cli", "started_at": "2026-11-22T10:00:00Z"}]
    joined.append({"id": "last", "agent": "hermes", "source": "cli", "started_at": None})
    assert joined.items[len(TIMES)] == spaced and len(joined) == len(TIMES) + 3
    known = joined.known_places()
    assert known[:len(TIMES)] == kept.places and known[len(TIMES)] is None
    assert known[-2:] == [["2026-11-22T10:00:00Z", None, None], [None, None, None]]
    decoded = PackedRows(joined.items)
    for window in WINDOWS:
        placed = []
        for rows in (joined, decoded):
            counting = CountingPlace(window)
            inside, deferred = in_window(rows, counting)
            placed.append((inside.items, deferred, counting.undated))
        assert placed[0] == placed[1]
