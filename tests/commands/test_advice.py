"""`xshare advice` and the index's habits: each habit's figures worked out by hand on sessions written here, the
unknowns said (never 0), the side cache, the text and JSON, and the corpus when it is there."""

from __future__ import annotations

import json
import re
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from agent_fixtures import codex_session

from tests.commands.test_cli import run
from xshare.html import habit_store
from xshare.html.analysis import SessionData
from xshare.html.habits import NO_CACHE, NO_PER_CALL, costliest_habit, pool, session_habits
from xshare.html.index_page import render_index
from xshare.measure import tokens

START = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus"


def _call(read: int, write: int, minute: float, model: str = "m") -> dict:
    usage = {"input": 10, "cache_read": read, "cache_write_5m": write, "cache_write_1h": 0, "output": 100}
    prompt = 10 + read + write
    return {"prompt": prompt, "present": {"conversation": 1_000}, "overhead": 2_000, "usage": usage, "model": model,
            "time": (START + timedelta(minutes=minute)).strftime("%Y-%m-%dT%H:%M:%S.000Z"), "thread": "main"}


def _session(source: str = "interactive", **options) -> SessionData:
    calls = [
        _call(0, 20_000, 0),
        _call(20_000, 1_000, 1),
        _call(9_000, 14_000, 2),  # a prompt: turn boundary, 12,000 re-written
        _call(0, 24_000, 30),  # 28 minutes idle: 23,000 re-written
        _call(24_000, 500, 31, model="n"),  # model switch, but no drop: not a rebuild
        _call(24_500, 30_000, 32),  # grew: no rebuild
        _call(5_000, 4_000, 33),  # a compaction: 54,510 -> 9,010, 4,000 written
        _call(9_000, 500, 34),  # one call followed: not paid back
    ]
    usage = {kind: sum(call["usage"][kind] for call in calls) for kind in calls[0]["usage"]}
    markers = [{"kind": "prompt", "value": None, "at": 2}, {"kind": "compaction", "value": None, "at": 6}]
    carried = [["Read: /big.py", "exploration", 8_000, 1, 8], ["Grep: x", "exploration", 300, 1, 8],
               ["Bash: make", "shell", 9_000, 0, 8]]
    row = {"id": f"s-{source}", "agent": "claude-code", "source": source, "usage": usage}
    return SessionData(row, calls, markers, carried, **options)


def test_each_habit_is_priced_by_the_page_rules():
    summary = session_habits(_session())
    habits = summary["habits"]
    assert habits["turn boundary"] == [1, pytest.approx(12_000 * 1.15), pytest.approx(12_000 * 1.15)]
    assert habits["idle"] == [1, pytest.approx(23_000 * 1.15), pytest.approx(23_000 * 1.15)]
    assert habits["model switch"] == [0, 0, 0]
    # the compaction: 54,510 before, 9,010 after, 4,000 written (5,000 weighted); saving 4,550 a call; 1 followed
    assert habits["compaction"] == [1, pytest.approx(5_000 - 4_550), pytest.approx(5_000 - 4_550)]
    fresh = (9_010 - 2_000) * (1.25 + 0.1 * 1)  # a fresh session writes and carries only the 2,000 overhead
    assert habits["fresh session"] == [1, pytest.approx(fresh), pytest.approx(fresh)]
    # exploration: 8,000 x 7 calls + 300 x 7 carried, at the cache-read weight; capped at 1,000, then 500
    assert habits["exploration"][:2] == [2, pytest.approx(0.1 * (56_000 + 2_100))]
    assert habits["exploration"][2] == pytest.approx(0.1 * (56_000 - (1_000 + 500 * 6)))
    # a subagent: 8,000 x 1.25 + 500 x 7 x 0.1 = 10,350 against 5,600 carried: the main thread was cheaper
    assert habits["subagent"] == [0, 0, 0]
    assert summary["top"][0] == ["Read", 8_000, 7]  # the tool and size, never the path


