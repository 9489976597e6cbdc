"""The accounting model: presence, the billing cap, overhead, compaction, trims, resumable state."""

from __future__ import annotations

import json

import pytest

from xshare.measure.ledger import FIRST_CALL, SPREAD, Ledger, session_row, share


def row(ledger: Ledger) -> dict:
    return session_row(ledger, session_id="s", agent="test", source="interactive", tokenizer="chars/4")


def test_a_message_is_present_from_the_call_after_it_appears():
    ledger = Ledger()
    ledger.add("exploration", 40)
    ledger.call(1000)
    ledger.add("edit", 10)
    ledger.call(1010)
    billed = ledger.billed_tokens()
    assert billed["exploration"] == 80  # carried by both calls
    assert billed["edit"] == 10  # only by the second
    assert ledger.first_time["exploration"] == 40


def test_overhead_is_fixed_from_the_first_call():
    ledger = Ledger(FIRST_CALL)
    ledger.add("conversation", 30)
    ledger.call(100)  # 70 the transcript does not hold: system prompt, tool schemas
    ledger.add("exploration", 20)
    ledger.call(150)
    billed = ledger.billed_tokens()
    assert billed["overhead"] == 140
    assert row(ledger)["context_tokens"] == 30 + 30 + 20 + 140
    assert row(ledger)["prompt_tokens_billed"] == 250


def test_the_billing_cap_drops_the_oldest_messages_for_good():
    ledger = Ledger()
    ledger.add("conversation", 10)
    ledger.add("edit", 4)
    ledger.call(24)  # overhead 10
    ledger.add("exploration", 50)
    ledger.add("shell", 5)
    ledger.call(68)  # 10 + 4 + 50 + 5 + overhead 10 = 79 > 68: the oldest message (conversation, 10) goes
    ledger.call(1000)  # a larger bill does not bring it back
    billed = ledger.billed_tokens()
    assert billed["conversation"] == 10
    assert billed["edit"] == 4 + 3 + 3  # the next gives way by what is left over (1 token), no more
    assert billed["exploration"] == 100
    assert billed["shell"] == 10
    assert row(ledger)["context_tokens"] == 24 + 68 + 68  # no call's context exceeds its bill


def test_a_bill_smaller_than_the_overhead_empties_the_context():
    ledger = Ledger()
    ledger.add("exploration", 10)
    ledger.call(100)
    ledger.call(50)
    assert ledger.billed_tokens()["exploration"] == 10


def test_compaction_removes_what_it_summarised_and_keeps_the_rest():
    ledger = Ledger(SPREAD)
    ledger.add("exploration", 30, compactable=True)
    ledger.add("edit", 7, compactable=False)  # Hermes: a row the compaction did not archive
    ledger.compact()
    ledger.call(1000)
    billed = ledger.billed_tokens()
    assert billed["exploration"] == 0
    assert billed["edit"] == 7
    assert ledger.compactions == 1


def test_the_next_compaction_replaces_the_previous_summary():
    # spec pass 3b: a summary is droppable, so summaries do not pile up
    ledger = Ledger()
    ledger.add("conversation", 100)
    ledger.call(100)
    ledger.compact()
    ledger.add("conversation", 20)  # summary 1
    ledger.call(100)
    ledger.compact()
    ledger.add("conversation", 25)  # summary 2
    ledger.call(100)
    assert ledger.billed_tokens()["conversation"] == 100 + 20 + 25


def test_a_trim_removes_only_the_named_messages():
    ledger = Ledger()
    ledger.add("exploration", 30, key="toolu_1")
    ledger.add("exploration", 40, key="toolu_2")
    ledger.call(1000)
    ledger.trim(["toolu_1", "not-there"])
    ledger.call(1000)
    assert ledger.billed_tokens()["exploration"] == 70 + 40
    assert ledger.trimmed == 1


def test_threads_have_their_own_context_and_overhead():
    ledger = Ledger()
    ledger.add("conversation", 10)
    ledger.call(100)  # main overhead 90
    ledger.add("exploration", 5, thread="side")
    ledger.call(25, thread="side")  # side overhead 20; the main context is untouched
    ledger.call(100)
    billed = ledger.billed_tokens()
    assert billed["conversation"] == 20
    assert billed["exploration"] == 5
    assert billed["overhead"] == 90 + 20 + 90
    ledger.reset_thread("side")
    ledger.call(25, thread="side")  # a new subagent starts from nothing (and a new overhead)
    assert ledger.billed_tokens()["exploration"] == 5


def test_spread_overhead_makes_the_context_equal_the_bill():
    ledger = Ledger(SPREAD)
    ledger.add("exploration", 300)
    ledger.call(400, cap=500)
    ledger.add("conversation", 100)
    ledger.call(600, cap=500)
    billed = ledger.billed_tokens()
    assert billed["exploration"] == 600
    assert billed["conversation"] == 100
    assert billed["overhead"] == 1000 - 700
    assert row(ledger)["recorded_over_billed"] == pytest.approx(1.0)


