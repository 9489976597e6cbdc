"""The real Qwen Code 0.24.4's TUI in tmux, offline against the fake Chat Completions server: a prompt typed in, a
read and a read-only shell command, then its exit. xshare's calls, billed prompt, cache reads, output and
exploration equal the server's log of the calls the chat records; the TUI's next-prompt suggestion request after
the turn (billed, recorded nowhere) is left out of both sides and named in the row's `unseen_calls`. Needs what
test_realhost.py needs, and tmux."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from chat_hosts import compare_with_the_wire, tool, wait_until
from fake_openai import FakeOpenAI, Reply
from wire import content_text

from tests.agents.qwen.test_realhost import QWEN, SKIP, Host
from xshare.agents.common import unseen

pytestmark = [pytest.mark.realhost, pytest.mark.skipif(SKIP is not None, reason=SKIP or ""),
              pytest.mark.skipif(shutil.which("tmux") is None, reason="the TUI test needs tmux")]
SUGGESTION = "[SUGGESTION MODE"  # how the TUI's suggestion request's last user turn begins (0.24.4)


def _suggestion(body: dict) -> str:
    users = [message for message in body.get("messages") or [] if message.get("role") == "user"]
    return "suggestion" if users and content_text(users[-1].get("content")).startswith(SUGGESTION) else ""


class Recorded:
    """The fake server's log without the suggestion requests, for compare_with_the_wire."""

    def __init__(self, fake: FakeOpenAI) -> None:
        self.fake = fake

    def billed(self, kind: str | None = None) -> list[dict]:
        return [entry for entry in self.fake.billed(kind) if entry.get("agent") != "suggestion"]


def test_the_tui(tmp_path: Path) -> None:
    replies = [tool("read_file", file_path=str(tmp_path / "project" / "notes.txt")),
               tool("run_shell_command", command="head -3 src/lib.py", description="peek"),
               Reply(text="Three lines; helpers.")]
    host = Host(tmp_path, replies)
    host.fake.route = _suggestion
    recorded = Recorded(host.fake)
    name = f"xshare-qwen-{os.getpid()}-{tmp_path.name}"
    env = " ".join(f"{key}={shlex.quote(value)}" for key, value in {**host.env, "TERM": "xterm-256color"}.items())
    command = f"cd {shlex.quote(str(host.project))} && env -i {env} {shlex.quote(QWEN)} --auth-type openai --yolo"
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "160", "-y", "45", command], check=True)
    try:
        screen = lambda: subprocess.run(["tmux", "capture-pane", "-p", "-t", name], capture_output=True,  # noqa: E731
                                        text=True).stdout
        assert wait_until(lambda: "Type your message" in screen(), timeout=90), screen()
        subprocess.run(["tmux", "send-keys", "-t", name, "-l", "What is in notes.txt and src/lib.py?"], check=True)
        assert wait_until(lambda: "notes.txt and src/lib.py?" in screen(), timeout=30), screen()
        subprocess.run(["tmux", "send-keys", "-t", name, "Enter"], check=True)
        assert wait_until(lambda: len(recorded.billed("main")) == len(replies)
                          and host.replies_recorded() == len(replies) and host.fake.billed("main")[-1]["agent"]
                          == "suggestion", timeout=120), (screen(), host.fake.billed("main"))
        rows = host.settled_rows(recorded)  # type: ignore[arg-type]
        assert len(rows) == 1 and rows[0]["source"] == "interactive" and rows[0]["api_calls"] == len(replies)
        compare_with_the_wire(rows, recorded)  # type: ignore[arg-type]
        suggestions = len(host.fake.billed("main")) - len(recorded.billed("main"))
        assert suggestions == 1 and unseen.counts(rows[0].get(unseen.FIELD)) == {"qwen_suggestion": 1}
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
        host.fake.stop()
