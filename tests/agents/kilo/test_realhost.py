"""The real Kilo CLI 7.7.7 (`@kilocode/cli` with `@kilocode/cli-linux-x64`, pinned in .ci/run), offline against a
fake Chat Completions server (tests/support/fake_openai.py) that bills every request its exact o200k count and
counts its exploration tokens itself (tests/support/chat_wire.py).

Scenarios, in print mode (`kilo run --auto`): the configured default model reading, searching (the grep tool,
whose ripgrep download fails offline, so its result is the error; and grep / ls / wc through bash), editing and
touching a file; another model (`--model`) handing a read to a `task` subagent (a child session); and a
`--continue` turn on the first session. Each compares xshare's calls, billed prompt, cache reads and output with
the server's log, and the exploration share with what the requests carried; and the TUI (`kilo` in tmux: a prompt
typed in, a read and a read-only shell command, /exit). Kilo's title request (no tools),
when `kilo run` sends it before exiting, is billed and recorded nowhere: it is left out of both sides, and
xshare must name up to one a top-level session (`unseen_calls`). Needs
$XSHARE_TEST_KILO (the `kilo` launcher .ci/run installs); skips without it.
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

KILO = os.environ.get("XSHARE_TEST_KILO", "")
SKIP = None if KILO and Path(KILO).is_file() else \
    "XSHARE_TEST_KILO does not name a kilo launcher (.ci/run installs @kilocode/cli 7.7.7)"
pytestmark = [pytest.mark.realhost, pytest.mark.skipif(SKIP is not None, reason=SKIP or "")]


class Host(ForkHost):
    agent, launcher = "kilo", KILO

    def configured(self, config: dict) -> dict[str, str]:
        # KILO_CONFIG_CONTENT: the whole config, so nothing of the machine's user is read
        return {"KILO_CONFIG_CONTENT": json.dumps(config), "KILO_AUTH_CONTENT": "{}",
                "KILO_DISABLE_AUTOUPDATE": "1", "KILO_DISABLE_MODELS_FETCH": "1",
                "KILO_DISABLE_LSP_DOWNLOAD": "1", "KILO_DISABLE_DEFAULT_PLUGINS": "1"}

    def titles_named(self, rows: list[dict]) -> None:
        """Up to one title request is named for each top-level session, none counted: `kilo run` may exit
        before the request is sent, or after it is answered and before its title is stored."""
        titles, named = len(self.fake.billed("title")), self.titles_of(rows)
        top_level = sum(1 for row in rows if row["source"] == "interactive")
        assert titles <= named == top_level, (named, titles, top_level)

    def continued_titles(self, titles: int) -> bool:
        return titles <= 1


def test_default_model_reads_searches_and_edits(tmp_path: Path) -> None:
    reads_searches_and_edits(Host, tmp_path)


def test_another_model_with_a_subagent(tmp_path: Path) -> None:
    another_model_with_a_subagent(Host, tmp_path)


def test_a_continued_session(tmp_path: Path) -> None:
    a_continued_session(Host, tmp_path)


def _tmux(name: str, *keys: str, literal: bool = False) -> None:
    subprocess.run(["tmux", "send-keys", "-t", name, *(["-l"] if literal else []), *keys], check=True)


@pytest.mark.skipif(shutil.which("tmux") is None, reason="the TUI test needs tmux")
def test_the_tui(tmp_path: Path) -> None:
    replies = [tool("read", filePath="notes.txt"), tool("bash", command="head -3 src/lib.py", description="peek"),
               Reply(text="Three lines; helpers.")]
    host = Host(tmp_path, replies)
    name = f"xshare-kilo-{os.getpid()}-{tmp_path.name}"
    env = " ".join(f"{key}={shlex.quote(value)}" for key, value in {**host.env, "TERM": "xterm-256color"}.items())
    command = f"cd {shlex.quote(str(host.project))} && env -i {env} {shlex.quote(KILO)}"
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "160", "-y", "45", command], check=True)
    try:
        screen = lambda: subprocess.run(["tmux", "capture-pane", "-p", "-t", name], capture_output=True,  # noqa: E731
                                        text=True).stdout
        assert wait_until(lambda: "Ask anything" in screen(), timeout=90), screen()

        def typed() -> bool:
            """Kilo 7.7.7's prompt drops keys for a while after it is drawn: a probe key until one shows."""
            _tmux(name, "?", literal=True)
            return wait_until(lambda: "┃  ?" in screen(), timeout=3)

        assert wait_until(typed, timeout=120, every=0.5), screen()
        _tmux(name, "BSpace")
        _tmux(name, "What is in notes.txt and src/lib.py?", literal=True)
        assert wait_until(lambda: "notes.txt and src/lib.py?" in screen(), timeout=30), screen()
        _tmux(name, "Enter")
        assert wait_until(lambda: len(host.fake.billed("main")) == len(replies) and host.steps() == len(replies),
                          timeout=120), (screen(), host.fake.billed("main"))
        # measured once Kilo has exited (its last writes come after the last call); Ctrl-C does not end 7.7.7's TUI
        _tmux(name, "/exit", literal=True)
        assert wait_until(lambda: "/exit" in screen(), timeout=30), screen()
        _tmux(name, "Enter")
        gone = lambda: subprocess.run(["tmux", "has-session", "-t", name], capture_output=True).returncode != 0  # noqa: E731
        assert wait_until(gone, timeout=120), screen()
        rows = host.settled_rows()
        assert len(rows) == 1 and rows[0]["source"] == "interactive" and rows[0]["api_calls"] == len(replies)
        compare_with_the_wire(rows, host.fake)
        host.titles_named(rows)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
        host.fake.stop()