def test_spread_cap_is_the_session_mean_not_the_call():
    ledger = Ledger(SPREAD)
    ledger.add("exploration", 800)  # larger than the mean prompt per call: the cap trims it (pass 4b)
    ledger.call(100, cap=500)
    assert ledger.billed_tokens()["exploration"] == 0


def test_revise_call_replaces_a_streamed_snapshot():
    ledger = Ledger()
    ledger.call(100, usage={"input": 100, "output": 2}, model="m")
    ledger.revise_call("m", (100, {"input": 100, "output": 2}), (100, {"input": 100, "output": 300}))
    assert ledger.usage["output"] == 300
    assert ledger.calls == 1
    assert ledger.usage_by_model == {"m": {"0": {"input": 100, "cache_read": 0, "cache_write_5m": 0,
                                                 "cache_write_1h": 0, "output": 300, "calls": 1}}}


def test_a_revised_call_whose_prompt_grows_past_a_band_moves_to_that_band():
    ledger = Ledger()
    ledger.call(199_000, usage={"cache_read": 199_000, "output": 1}, model="m")
    ledger.revise_call("m", (199_000, {"cache_read": 199_000, "output": 1}),
                       (201_000, {"cache_read": 201_000, "output": 9}))
    row = session_row(ledger, session_id="s", agent="claude-code", source="interactive", tokenizer="o200k_base")
    bands = row["usage_by_model"]["m"]
    assert bands["100000"]["calls"] == 0 and bands["100000"]["cache_read"] == 0 and bands["100000"]["output"] == 0
    assert bands["200000"] == {"input": 0, "cache_read": 201_000, "cache_write_5m": 0, "cache_write_1h": 0,
                               "output": 9, "calls": 1}
    assert row["usage"]["cache_read"] == 201_000 and row["prompt_tokens_billed"] == 201_000


def test_shares_that_cannot_be_computed_are_unknown():
    assert share(5, 0) is None
    empty = row(Ledger())
    assert empty["exploration_share_of_context"] is None
    assert empty["exploration_share_of_prompt"] is None
    assert empty["recorded_over_billed"] is None


EVENTS = [
    ("seen_time", ("2026-11-02T10:00:00.000Z",), {}),
    ("add", ("conversation", 120), {}),
    ("add", ("injected", 40), {"key": "att-1"}),
    ("call", (9000,), {"usage": {"input": 3, "cache_write_5m": 8997}, "model": "m1", "time": "t1"}),
    ("add", ("exploration", 500), {"key": "toolu_a", "label": "Read: a.py"}),
    ("add", ("exploration", 900), {"key": "toolu_b", "label": "Grep: foo"}),
    ("call", (10400,), {"usage": {"cache_read": 9000, "cache_write_5m": 800}, "model": "m1"}),
    ("trim", (["toolu_a"],), {}),
    ("add", ("edit", 60), {}),
    ("add", ("exploration", 80), {"thread": "side"}),
    ("call", (4000,), {"thread": "side", "model": "m2"}),
    ("call", (9960,), {"model": "m1"}),
    ("compact", (), {}),
    ("add", ("conversation", 300), {}),
    ("call", (9400,), {"model": "m1"}),
    ("seen_time", ("2026-11-02T11:30:00.000Z",), {}),
]


def test_state_round_trip_between_every_event_gives_the_same_row():
    whole = Ledger()
    for name, args, kwargs in EVENTS:
        getattr(whole, name)(*args, **kwargs)

    resumed = Ledger()
    for name, args, kwargs in EVENTS:
        resumed = Ledger.from_state(json.loads(json.dumps(resumed.to_state())))
        getattr(resumed, name)(*args, **kwargs)

    assert row(resumed) == row(whole)
    assert row(whole)["models"] == ["m1", "m2"]
    assert row(whole)["started_at"] == "2026-11-02T10:00:00.000Z"
    assert row(whole)["last_activity"] == "2026-11-02T11:30:00.000Z"


def test_detail_mode_logs_calls_markers_and_what_each_result_rode_along():
    ledger = Ledger(detail=True)
    for name, args, kwargs in EVENTS:
        getattr(ledger, name)(*args, **kwargs)
    assert len(ledger.call_log) == ledger.calls == 5
    assert [marker["kind"] for marker in ledger.markers] == ["trimmed", "compaction"]
    carried = {entry[0]: entry for entry in ledger.still_carried()}
    assert carried["Read: a.py"][3:] == [1, 2]  # added before call 2, trimmed before call 3
    assert carried["Grep: foo"][3:] == [1, 4]  # dropped by the compaction before call 5
    # the per-call log adds up to the totals
    total = sum(sum(call["present"].values()) + call["overhead"] for call in ledger.call_log)
    assert total == row(ledger)["context_tokens"]
