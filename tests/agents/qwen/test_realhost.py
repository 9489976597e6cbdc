"""The real Qwen Code 0.24.4 (`@qwen-code/qwen-code`, pinned in .ci/run, on the Node >= 22 it asks for), offline
against a fake Chat Completions server (tests/support/fake_openai.py) that bills every request its exact o200k
count and counts its exploration tokens itself (tests/support/chat_wire.py).

Scenarios, in print mode (`qwen --auth-type openai --yolo PROMPT`): reading, searching (grep_search, and grep /
ls / wc through run_shell_command), editing and touching a file; a background `agent` subagent (its own chat
under subagents/, a row of its own); and a `--resume` of the first session (the same file appended). Each
compares xshare's calls, billed prompt, cache reads and output with the server's log, and the exploration share
with what the requests carried. Needs $XSHARE_TEST_QWEN (the `qwen` launcher .ci/run installs) and, when the
machine's node is older than 22, $XSHARE_TEST_QWEN_NODE (a folder holding a newer one); skips without them.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from chat_hosts import compare_with_the_wire, make_project, tool, wait_until, xshare_rows
from chat_wire import ChatWire
from fake_openai import FakeOpenAI, Reply
from wire import content_text

QWEN = os.environ.get("XSHARE_TEST_QWEN", "")
NODE = os.environ.get("XSHARE_TEST_QWEN_NODE", "")
SKIP = None if QWEN and Path(QWEN).is_file() else \
    "XSHARE_TEST_QWEN does not name a qwen launcher (.ci/run installs @qwen-code/qwen-code 0.24.4)"
pytestmark = [pytest.mark.realhost, pytest.mark.skipif(SKIP is not None, reason=SKIP or "")]
CHILD_PROMPT = "Read notes.txt and report its lines."


def _first_user_text(body: dict) -> str:
    users = [message for message in body.get("messages") or [] if message.get("role") == "user"]
    return content_text(users[0].get("content")) if users else ""


class Host:
    def __init__(self, tmp_path: Path, replies: list[Reply] | dict[str, list[Reply]]) -> None:
        self.tmp = tmp_path
        self.project = make_project(tmp_path / "project")
        self.qwen_home = tmp_path / "home" / ".qwen"
        self.qwen_home.parent.mkdir(exist_ok=True)  # Qwen Code stops at start-up without its HOME
        route = (lambda body: "child" if CHILD_PROMPT in _first_user_text(body) else "") \
            if isinstance(replies, dict) else None
        self.fake = FakeOpenAI(replies, lifetime=600, max_requests=300, wire=ChatWire("qwen"), route=route).start()
        path = f"{NODE}:/usr/local/bin:/usr/bin:/bin" if NODE else "/usr/local/bin:/usr/bin:/bin"
        self.env = {"PATH": path, "HOME": str(tmp_path / "home"), "LANG": "C.UTF-8",
                    "OPENAI_BASE_URL": self.fake.base_url, "OPENAI_API_KEY": "not-a-real-key",
                    "OPENAI_MODEL": "fake-model", "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1",
                    "XSHARE_HOME": str(tmp_path / "xshare-home")}

    def run(self, prompt: str, *extra: str) -> None:
        ran = subprocess.run([QWEN, "--auth-type", "openai", "--yolo", *extra, prompt], env=self.env,
                             cwd=self.project, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
        assert ran.returncode == 0, ran.stderr[-3000:]

    def chats(self) -> list[Path]:
        return sorted(self.qwen_home.glob("projects/*/chats/*.jsonl"))

    def replies_recorded(self) -> int:
        """Assistant records written, in every chat and subagent chat."""
        files = self.qwen_home.glob("projects/*/*/**/*.jsonl")
        return sum(path.read_text().count('"type":"assistant"') for path in files)

    def settled_rows(self, log: FakeOpenAI | None = None) -> list[dict]:
        """xshare's rows once every call the server answered (in `log`: all it answered, or those a chat records)
        is in a chat (never an exit's race)."""
        main = (log or self.fake).billed("main")
        assert wait_until(lambda: self.replies_recorded() >= len(main)), (self.replies_recorded(), len(main))
        assert not self.fake.billed("title")  # print mode makes no request outside the chat
        rows, stderr = xshare_rows(self.env, self.tmp, "--qwen-home", str(self.qwen_home))
        assert "Qwen Code" not in stderr, stderr  # no record it did not know, no line skipped
        return [row for row in rows if row["agent"] == "qwen"]


def test_reads_searches_and_edits(tmp_path: Path) -> None:
    app = str(tmp_path / "project" / "app.py")
    replies = [tool("read_file", file_path=app), tool("grep_search", pattern="helper_1", path="src"),
               tool("run_shell_command", command="grep -n gamma notes.txt", description="find gamma"),
               tool("run_shell_command", command="ls -la src && wc -l src/lib.py", description="list"),
               tool("edit", file_path=app, old_string="return 42", new_string="return 43"),
               tool("run_shell_command", command="touch done.flag", description="mark"), Reply(text="Edited app.py.")]
    host = Host(tmp_path, replies)
    try:
        host.run("Look around, then make main return 43.")
        rows = host.settled_rows()
        assert len(rows) == 1 and rows[0]["source"] == "interactive" and rows[0]["model"] == "fake-model"
        figures = compare_with_the_wire(rows, host.fake)
        assert figures["calls"] == len(replies) and rows[0]["billed_tokens"]["edit"] > 0
        assert rows[0]["billed_tokens"]["shell"] > 0  # the touch
        assert (host.project / "app.py").read_text().count("return 43") == 1
    finally:
        host.fake.stop()


def test_a_background_subagent(tmp_path: Path) -> None:
    notes = str(tmp_path / "project" / "notes.txt")
    replies = {"": [tool("agent", description="Read the notes", prompt=CHILD_PROMPT, subagent_type="general-purpose"),
                    tool("read_file", file_path=str(tmp_path / "project" / "src" / "lib.py"))],
               "child": [tool("read_file", file_path=notes), Reply(text="Three lines: alpha, beta, gamma.")]}
    host = Host(tmp_path, replies)
    try:
        host.run("Have a subagent read the notes.")
        rows = host.settled_rows()
        by_source = {row["source"]: row for row in rows}
        assert sorted(by_source) == ["interactive", "subagent"]
        assert by_source["subagent"]["parent"] == by_source["interactive"]["id"]
        assert by_source["subagent"]["api_calls"] == 2
        assert by_source["subagent"]["billed_tokens"]["exploration"] > 0
        compare_with_the_wire(rows, host.fake)
    finally:
        host.fake.stop()


def test_a_resumed_session(tmp_path: Path) -> None:
    replies = [tool("read_file", file_path=str(tmp_path / "project" / "notes.txt")), Reply(text="Three lines."),
               tool("run_shell_command", command="grep -c helper src/lib.py", description="count"),
               Reply(text="40 helpers.")]
    host = Host(tmp_path, replies)
    try:
        host.run("What is in notes.txt?")
        assert wait_until(lambda: host.replies_recorded() == 2)
        [chat] = host.chats()
        host.run("And how many helpers are in src/lib.py?", "--resume", chat.stem)
        assert host.chats() == [chat]  # the resume appends to the session's file
        rows = host.settled_rows()
        assert len(rows) == 1 and rows[0]["api_calls"] == 4 and rows[0]["id"] == chat.stem
        compare_with_the_wire(rows, host.fake)
    finally:
        host.fake.stop()
