"""The real OpenCode 1.18.33 (`opencode-ai` with `opencode-linux-x64`, pinned in .ci/run), offline against a fake
Chat Completions server (tests/support/fake_openai.py) that bills every request its exact o200k count and counts its
exploration tokens itself (tests/support/chat_wire.py).

Scenarios, in print mode (`opencode run --auto`): the configured default model reading, searching (the grep
tool, and grep / ls / wc through bash), editing and touching a file; another model (`--model`) handing a
read to a `task` subagent (a child session); a `--continue` turn on the first session; and the TUI
(`opencode` in tmux: a prompt typed in, two reads, Ctrl-C). Each compares
xshare's calls, billed prompt, cache reads and output with the server's log, and the exploration share
with what the requests carried. OpenCode's title request (no tools) is billed and recorded nowhere: it is
left out of both sides, and xshare must name it (`unseen_calls`). Needs $XSHARE_TEST_OPENCODE (the
`opencode` launcher .ci/run installs); skips without it (the TUI test also without tmux).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from chat_hosts import compare_with_the_wire, tool, wait_until
from fake_openai import Reply
from opencode_forks import ForkHost, a_continued_session, another_model_with_a_subagent, reads_searches_and_edits

OPENCODE = os.environ.get("XSHARE_TEST_OPENCODE", "")
SKIP = None if OPENCODE and Path(OPENCODE).is_file() else \
    "XSHARE_TEST_OPENCODE does not name an opencode launcher (.ci/run installs opencode-ai 1.18.33)"
pytestmark = [pytest.mark.realhost, pytest.mark.skipif(SKIP is not None, reason=SKIP or "")]


class Host(ForkHost):
    agent, launcher = "opencode", OPENCODE

    def configured(self, config: dict) -> dict[str, str]:
        folder = self.tmp / "config" / "opencode"
        folder.mkdir(parents=True)
        folder.joinpath("opencode.json").write_text(json.dumps({"$schema": "https://opencode.ai/config.json",
                                                                **config}))
        return {"OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1",
                "OPENCODE_DISABLE_LSP_DOWNLOAD": "1", "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1"}

    def titles_named(self, rows: list[dict]) -> None:
        """Every title request the server answered and OpenCode stored is named, none counted."""
        titles, named = len(self.fake.billed("title")), self.titles_of(rows)
        assert 1 <= named <= titles, (named, titles)

    def continued_titles(self, titles: int) -> bool:
        return titles == 1


def test_default_model_reads_searches_and_edits(tmp_path: Path) -> None:
    reads_searches_and_edits(Host, tmp_path)


def test_another_model_with_a_subagent(tmp_path: Path) -> None:
    another_model_with_a_subagent(Host, tmp_path)


def test_a_continued_session(tmp_path: Path) -> None:
    a_continued_session(Host, tmp_path)


@pytest.mark.skipif(shutil.which("tmux") is None, reason="the TUI test needs tmux")
def test_the_tui(tmp_path: Path) -> None:
    replies = [tool("read", filePath="notes.txt"), tool("bash", command="head -3 src/lib.py", description="peek"),
               Reply(text="Three lines; helpers.")]
    host = Host(tmp_path, replies)
    name = f"xshare-opencode-{os.getpid()}-{tmp_path.name}"
    env = " ".join(f"{key}={shlex.quote(value)}" for key, value in {**host.env, "TERM": "xterm-256color"}.items())
    command = f"cd {shlex.quote(str(host.project))} && env -i {env} {shlex.quote(OPENCODE)}"
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "160", "-y", "45", command], check=True)
    try:
        screen = lambda: subprocess.run(["tmux", "capture-pane", "-p", "-t", name], capture_output=True,  # noqa: E731
                                        text=True).stdout
        assert wait_until(lambda: "Ask anything" in screen(), timeout=90), screen()
        subprocess.run(["tmux", "send-keys", "-t", name, "-l", "What is in notes.txt and src/lib.py?"], check=True)
        assert wait_until(lambda: "notes.txt and src/lib.py?" in screen(), timeout=30), screen()
        subprocess.run(["tmux", "send-keys", "-t", name, "Enter"], check=True)
        assert wait_until(lambda: len(host.fake.billed("main")) == len(replies) and host.steps() == len(replies),
                          timeout=120), (screen(), host.fake.billed("main"))
        subprocess.run(["tmux", "send-keys", "-t", name, "C-c"], check=True)
        # measured once OpenCode has exited: its last writes (the session's end) come after the last call, and a
        # busy machine can delay them past the report's start, which then holds the session back as still active
        gone = lambda: subprocess.run(["tmux", "has-session", "-t", name], capture_output=True).returncode != 0  # noqa: E731
        assert wait_until(gone, timeout=120), screen()
        rows = host.settled_rows()
        assert len(rows) == 1 and rows[0]["source"] == "interactive" and rows[0]["api_calls"] == len(replies)
        compare_with_the_wire(rows, host.fake)
        host.titles_named(rows)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
        host.fake.stop()
