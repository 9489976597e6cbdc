"""The real Gemini CLI's TUI (0.61.0) in tmux, against the fake Gemini API (tests/support/fake_gemini.py).

A prompt is typed into `gemini --yolo` (interactive), the model reads, searches, lists, edits and touches a
file, answers, and `/quit` ends the TUI. Then xshare's calls, billed prompt, cache reads, output and
exploration must equal the server's log, as for print mode (tests/agents/gemini/test_realhost.py, whose host and
comparison this reuses), with the default model (auto: a router request first) and with `-m`. Needs
$XSHARE_TEST_GEMINI and tmux.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from tests.agents.gemini.test_realhost import (
    GEMINI,
    SKIP,
    compare_with_the_wire,
    make_host,
    recorded_calls,
    six_steps,
    wait_for,
)

TMUX_SKIP = None if shutil.which("tmux") else "tmux is not installed"
pytestmark = [pytest.mark.realhost, pytest.mark.skipif(SKIP is not None, reason=SKIP or ""),
              pytest.mark.skipif(TMUX_SKIP is not None, reason=TMUX_SKIP or "")]
ANSWER = "app.py now returns 43."  # six_steps's last reply


class Pane:
    """One detached tmux session running a command; its own socket, so no other tmux server is touched."""

    def __init__(self, tmp_path: Path, command: str, cwd: Path) -> None:
        self.socket = str(tmp_path / "tmux.sock")
        self.name = f"xshare-{uuid.uuid4().hex[:8]}"
        self.tmux("new-session", "-d", "-s", self.name, "-x", "160", "-y", "45", "-c", str(cwd), command)

    def tmux(self, *arguments: str) -> subprocess.CompletedProcess:
        return subprocess.run(["tmux", "-S", self.socket, *arguments], capture_output=True, text=True, timeout=30)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.name).stdout

    def type(self, text: str, taken) -> None:
        """Types text, then Enter until `taken()`: an Enter that follows typed text too closely is read as part
        of a paste (a new line), and an Enter into an empty box does nothing."""
        self.tmux("send-keys", "-t", self.name, "-l", text)
        wait_for(lambda: text in self.screen(), 60, f"{text!r} in the input box")
        for _ in range(20):
            time.sleep(1)
            self.tmux("send-keys", "-t", self.name, "Enter")
            try:
                return wait_for(taken, 10, "")
            except AssertionError:
                continue
        raise AssertionError(f"the TUI did not take {text!r}:\n{self.screen()}")

    def alive(self) -> bool:
        return self.tmux("has-session", "-t", self.name).returncode == 0

    def close(self) -> None:
        """The pane's program and all it started end with it: node ignores the hang-up tmux sends, so its
        process group is ended too, or a CLI would outlive the test."""
        if not self.alive():
            return
        found = self.tmux("display-message", "-p", "-t", self.name, "#{pane_pid}").stdout.strip()
        self.tmux("kill-server")
        if found.isdigit():
            for signal_number in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(int(found), signal_number)
                except (ProcessLookupError, PermissionError):
                    break
                time.sleep(0.5)


def tui_command(env: dict[str, str], *extra: str) -> str:
    # env -i: the pane gets the test's environment only, not the tmux server's
    settings = " ".join(f"{key}={shlex.quote(value)}" for key, value in {**env, "TERM": "xterm-256color"}.items())
    return f"env -i {settings} {shlex.quote(GEMINI or 'gemini')} --yolo {' '.join(map(shlex.quote, extra))}"


@pytest.mark.parametrize("model", [None, "gemini-2.5-pro"], ids=["auto", "gemini-2.5-pro"])
def test_a_prompt_typed_into_the_tui_matches_the_wire(tmp_path: Path, model: str | None) -> None:
    host = make_host(tmp_path, six_steps)
    pane = Pane(tmp_path, tui_command(host.env, *(["-m", model] if model else [])), host.project)
    try:
        wait_for(lambda: "Type your message" in pane.screen(), 120, "the TUI's input box")
        pane.type("Look at the project, then make main return 43.", lambda: bool(host.fake.requests))
        wait_for(lambda: len(host.fake.billed("main")) == 6 and ANSWER in pane.screen(), 240, "the answer")
        wait_for(lambda: recorded_calls(host) == 6, 60, "the chat to record every response")
        pane.type("/quit", lambda: not pane.alive())
        found = compare_with_the_wire(host, prompts=1)
        assert found["billed_tokens"]["edit"] > 0 and found["billed_tokens"]["shell"] > 0
        assert (project_file := host.project / "app.py").read_text().count("return 43") == 1, project_file
        assert len(host.fake.billed("router")) == (1 if model is None else 0)
        if model:
            assert found["model"] == model
    finally:
        pane.close()
        host.fake.stop()
