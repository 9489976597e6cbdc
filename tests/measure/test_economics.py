"""The /compact nudge's rule (economics.compaction_nudge), which the HTML page and the status line share."""

from __future__ import annotations

import pytest

from xshare.measure import economics


def test_the_nudge_shows_only_when_a_compaction_pays_back_within_the_calls_likely_left():
    # 120k now, 20k after: 100k fewer per call saves 10k weighted; writing 20k at 1.25 costs 25k: 3 calls
    shown = economics.compaction_nudge(120_000, 20_000, one_hour=False, calls_so_far=3)
    assert shown == {"fewer": 100_000, "saving": pytest.approx(10_000), "cost": 25_000, "break_even": 3,
                     "remaining": 3}
    assert economics.compaction_nudge(120_000, 20_000, one_hour=False, calls_so_far=2) is None
    # the 1-hour write rate (2.0) makes the same compaction pay back later
    assert economics.compaction_nudge(120_000, 20_000, one_hour=True, calls_so_far=3) is None
    assert economics.compaction_nudge(120_000, 20_000, one_hour=True, calls_so_far=4)["break_even"] == 4


@pytest.mark.parametrize(("before", "after"), [(20_000, 20_000), (20_000, 25_000), (0, 0)])
def test_no_nudge_when_a_compaction_would_take_nothing_off(before: int, after: int):
    assert economics.compaction_nudge(before, after, one_hour=False, calls_so_far=10_000) is None


def test_a_nudge_needs_a_session_that_has_made_calls():
    assert economics.compaction_nudge(500_000, 1_000, one_hour=False, calls_so_far=0) is None
    assert economics.compaction_nudge(500_000, 1_000, one_hour=False, calls_so_far=-5) is None


def test_the_watch_prices_the_nudge_from_the_latest_compaction():
    """Before a compaction the floor (overhead and conversation carried) stands for what one leaves;
    after one, the first call after it measured that."""
    watch = economics.Watch()
    usage = {"input": 10, "cache_read": 0, "cache_write_5m": 90_000}
    watch.call(90_010, usage, carried_conversation=9_000)
    assert watch.nudge() is None  # saving 8,101 a call against a write of 11,250: 2 calls, 1 made
    watch.call(90_010, {"input": 10, "cache_read": 90_000}, carried_conversation=9_000)
    floor = watch.nudge()
    assert floor is not None and floor["basis"] == "floor" and floor["fewer"] == 81_010
    watch.mark("compaction")
    watch.call(30_000, {"input": 10, "cache_read": 0, "cache_write_5m": 29_990}, carried_conversation=9_000)
    assert watch.nudge() is None  # one call since the compaction: too soon to pay back
    for _ in range(7):  # 50,000 fewer saves 5,000 a call; writing 30,000 costs 37,500: 8 calls
        watch.call(80_000, {"input": 10, "cache_read": 79_990}, carried_conversation=9_000)
    measured = watch.nudge()
    assert measured["basis"] == "measured" and measured["fewer"] == 50_000
    again = economics.Watch(watch.to_state())  # the hook saves it between calls
    assert again.nudge() == measured
