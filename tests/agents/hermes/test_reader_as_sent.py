"""Hermes counted as it is sent (issue 19): tool-call arguments as Hermes re-serialises them, contents
stripped, no per-call cap in a growing session, and the background reviews Hermes records nowhere.

Token counts here are characters (count=len), so every expected figure is a length written in the test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agent_fixtures import Counted
from hermes_fixtures import SUMMARY, HermesDb, call, terminal_result

from xshare import cli
from xshare.agents.hermes.as_sent import sent_arguments
from xshare.agents.hermes.state_db import measure_hermes

OVERHEAD = 100  # the invented system prompt and tool schemas, sent with every call


def measure(path: Path) -> dict[str, dict]:
    rows, problems = measure_hermes([path], Counted(len, "chars"))
    assert not problems, problems
    return {row["id"]: row for row in rows}


def compact(arguments: dict) -> str:
    return json.dumps(arguments, separators=(",", ":"), sort_keys=True)


# --- item 3: arguments as sent ---------------------------------------------------------------------


@pytest.mark.parametrize(("stored", "sent"), [
    ('{"path": "a.py", "limit": 5}', '{"limit":5,"path":"a.py"}'),  # compact, keys sorted
    ('{"command": "grep -n é src"}', '{"command":"grep -n \\u00e9 src"}'),  # ensure_ascii stays on
    ('{"x": 1.50, "y": [1, 2]}', '{"x":1.5,"y":[1,2]}'),  # the stdlib's number spelling
    ("", "{}"), ("   ", "{}"), (None, "{}"), ('{"path": "a.py"', "{}"), ("not json", "{}"), ({"a": 1}, "{}"),
])
def test_arguments_as_hermes_sends_them(stored: object, sent: str) -> None:
    assert sent_arguments(stored) == sent


def test_a_call_counts_its_sent_arguments_and_keeps_its_category(tmp_path: Path) -> None:
    db = HermesDb(tmp_path / "state.db", 22)
    db.session("s", "cli", tokens=(5000, 0, 0, 1), api_calls=3)
    db.message("s", "user", "look")
    read = {"path": "src/naïve.py", "offset": 1}
    grep = {"command": "grep -rn 'x' src", "timeout": 30}
    for index, (name, arguments) in enumerate((("read_file", read), ("terminal", grep))):
        db.message("s", "assistant", None, tool_calls=[call(name, arguments, f"c{index}")])  # stored spaced
        db.message("s", "tool", terminal_result("hit"), tool_call_id=f"c{index}", tool_name=name)
    db.message("s", "assistant", "done")
    row = measure(db.close())["s"]
    sent = len(f"read_file {compact(read)}") + len(f"terminal {compact(grep)}")
    assert compact(read) != json.dumps(read)  # the test means something: spacing, order and ASCII differ
    assert row["first_time_tokens"]["exploration"] == sent + 2 * len(terminal_result("hit"))
    assert row["first_time_tokens"]["shell"] == 0  # the grep still reads


def test_string_contents_are_sent_stripped(tmp_path: Path) -> None:
    db = HermesDb(tmp_path / "state.db", 22)
    db.session("s", "cli", tokens=(5000, 0, 0, 1), api_calls=2)
    db.message("s", "user", "  fix it \n", api_content="  fix it \n\nCode matching: p.py\n\n")
    db.message("s", "assistant", "reading\n", tool_calls=[call("read_file", {"path": "p.py"}, "c1")])
    db.message("s", "tool", "body of p.py\n\n", tool_call_id="c1", tool_name="read_file")
    db.message("s", "assistant", [{"type": "text", "text": " a list keeps its blanks "}])
    first = measure(db.close())["s"]["first_time_tokens"]
    assert first["conversation"] == len("fix it \n") + len("reading") + len(" a list keeps its blanks ")
    assert first["neuralmind"] == len("\nCode matching: p.py")  # after the user text's own "\n"
    assert first["exploration"] == len(f"read_file {compact({'path': 'p.py'})}") + len("body of p.py")


# --- item 4: a growing session ----------------------------------------------------------------------


def _growing_session(db: HermesDb, sid: str, steps: int) -> tuple[int, int, int]:
    """A read, then `steps` shell calls; each call billed exactly what it carried. Returns (bill, exploration
    billed, calls)."""
    carried = [len("go")]
    db.message(sid, "user", "go")
    read_call, read_result = f"read_file {compact({'path': 'big.py'})}", "r" * 400
    db.message(sid, "assistant", None, tool_calls=[call("read_file", {"path": "big.py"}, f"{sid}-r")])
    db.message(sid, "tool", read_result, tool_call_id=f"{sid}-r", tool_name="read_file")
    bills, explored = [OVERHEAD + sum(carried)], 0
    carried += [len(read_call), len(read_result)]
    for step in range(steps):
        bills.append(OVERHEAD + sum(carried))
        explored += len(read_call) + len(read_result)
        arguments = {"command": f"make step{step}"}
        db.message(sid, "assistant", None, tool_calls=[call("terminal", arguments, f"{sid}-{step}")])
        result = terminal_result("x" * 200)
        db.message(sid, "tool", result, tool_call_id=f"{sid}-{step}", tool_name="terminal")
        carried += [len(f"terminal {compact(arguments)}"), len(result)]
    bills.append(OVERHEAD + sum(carried))
    explored += len(read_call) + len(read_result)
    db.message(sid, "assistant", "all done")
    return sum(bills), explored, len(bills)


def test_a_growing_session_keeps_its_first_read_to_the_end(tmp_path: Path) -> None:
    db = HermesDb(tmp_path / "state.db", 22)
    db.session("long", "cli", tokens=(0, 0, 0, 1), api_calls=0)
    bill, explored, calls = _growing_session(db, "long", 60)
    db.con.execute("UPDATE sessions SET input_tokens = ?, api_call_count = ? WHERE id = 'long'", (bill, calls))
    row = measure(db.close())["long"]
    # the mean bill is far below the late calls' (the first read would have been dropped): it is no cap
    assert row["api_calls"] == calls and row["prompt_tokens_billed"] == bill
    assert row["billed_tokens"]["exploration"] == explored
    assert row["billed_tokens"]["overhead"] == OVERHEAD * calls
    assert row["recorded_over_billed"] == 1.0
    assert row["exploration_share_of_prompt"] == pytest.approx(explored / bill)


# --- item 5: background reviews ---------------------------------------------------------------------


def _turn(db: HermesDb, sid: str, tool_calls: int, reply: str | None = "ok", tool: str = "terminal") -> None:
    """One user turn; every row's text is its own (repeated rows beside a summary would read as its copies)."""
    db.message(sid, "user", f"next {db.clock}")
    for step in range(tool_calls):
        call_id = f"{sid}-{db.clock}-{step}"
        db.message(sid, "assistant", None, tool_calls=[call(tool, {"command": f"ls {call_id}"}, call_id)])
        db.message(sid, "tool", terminal_result(call_id), tool_call_id=call_id, tool_name=tool)
    if reply is not None:
        db.message(sid, "assistant", f"{reply} {db.clock}")


