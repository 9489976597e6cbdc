"""A subagent of the real Gemini CLI (0.61.0): the model calls `invoke_agent` (the built-in `generalist`), whose
run reads, searches and lists on its own turns, then returns with `complete_task`; the parent answers.

The fake Gemini API (tests/support/fake_gemini.py) answers each agent from its own script, told apart by the
request alone (only a subagent's requests offer `complete_task`), so the order in which the two agents'
requests arrive does not matter. 0.61 writes the subagent's chat to `chats/<session id>/<run id>.jsonl`:
the parent's and the subagent's rows must each equal their own requests in the server's log (calls, billed
prompt, cache reads, output, exploration). Needs $XSHARE_TEST_GEMINI (the fixture test at the end does not).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from agent_fixtures import Counted
from fake_gemini import FakeGemini, Reply, tool
from fake_server import assert_row_matches

from tests.agents.gemini.test_realhost import SKIP, make_host, wait_for
from xshare.agents.gemini import reader as gemini

TASK = "Read notes.txt, find helper_1 and list src; report what you found."


def which_agent(body: dict) -> str:
    tools = json.dumps(body.get("tools") or [])
    return "subagent" if '"complete_task"' in tools else "main"


def scripts() -> dict[str, list[Reply]]:
    return {"main": [tool("read_file", file_path="app.py"),
                     tool("invoke_agent", agent_name="generalist", prompt=TASK),
                     Reply(text="The subagent looked; nothing to change.")],
            "subagent": [tool("read_file", file_path="notes.txt"), tool("grep_search", pattern="helper_1"),
                         tool("run_shell_command", command="ls -la src"),
                         tool("complete_task", result={"response": "notes.txt has three lines; helper_1 is in src."})]}


def chats_of(home: Path) -> list[Path]:
    return sorted((home / ".gemini" / "tmp").glob("*/chats/**/*.jsonl"))


def billed_messages(home: Path) -> int:
    billed = set()
    for path in chats_of(home):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if record.get("type") == "gemini" and isinstance(record.get("tokens"), dict):
                billed.add((path.name, record["id"]))
    return len(billed)


@pytest.mark.realhost
@pytest.mark.skipif(SKIP is not None, reason=SKIP or "")
@pytest.mark.parametrize("model", [None, "gemini-2.5-pro"], ids=["auto", "gemini-2.5-pro"])
def test_a_subagent_is_a_row_of_its_own_that_matches_the_wire(tmp_path: Path, model: str | None) -> None:
    host = make_host(tmp_path, [])
    host.fake.stop()
    host.fake = FakeGemini(scripts(), lifetime=600, max_requests=200, route=which_agent).start()
    host.env["GOOGLE_GEMINI_BASE_URL"] = host.fake.base_url
    try:
        host.gemini("Have the generalist look at the project.", *(["-m", model] if model else []))
        streamed = host.fake.billed("main")
        by_agent = {name: [entry for entry in streamed if entry["agent"] == name] for name in ("main", "subagent")}
        assert [len(by_agent["main"]), len(by_agent["subagent"])] == [3, 4]
        wait_for(lambda: billed_messages(host.home) == len(streamed), what="both chats to record every response")
        report = host.xshare("report", "--all", "--rows", str(tmp_path / "rows.jsonl"))
        rows = {row["source"]: row for row in map(json.loads, (tmp_path / "rows.jsonl").read_text().splitlines())}
        assert sorted(rows) == ["interactive", "subagent"]
        assert_row_matches(rows["interactive"], by_agent["main"])
        assert_row_matches(rows["subagent"], by_agent["subagent"])
        assert rows["subagent"]["billed_tokens"]["shell"] == 0  # `ls` is a read-only look, exploration
        assert len(host.fake.billed("router")) == (2 if model is None else 0)  # the parent's and the run's
        groups = report["groups"]
        assert groups["gemini/interactive"]["sessions"] == groups["gemini/subagent"]["sessions"] == 1
        assert sum(group["api_calls"] for group in groups.values()) == len(streamed)
        # on auto the router is asked once for the parent's prompt and once for the run's: named (up to one a
        # prompt, as a file does not say whether the model was on auto), never counted
        assert groups["gemini/interactive"]["unseen_calls"] == groups["gemini/subagent"]["unseen_calls"] \
            == {"gemini_router": 1}
    finally:
        host.fake.stop()


PARENT_ID, RUN_ID = "0d8dc4eb-1111-4222-8333-444455556666", "b5a55aab-7777-4888-9999-aaaabbbbcccc"


def _chat(path: Path, session_id: str, kind: str, calls: list[tuple[int, int, int]]) -> Path:
    """A 0.61 chat file: header, a user prompt, one billed gemini message a (prompt, cached, output)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    records = [{"sessionId": session_id, "projectHash": "ab" * 32, "startTime": "2026-11-02T09:00:00.000Z",
                "lastUpdated": "2026-11-02T09:00:00.000Z", "kind": kind},
               {"id": "u0", "timestamp": "2026-11-02T09:00:01.000Z", "type": "user",
                "content": [{"text": "Count the widgets in the inventory."}]}]
    for number, (prompt, cached, output) in enumerate(calls):
        records.append({"id": f"g{number}", "timestamp": f"2026-11-02T09:00:{10 + number}.000Z", "type": "gemini",
                        "content": "Looking.", "model": "gemini-2.5-pro",
                        "tokens": {"input": prompt, "output": output, "cached": cached, "thoughts": 0, "tool": 0,
                                   "total": prompt + output}})
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def test_a_subagent_chat_in_the_parent_sessions_folder_is_found_and_read(tmp_path: Path) -> None:
    chats = tmp_path / ".gemini" / "tmp" / "inventory" / "chats"
    parent = _chat(chats / "session-2026-11-02T09-00-0d8dc4eb.jsonl", PARENT_ID, "main", [(900, 0, 5), (980, 900, 4)])
    run = _chat(chats / PARENT_ID / f"{RUN_ID}.jsonl", RUN_ID, "subagent", [(700, 0, 6), (760, 700, 3), (800, 760, 2)])
    (chats / PARENT_ID / "notes.txt").write_text("not a chat")  # only .jsonl files in the folder are chats
    found = gemini.discover([tmp_path / ".gemini"])
    assert sorted(found) == sorted([parent, run])
    problems: Counter = Counter()
    (row,) = gemini.read(run, Counted(len, "chars"), problems)
    assert (row["id"], row["source"], row["api_calls"]) == (RUN_ID, "subagent", 3)
    assert row["prompt_tokens_billed"] == 2260 and row["usage"]["cache_read"] == 1460 and row["usage"]["output"] == 11
    assert not problems