def test_a_subagent_pays_where_a_big_read_rides_along_for_long():
    data = _session()
    data.carried = [["Read: /huge.py", "exploration", 30_000, 0, 60]]
    events, cost, saving = session_habits(data)["habits"]["subagent"]
    assert (events, cost) == (1, pytest.approx(0.1 * 30_000 * 60))
    assert saving == pytest.approx(0.1 * 30_000 * 60 - (1.25 * 30_000 + 0.1 * 500 * 60))
    assert "subagent" not in session_habits(_session("subagent"))["habits"]  # its reading is already one


def test_what_records_cannot_show_is_unknown_never_zero():
    hermes = session_habits(_session(per_call_usage=False, overhead_spread=True, turn_markers=False))
    assert hermes["habits"]["turn boundary"] == {"unknown": NO_PER_CALL}
    assert hermes["habits"]["compaction"] == {"unknown": NO_PER_CALL}
    uncached = _session()
    for call in uncached.calls:
        call["usage"].update(cache_read=0, cache_write_5m=0)
    uncached.row["usage"].update(cache_read=0, cache_write_5m=0)
    summary = session_habits(uncached)
    assert summary["habits"]["idle"] == {"unknown": NO_CACHE}
    assert summary["habits"]["exploration"][1] == pytest.approx(1.0 * (56_000 + 2_100))  # fresh input weight
    pooled = pool([summary, hermes])
    idle = next(line for line in pooled["cost_nothing"] if line["habit"] == "idle")
    assert idle["share_of_weighted_bill"] is None and idle["sessions_measured"] == 0
    assert idle["sessions_unknown"] == {NO_CACHE: {"claude-code": 1}, NO_PER_CALL: {"claude-code": 1}}


def test_pooled_habits_are_sorted_by_cost_with_shares_of_the_weighted_bill():
    one, two = session_habits(_session()), session_habits(_session())
    pooled = pool([one, two])
    assert pooled["weighted_bill"] == pytest.approx(2 * one["weight"], abs=0.1)
    costs = [line["cost_weight"] for line in pooled["habits"]]
    assert costs == sorted(costs, reverse=True) and pooled["habits"][0]["habit"] == "idle"
    idle = pooled["habits"][0]
    assert idle["share_of_weighted_bill"] == pytest.approx(2 * 23_000 * 1.15 / (2 * one["weight"]))
    assert all(line["assumption"] for line in pooled["habits"] + pooled["cost_nothing"])
    assert [line["habit"] for line in pooled["cost_nothing"]] == ["long break", "model switch", "subagent"]
    assert costliest_habit(one) == ("idle", pytest.approx(23_000 * 1.15))


def test_the_index_has_the_habits_table_and_each_session_s_costliest_habit():
    from xshare.html.analysis import Linked

    summary = session_habits(_session())
    row = {"id": "s-interactive", "agent": "claude-code", "source": "interactive", "api_calls": 8,
           "prompt_tokens_billed": 1, "exploration_share_of_context": None, "exploration_share_of_prompt": None}
    page = render_index([Linked(row, "s.html")], tokens.choose(estimate=True, remember=False), "", [summary])
    assert "<h2>Habits" in page and "Costliest habit" in page
    assert re.search(r'<a href="s\.html#cache"><span class="nowrap">idle</span> \(26,450\)</a>', page)


def test_habits_in_dollars_at_the_session_model_s_price_of_fresh_input():
    priced, unknown = session_habits(_session()), session_habits(_session())
    priced["model"], unknown["model"] = "claude-sonnet-4-5", "a-model-no-table-knows"
    rate = 3 / 1e6  # dollars per fresh input token of the priced model, as the test's own table says
    pooled = pool([priced, unknown], lambda summary: rate if summary["model"] == "claude-sonnet-4-5" else None)
    idle = next(line for line in pooled["habits"] if line["habit"] == "idle")
    assert idle["cost_dollars"] == pytest.approx(23_000 * 1.15 * rate, abs=0.01)  # the priced session only
    assert idle["sessions_unpriced"] == 1 and idle["cost_weight"] == pytest.approx(2 * 23_000 * 1.15, abs=0.1)
    assert "cost_dollars" not in pool([priced])["habits"][0]  # no prices asked for: no dollars at all


