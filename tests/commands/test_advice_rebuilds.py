"""`xshare advice`'s rebuild lines (issue 30): a rebuild measured where the agent records no cache write, one
cause each and every rebuild counted once, a long break's fresh-session figure, each thread's own events,
each rebuild priced at the model that re-wrote the cache, weighted tokens named as such with the sessions
behind a line. Every session is invented here; the figures are worked out by hand."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from agent_fixtures import codex_line, codex_token_count, codex_usage

from tests.commands.test_cli import run
from tests.conftest import CORPUS, needs_corpus
from xshare.commands.advice import advice_text
from xshare.html.analysis import SessionData, find_rebuilds
from xshare.html.habits import NO_PROMPTS, pool, session_habits
from xshare.measure import prices

START = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
OPUS, HAIKU = "claude-opus-4-1", "claude-haiku-4-5"


def _call(read: int, write_1h: int, minute: float, model: str = OPUS, thread: str = "main") -> dict:
    usage = {"input": 10, "cache_read": read, "cache_write_5m": 0, "cache_write_1h": write_1h, "output": 50}
    return {"prompt": 10 + read + write_1h, "present": {"conversation": 500}, "overhead": 3_000, "usage": usage,
            "model": model, "thread": thread,
            "time": (START + timedelta(minutes=minute)).strftime("%Y-%m-%dT%H:%M:%S.000Z")}


def _session(session_id: str = "s-one") -> SessionData:
    """A session on the 1-hour cache with one rebuild of each cause, and an inline subagent thread."""
    calls = [
        _call(0, 20_000, 0),  # 0: cold start
        _call(5_000, 16_000, 1),  # 1: a prompt, a minute on: turn boundary, 15,000 re-written
        _call(6_000, 16_000, 31),  # 2: 30 minutes on (and a prompt): idle, 15,000 re-written
        _call(2_000, 21_000, 220),  # 3: over 3 hours on: a long break, 20,000 re-written
        _call(0, 24_000, 221, model=HAIKU),  # 4: a model switch, 23,000 re-written
        _call(0, 8_000, 221.5, model=HAIKU, thread="side"),  # 5: an inline subagent's cold start
        _call(4_000, 5_000, 222, model=HAIKU),  # 6: after /compact: 5,000 re-written
        _call(0, 9_500, 222.2, model=HAIKU, thread="side"),  # 7: the subagent's own rebuild (no cause): 8,000
        _call(1_000, 9_000, 223, model=HAIKU),  # 8: nothing explains it: 8,000 re-written
    ]
    usage = {kind: sum(call["usage"][kind] for call in calls) for kind in calls[0]["usage"]}
    markers = [{"kind": "prompt", "value": None, "at": 1}, {"kind": "prompt", "value": None, "at": 2},
               {"kind": "compaction", "value": None, "at": 6}]
    return SessionData({"id": session_id, "agent": "claude-code", "source": "interactive", "usage": usage,
                        "model": OPUS}, calls, markers, [])


def test_each_rebuild_has_one_cause_and_the_lines_count_every_rebuild_once():
    found = {r.call: r.cause for r in find_rebuilds(_session())}
    # the 30-minute gap is idle on the 1-hour cache; the subagent's rebuild is not blamed on main's /compact
    assert found == {1: "turn boundary", 2: "idle", 3: "idle", 4: "model switch", 6: "compaction", 7: "other",
                     8: "other"}
    summary = session_habits(_session())
    assert summary["rebuilds"] == {"turn boundary": 1, "idle": 1, "long break": 1, "model switch": 1,
                                   "compaction": 1, "other": 2}
    pooled = pool([summary, session_habits(_session("s-two"))])
    lines = {line["habit"]: line for line in pooled["habits"] + pooled["cost_nothing"]}
    in_lines = sum(lines[name]["events"] for name in ("turn boundary", "idle", "long break", "model switch"))
    by_cause = pooled["rebuilds"]["by_cause"]
    assert pooled["rebuilds"]["total"] == 14 == in_lines + by_cause["compaction"] + by_cause["other"]
    assert lines["idle"]["cost_weight"] == pytest.approx(2 * 15_000 * 1.9)  # 1-hour writes: 2.0 - 0.1
    assert "first cause that applies" in pooled["rebuilds"]["rule"]


def test_a_long_break_says_what_a_fresh_session_would_have_cost_instead():
    line = next(line for line in pool([session_habits(_session())])["habits"] if line["habit"] == "long break")
    # 20,000 re-written at the 1-hour rate (2.0) against a fresh session writing its 3,000 overhead
    assert (line["events"], line["cost_weight"]) == (1, pytest.approx(20_000 * 1.9))
    assert (line["rewrite_weight"], line["fresh_weight"]) == (pytest.approx(40_000), pytest.approx(6_000))
    assert line["saving_weight"] == pytest.approx(34_000) and "/clear" in line["change"]


def test_a_rebuild_is_priced_at_the_model_that_rewrote_the_cache_and_an_unknown_model_is_unpriced():
    table = prices.shipped()
    switched = session_habits(_session())  # the session's model is Opus; the switch's rebuild ran on Haiku

    def price(model, usage):
        return prices.price_usage(model, usage, table)

    unknown = session_habits(_session("s-unknown"))
    unknown["money"] = json.loads(json.dumps(unknown["money"]).replace(HAIKU, "a-model-no-table-knows"))
    pooled = pool([switched, unknown], lambda summary: 1e-6, price)
    line = next(line for line in pooled["habits"] if line["habit"] == "model switch")
    haiku = table.rates(HAIKU)
    expected = 23_000 * (haiku["cache_write_1h"] - haiku["cache_read"]) / 1e6  # $0.04, not Opus's $0.66
    assert line["cost_dollars"] == pytest.approx(expected, abs=0.005) and line["events_unpriced"] == 1
    assert line["events"] == 2 and line["cost_weight"] == pytest.approx(2 * 23_000 * 1.9)


def test_the_text_says_weighted_tokens_and_names_the_sessions_behind_each_line():
    pooled = pool([session_habits(_session("s-costly")), session_habits(_session("s-other"))])
    pooled["window"] = "All sessions"
    text = advice_text(pooled, 100)
    assert "weighted tokens" in text and "Cache rebuilds: 14" in text and "first cause that applies" in text
    idle = next(line for line in pooled["habits"] if line["habit"] == "idle")
    assert idle["sessions_behind"] == ["s-costly", "s-other"] and "s-costly, s-other" in text.replace("\n   ", " ")


def _codex(home, session_id: str, steps: list[tuple[int, int, int]]) -> None:
    """A Codex CLI rollout with a call per step (second, prompt, cached): no cache write is ever recorded."""
    rows = [codex_line("session_meta", {"id": session_id, "timestamp": "2026-03-02T10:00:00.000Z", "cwd": "/w",
                                        "originator": "codex_cli_rs", "cli_version": "0.63.0", "source": "cli"}, 0),
            codex_line("response_item", {"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "Why does main() exit early?"}]}, 1),
            codex_line("turn_context", {"cwd": "/w", "model": "gpt-5-codex"}, 2)]
    total = codex_usage(0, 0, 0)
    for second, prompt, cached in steps:
        last = codex_usage(prompt, cached, 40)
        total = {key: total[key] + last[key] for key in total}
        rows += [codex_line("response_item", {"type": "message", "role": "assistant", "content": [
                     {"type": "output_text", "text": f"step at {second}"}]}, second - 1),
                 codex_token_count(total, last, second)]
    path = home / "sessions/2026/03/02" / f"rollout-2026-03-02T10-00-00-{session_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def test_codex_rebuilds_are_measured_from_the_drop_in_cached_tokens(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("XSHARE_HOME", str(tmp_path / "home"))
    home = tmp_path / "codex"
    # a call 10 minutes after the last: 3,072 of the 21,000 cached came back, 17,928 re-sent as fresh input
    _codex(home, "0190aaaa-1111-7000-8000-0000000000a1", [(10, 20_000, 0), (40, 21_000, 19_968),
                                                           (640, 22_000, 3_072)])
    _codex(home, "0190aaaa-1111-7000-8000-0000000000a2", [])  # no call at all: it cost nothing
    code, out, err = run(capsys, "advice", "--all", "--json", "--codex-home", str(home), "--estimate")
    assert code == 0 and "Traceback" not in err
    pooled = json.loads(out)
    lines = {line["habit"]: line for line in pooled["habits"] + pooled["cost_nothing"]}
    assert (lines["idle"]["events"], lines["idle"]["cost_weight"]) == (1, pytest.approx(17_928 * 0.9, abs=0.1))
    assert lines["idle"]["sessions_unknown"] == {} and lines["idle"]["sessions_measured"] == 2
    assert lines["turn boundary"]["sessions_unknown"] == {NO_PROMPTS: {"codex": 1}}  # no prompt marked
    assert lines["idle"]["cost_dollars"] > 0 and lines["idle"]["events_unpriced"] == 0
    code, text, _ = run(capsys, "advice", "--all", "--codex-home", str(home), "--estimate")
    nothing = text.split("Cost nothing in the window")[-1].split("\n")[0]
    assert "idle" not in nothing and "turn boundary" not in nothing  # measured, or unknown: never a zero
    assert "turn boundary (unknown for 1 session(s), nothing where measured)" in text


@needs_corpus
def test_on_the_corpus_codex_and_gemini_rebuilds_are_measured_never_zero(capsys, monkeypatch, tmp_path):
    """Issue 30's figures: in the Codex sample 24 calls after a gap over 5 minutes lost 1,024 or more cached
    tokens; Gemini sessions that switched models rebuilt; every rebuild is counted once."""
    monkeypatch.setenv("XSHARE_HOME", str(tmp_path / "home"))
    lines = {}
    for agent, flag in (("codex", "--codex-home"), ("gemini", "--gemini-home")):
        argv = ["advice", "--all", "--json", "--estimate"]
        for home in sorted((CORPUS / agent).iterdir()):
            argv += [flag, str(home)]
        code, out, err = run(capsys, *argv)
        assert code == 0 and "Traceback" not in err
        pooled = json.loads(out)
        lines[agent] = {line["habit"]: line for line in pooled["habits"] + pooled["cost_nothing"]}
        counted = sum(lines[agent][name]["events"] for name in ("turn boundary", "idle", "long break", "model switch"))
        by_cause = pooled["rebuilds"]["by_cause"]
        assert counted + by_cause.get("compaction", 0) + by_cause.get("other", 0) == pooled["rebuilds"]["total"]
    assert lines["codex"]["idle"]["events"] + lines["codex"]["long break"]["events"] == 24
    assert lines["codex"]["turn boundary"]["sessions_unknown"] == {NO_PROMPTS: {"codex": 36}}
    assert lines["gemini"]["model switch"]["events"] > 0 and lines["gemini"]["model switch"]["cost_weight"] > 0