REVIEW_CASES = {
    "eleven-tools": ([11], 1),  # 12 API calls in one turn
    "eight-tools": ([8], 0),  # 9 calls: under the interval
    "two-turns": ([5, 5], 1),  # 6 + 6 calls: the counter runs across turns
    "no-reply": ([11, None], 0),  # the turn ended without a reply: no review, the counter starts over
}


@pytest.mark.parametrize("case", sorted(REVIEW_CASES))
def test_skill_reviews_are_estimated_from_the_turns(tmp_path: Path, case: str) -> None:
    turns, expected = REVIEW_CASES[case]
    db = HermesDb(tmp_path / "state.db", 22)
    db.session(case, "cli", tokens=(50000, 0, 0, 1), api_calls=30)
    for tools in turns:
        if tools is None:
            _turn(db, case, 0, reply=None)
        else:
            _turn(db, case, tools, reply=None if case == "no-reply" else "ok")
    row = measure(db.close())[case]
    assert row["unrecorded_reviews"] == expected
    assert row["unrecorded_calls"] == 0  # nothing about them is counted


def test_skill_manage_resets_and_the_tenth_user_turn_reviews_memory(tmp_path: Path) -> None:
    db = HermesDb(tmp_path / "state.db", 22)
    db.session("reset", "cli", tokens=(50000, 0, 0, 1), api_calls=12)
    _turn(db, "reset", 5)
    _turn(db, "reset", 1, tool="skill_manage")  # back to 0 within the turn
    _turn(db, "reset", 3)
    db.session("memory", "cli", tokens=(50000, 0, 0, 1), api_calls=12)
    for turn in range(10):
        _turn(db, "memory", 1, tool="skill_manage" if turn == 4 else "terminal")  # skills never due
    db.message("memory", "user", SUMMARY)  # a compaction summary is no turn
    db.session("harness", "cli", tokens=(50000, 0, 0, 1), api_calls=10)
    for _ in range(9):
        _turn(db, "harness", 0)
    db.message("harness", "user", "Review the conversation above and consider saving to memory")  # recorded
    rows = measure(db.close())
    assert rows["reset"]["unrecorded_reviews"] == 0
    assert rows["memory"]["unrecorded_reviews"] == 1
    assert rows["harness"]["unrecorded_reviews"] == 0


def test_the_report_and_the_session_say_reviews_are_not_counted(tmp_path: Path, capsys) -> None:
    db = HermesDb(tmp_path / "state.db", 22)
    db.session("long-turn", "cli", tokens=(50000, 0, 0, 1), api_calls=12)
    _turn(db, "long-turn", 11)
    path = db.close()
    env = ["--hermes-db", str(path), "--no-history"]
    assert cli.main(["report", "--all", *env]) == 0
    out = capsys.readouterr().out
    assert "Calls you were billed for that no record holds (so not in the figures above):" in out
    assert "hermes/interactive: about 1 background memory/skill review Hermes started" in out
    assert cli.main(["report", "--all", "--json", *env]) == 0
    assert json.loads(capsys.readouterr().out)["groups"]["hermes/interactive"]["unrecorded_reviews"] == 1
    assert cli.main(["session", "long-turn", "--hermes-db", str(path)]) == 0
    assert "Not in these figures: about 1 background memory/skill review" in capsys.readouterr().out
