"""A subagent of the real OpenClaw 2026.9.6: the model spawns one (`tool_call` of `sessions_spawn`, a tool
behind the compact tool surface) and yields (`sessions_yield`); the spawned session reads a file and answers;
then the gateway starts a later, separate turn of the parent with the child's result, and the parent answers.

Spawning needs the gateway's reply runtime (`openclaw agent --local` answers "published reply runtime
missing"), so this test runs `openclaw gateway` on a free loopback port (auth none, its own state folder)
and `openclaw agent` through it. The fake Chat Completions server (tests/support/fake_openai.py) answers each
session from its own script, told apart by the session key OpenClaw writes into the first user message of
every request (`Runtime: ... session=agent:main:subagent:<id>`), so the order in which the child's turns
and the parent's follow-up arrive does not matter. The parent's row and the subagent's row must each equal
their own requests in the server's log (calls, billed prompt, cache reads, output, exploration). Needs
what tests/agents/openclaw/test_realhost.py needs.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
from pathlib import Path

import pytest
from chat_hosts import tool, wait_until, xshare_rows
from chat_wire import ChatWire
from fake_openai import FakeOpenAI, Reply
from fake_server import assert_row_matches

from tests.agents.openclaw.test_realhost import OPENCLAW, SKIP, Host

pytestmark = [pytest.mark.realhost, pytest.mark.skipif(SKIP is not None, reason=SKIP or "")]
CHILD_KEY = "session=agent:main:subagent:"
SCRIPTS = {"parent": [tool("tool_call", id="sessions_spawn", args={"task": "Read notes.txt and report its lines."}),
                      tool("sessions_yield"), Reply(text="The helper found three lines.")],
           "child": [tool("read", path="notes.txt"), tool("exec", command="wc -l notes.txt"),
                     Reply(text="notes.txt: alpha, beta, gamma (3 lines).")]}


def which_session(body: dict) -> str:
    """The child's requests open with its own task and runtime line; the parent's, even its follow-up turn
    that carries the child's result, with the parent's first prompt."""
    users = [message for message in body.get("messages") or [] if message.get("role") == "user"]
    first = json.dumps(users[0].get("content"), ensure_ascii=False) if users else ""
    return "child" if CHILD_KEY in first else "parent"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def port_open(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), 1).close()
        return True
    except OSError:
        return False


def test_a_spawned_session_and_the_parents_follow_up_match_the_wire(tmp_path: Path) -> None:
    host = Host(tmp_path, [])
    host.fake.stop()
    host.fake = FakeOpenAI(SCRIPTS, lifetime=900, max_requests=300, wire=ChatWire("openclaw"),
                           route=which_session).start()
    port = free_port()
    config = json.loads((host.state / "openclaw.json").read_text())
    config["models"]["providers"]["fake"]["baseUrl"] = host.fake.base_url
    config["gateway"] = {"mode": "local", "port": port, "bind": "loopback", "auth": {"mode": "none"}}
    (host.state / "openclaw.json").write_text(json.dumps(config))
    with (tmp_path / "gateway.log").open("w") as log:
        gateway = subprocess.Popen([OPENCLAW, "gateway", "--port", str(port), "--auth", "none", "--bind", "loopback"],
                                   env=host.env, cwd=host.project, stdin=subprocess.DEVNULL, stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    try:
        assert wait_until(lambda: port_open(port), timeout=180), (tmp_path / "gateway.log").read_text()[-3000:]
        ran = subprocess.run([OPENCLAW, "agent", "--agent", "main", "--json", "-m", "Have a helper read notes.txt."],
                             env=host.env, cwd=host.project, stdin=subprocess.DEVNULL, capture_output=True,
                             text=True, timeout=600)
        assert ran.returncode == 0, (ran.stdout[-2000:], ran.stderr[-3000:])
        calls = sum(map(len, SCRIPTS.values()))
        # the child's turns and the parent's follow-up run in the gateway after `openclaw agent` returns
        assert wait_until(lambda: len(host.fake.billed("main")) == calls and host.answers() == calls, timeout=240), \
            [entry.get("agent") for entry in host.fake.billed("main")]
        rows, stderr = xshare_rows(host.env, tmp_path, "--openclaw-home", str(host.state))
        rows = [row for row in rows if row["agent"] == "openclaw"]
        assert "could not" not in stderr and "know" not in stderr, stderr
        by_source = {row["source"]: row for row in rows}
        assert len(rows) == 2 and sorted(by_source) == ["interactive", "subagent"], rows
        main = host.fake.billed("main")
        assert_row_matches(by_source["interactive"], [entry for entry in main if entry["agent"] == "parent"],
                           "completion_tokens")
        assert_row_matches(by_source["subagent"], [entry for entry in main if entry["agent"] == "child"],
                           "completion_tokens")
        assert by_source["subagent"]["billed_tokens"]["exploration"] > 0
    finally:
        os.killpg(gateway.pid, signal.SIGTERM)  # the gateway and what it started: its own process group
        try:
            gateway.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(gateway.pid, signal.SIGKILL)
            gateway.wait(10)
        host.fake.stop()