def test_advice_dollars_say_their_date_and_turn_off(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("XSHARE_HOME", str(tmp_path / "home"))
    code, out, _ = run(capsys, "advice", "--demo", "--json")
    pooled = json.loads(out)
    assert code == 0 and pooled["dollars"]["prices"]["date"] and "fresh input" in pooled["dollars"]["assumption"]
    assert all(line["cost_dollars"] >= 0 and ("sessions_unpriced" in line or "events_unpriced" in line)
               for line in pooled["habits"])
    code, out, _ = run(capsys, "advice", "--demo")
    assert "at list price" in out and "list prices of" in out
    code, out, _ = run(capsys, "advice", "--demo", "--no-dollars")
    assert code == 0 and "$" not in out
    bad = tmp_path / "prices.json"
    bad.write_text("{not json")
    code, out, err = run(capsys, "advice", "--demo", "--prices", str(bad))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_advice_on_the_demo_reads_in_plain_words(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("XSHARE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLUMNS", "90")
    code, out, err = run(capsys, "advice", "--demo")
    assert code == 0 and "Traceback" not in err
    assert "weighted bill" in out and "would have saved" in out and "assuming" in out
    assert all(len(line) <= 90 for line in out.splitlines())
    assert "/" not in re.sub(r"\(5 min\)|\(1 h\)|/clear", "", out.split("The costliest")[0])  # no path above
    code, out, _ = run(capsys, "advice", "--demo", "--json")
    pooled = json.loads(out)
    assert code == 0 and pooled["sessions"] >= 6 and pooled["habits"]
    assert all({"cost_weight", "saving_weight", "assumption", "share_of_weighted_bill"} <= set(line)
               for line in pooled["habits"])


def test_the_side_cache_reads_only_what_changed(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("XSHARE_HOME", str(tmp_path / "home"))
    home = tmp_path / "codex"
    codex_session(home)
    reads = []
    real = habit_store.session_habits
    monkeypatch.setattr(habit_store, "session_habits", lambda data: reads.append(1) or real(data))
    first = run(capsys, "advice", "--all", "--json", "--codex-home", str(home), "--estimate")
    second = run(capsys, "advice", "--all", "--json", "--codex-home", str(home), "--estimate")
    assert first[0] == 0 and first[1] == second[1] and len(reads) == 1
    assert "Traceback" not in first[2] + second[2]


def test_a_hermes_database_says_unknown_and_a_broken_file_is_skipped(capsys, monkeypatch, tmp_path):
    from hermes_fixtures import build_standard

    monkeypatch.setenv("XSHARE_HOME", str(tmp_path / "home"))
    db = build_standard(tmp_path / "state.db")
    home = tmp_path / "codex"
    codex_session(home)
    broken = next(home.rglob("*.jsonl")).with_name("rollout-2026-03-02T09-00-00-broken.jsonl")
    broken.write_bytes(b'{"type": "session_meta", "payload": \x00\xff not json\n')
    code, out, err = run(capsys, "advice", "--all", "--json", "--hermes-db", str(db), "--codex-home", str(home),
                          "--estimate")
    assert code == 0 and "Traceback" not in err
    pooled = json.loads(out)
    turn = next(line for line in pooled["habits"] + pooled["cost_nothing"] if line["habit"] == "turn boundary")
    assert "hermes" in turn["sessions_unknown"][NO_PER_CALL]
    sqlite3.connect(db).close()


@pytest.mark.skipif(not (CORPUS / "hermes").is_dir(), reason="the shared corpus is not here")
def test_on_the_corpus_hermes_is_unknown_and_the_others_are_measured(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("XSHARE_HOME", str(tmp_path / "home"))
    hermes = sorted((CORPUS / "hermes").glob("*/state.db"))[:2]
    codex = sorted((CORPUS / "codex").iterdir())[:2]
    argv = ["advice", "--all", "--json", "--estimate"]
    for path in hermes:
        argv += ["--hermes-db", str(path)]
    for path in codex:
        argv += ["--codex-home", str(path)]
    code, out, err = run(capsys, *argv)
    assert code == 0 and "Traceback" not in err
    pooled = json.loads(out)
    lines = {line["habit"]: line for line in pooled["habits"] + pooled["cost_nothing"]}
    assert lines["compaction"]["sessions_unknown"][NO_PER_CALL].get("hermes")
    assert lines["exploration"]["sessions_measured"] == pooled["sessions"]
