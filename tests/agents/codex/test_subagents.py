"""A subagent of the real Codex CLI (0.171.0): with `--enable multi_agent_v2` (a stable feature, off by
default) the model gets the `collaboration` tools; it spawns a task that reads, searches and lists on its
own thread, waits for it, and answers.

The fake Responses server (tests/support/fake_responses.py) answers each agent from its own script, told apart by
the `agent_name` of Codex's turn metadata ("/root", the subagent "/root/<task>"), so the order in which
the two threads' requests arrive does not matter. Codex writes the subagent's rollout as a thread of its
own (`parent_thread_id`); each of xshare's two rows must equal its own requests in the server's log
(calls, billed prompt, cache reads, output, exploration). Needs $XSHARE_TEST_CODEX.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_responses import FakeResponses, Reply, code, command
from fake_server import assert_row_matches

from tests.agents.codex.test_realhost import SKIP, make_host, recorded_calls, wait_for

pytestmark = [pytest.mark.realhost, pytest.mark.skipif(SKIP is not None, reason=SKIP or "")]
TASK = "look"


def scripts(code_mode: bool = False) -> dict[str, list[Reply]]:
    """The parent's and the task's scripts; in code mode (the default model) a command runs inside `exec`,
    while the collaboration tools are direct calls (0.171 keeps them out of `exec`'s namespace)."""
    def run(cmd: str) -> Reply:
        return code(f"text(await tools.exec_command({{cmd: {json.dumps(cmd)}}}));") if code_mode else command(cmd)

    spawn = {"task_name": TASK, "message": "Read notes.txt, find helper_1 and list src.", "fork_turns": "none"}
    return {"/root": [run("cat app.py"), Reply(calls=[("function", "spawn_agent", spawn)]),
                      Reply(calls=[("function", "wait_agent", {})]), Reply(text="The task looked; main returns 42.")],
            f"/root/{TASK}": [run("cat notes.txt"), run("grep -n helper_1 src/lib.py"), run("ls -la src"),
                              Reply(text="notes.txt has three lines; helper_1 is in src/lib.py.")]}


@pytest.mark.parametrize("model", [None, "gpt-5.5"], ids=["default-code-mode", "gpt-5.5"])
def test_a_spawned_agent_is_a_row_of_its_own_that_matches_the_wire(tmp_path: Path, model: str | None) -> None:
    host = make_host(tmp_path, [], model)
    first_url = host.fake.base_url
    host.fake.stop()
    host.fake = FakeResponses(scripts(code_mode=model is None), lifetime=600, max_requests=200).start()
    config = host.home / "config.toml"
    config.write_text(config.read_text().replace(first_url, host.fake.base_url))
    try:
        found = host.codex("exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
                           "--enable", "multi_agent_v2", "Have a task look at the project.")
        assert found.returncode == 0, found.stderr[-3000:]
        turns = host.fake.billed("turn")
        by_agent = {name: [entry for entry in turns if entry["agent"] == name] for name in scripts()}
        assert [len(requests) for requests in by_agent.values()] == [4, 4], [entry["agent"] for entry in turns]
        rollouts = host.rollouts()
        assert len(rollouts) == 2
        wait_for(lambda: sum(map(recorded_calls, rollouts)) == len(turns), what="both rollouts to record every call")
        report = host.xshare("report", "--all", "--rows", str(tmp_path / "rows.jsonl"))
        rows = {row["source"]: row for row in map(json.loads, (tmp_path / "rows.jsonl").read_text().splitlines())}
        assert sorted(rows) == ["automated", "subagent"]
        assert_row_matches(rows["automated"], by_agent["/root"])
        assert_row_matches(rows["subagent"], by_agent[f"/root/{TASK}"])
        assert rows["subagent"]["billed_tokens"]["exploration"] > 0
        assert report["groups"]["codex/subagent"]["sessions"] == report["groups"]["codex/automated"]["sessions"] == 1
    finally:
        host.fake.stop()
