"""The real Hermes-Agent 0.19.0, end to end, against a fake OpenAI-compatible server (tests/support/fake_openai.py).

A one-shot `hermes chat -q ... --yolo` and the TUI (`hermes chat --tui --yolo` in tmux) each run a session
with a read_file and a terminal `cat` call, with the xshare plugin enabled; then what Hermes wrote to
state.db, `xshare report`, `xshare session <id>` and the plugin's live figures are compared with what
the server billed. Needs the virtual environment .ci/hermes.sh makes (hermes-agent 0.19.0 and this
checkout installed editable) named by $XSHARE_TEST_HERMES_VENV; the TUI test also needs tmux.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI, Reply

REPO = Path(__file__).resolve().parents[3]
VENV = Path(os.environ["XSHARE_TEST_HERMES_VENV"]) if os.environ.get("XSHARE_TEST_HERMES_VENV") else None
HERMES = VENV / "bin" / "hermes" if VENV else None
QUESTION = "What does app.py return, and what is in notes.txt?"
ANSWER = "app.py returns 42; notes.txt lists alpha and beta."


def _skip_reason() -> str | None:
    if VENV is None:
        return "XSHARE_TEST_HERMES_VENV is not set (.ci/hermes.sh makes a hermes-agent 0.19.0 environment)"
    if not HERMES.is_file():
        return f"no hermes executable in {VENV}"
    found = subprocess.run([str(VENV / "bin" / "python"), "-c", "import xshare; print(xshare.__file__)"],
                           capture_output=True, text=True, cwd="/")
    if not found.stdout.strip().startswith(str(REPO)):
        return f"{VENV} does not hold this checkout of xshare (pip install -e {REPO})"
    return None


SKIP = _skip_reason()
pytestmark = [pytest.mark.realhost, pytest.mark.skipif(SKIP is not None, reason=SKIP or "")]


def script() -> list[Reply]:
    return [Reply(tool_calls=[("read_file", {"path": "app.py"})]),
            Reply(tool_calls=[("terminal", {"command": "cat notes.txt"})]),
            Reply(text=ANSWER)]


@dataclass
class Host:
    fake: FakeOpenAI
    env: dict[str, str]
    home: Path  # HERMES_HOME
    project: Path
    xshare_home: Path

    @property
    def database(self) -> Path:
        return self.home / "state.db"

    def hermes(self, *arguments: str, timeout: float = 180) -> subprocess.CompletedProcess:
        return subprocess.run([str(HERMES), *arguments], env=self.env, cwd=self.project, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=timeout)

    def xshare(self, *arguments: str) -> subprocess.CompletedProcess:
        found = subprocess.run([sys.executable, "-m", "xshare", *arguments], env=self.env, capture_output=True,
                               text=True, timeout=120)
        assert found.returncode == 0, found.stderr
        return found


@pytest.fixture
def host(tmp_path: Path):
    """Temporary HOME and HERMES_HOME, config.yaml pointing at the fake server, the plugin enabled."""
    home, hermes_home, project = tmp_path / "user", tmp_path / "hermes-home", tmp_path / "project"
    for folder in (home, hermes_home, project):
        folder.mkdir()
    (project / "app.py").write_text("def main():\n    return 42\n")
    (project / "notes.txt").write_text("alpha\nbeta\n")
    env = {"PATH": f"{VENV}/bin:/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "HERMES_HOME": str(hermes_home),
           "XSHARE_HOME": str(tmp_path / "xshare-home"), "TIKTOKEN_CACHE_DIR": str(tmp_path / "tiktoken"),
           "LANG": "C.UTF-8", "TERM": "xterm-256color", "XSHARE_NO_BACKGROUND": "1"}
    with FakeOpenAI(script(), lifetime=400, max_requests=200) as fake:
        (hermes_home / "config.yaml").write_text(
            "model:\n  provider: custom\n  default: fake-model\n"
            f"  base_url: {fake.base_url}\n  api_key: not-a-real-key\n")
        found = Host(fake, env, hermes_home, project, tmp_path / "xshare-home")
        enabled = found.hermes("plugins", "enable", "xshare", timeout=120)  # stdin /dev/null: no tool override
        assert enabled.returncode == 0, enabled.stderr
        listed = found.hermes("plugins", "list", "--plain", "--no-bundled", timeout=120)
        assert "xshare" in listed.stdout
        yield found


def stored(database: Path) -> tuple[list[dict], list[dict]]:
    """The sessions rows and session_model_usage rows Hermes wrote, read-only."""
    connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    connection.row_factory = sqlite3.Row
    try:
        sessions = [dict(row) for row in connection.execute("SELECT * FROM sessions")]
        usage = [dict(row) for row in connection.execute("SELECT * FROM session_model_usage")]
    finally:
        connection.close()
    return sessions, usage


def wait_for_title(host: Host, timeout: float = 30) -> int:
    """Hermes generates the title on a background thread after the turn, and a one-shot process may end
    before it lands: wait until state.db records the title call the server answered, or the time is up.
    Returns the title calls state.db records (the certain figure)."""
    deadline = time.monotonic() + timeout
    while True:
        recorded = sum(row["api_call_count"] for row in stored(host.database)[1] if row["task"] == "title_generation")
        if (recorded and recorded >= host.fake.totals("title")["calls"]) or time.monotonic() > deadline:
            return recorded
        time.sleep(0.5)


def check_against_the_bill(host: Host, session_id: str, source: str) -> dict:
    """state.db, `xshare report`, `xshare session` against the server's log; returns the report's row."""
    recorded_titles = wait_for_title(host)
    main, title = host.fake.totals("main"), host.fake.totals("title")
    assert main["calls"] == 3 and title["calls"] <= 1, host.fake.requests
    assert recorded_titles <= title["calls"]  # never a title state.db has and the server never billed
    if not recorded_titles:  # the process ended before its title landed: only the main loop is certain
        title = {"calls": 0, "prompt_tokens": 0}
    sessions, usage = stored(host.database)
    assert [row["id"] for row in sessions] == [session_id]
    session = sessions[0]
    assert session["source"] == source
    # the sessions row is the main loop, as billed (input_tokens holds only the uncached part)
    assert session["input_tokens"] + session["cache_read_tokens"] + session["cache_write_tokens"] == \
        main["prompt_tokens"]
    assert session["cache_read_tokens"] == main["cached_tokens"] and session["output_tokens"] == \
        main["completion_tokens"]
    assert session["api_call_count"] == main["calls"]
    titles = [row for row in usage if row["task"] == "title_generation"]
    assert len(titles) == title["calls"] and sum(row["input_tokens"] for row in titles) == title["prompt_tokens"]

    rows_file = host.xshare_home.parent / f"rows-{session_id}.jsonl"
    report = json.loads(host.xshare("report", "--hermes-db", str(host.database), "--all", "--json",
                                    "--rows", str(rows_file)).stdout)
    assert set(report["groups"]) == {"hermes/interactive"}  # `tui` too: a person at the keyboard
    group = report["groups"]["hermes/interactive"]
    assert group["api_calls"] == main["calls"] + title["calls"]
    assert group["prompt_tokens_billed"] == main["prompt_tokens"] + title["prompt_tokens"]
    assert group["unrecorded_calls"] == title["calls"] and group["unrecorded_prompt_tokens"] == title["prompt_tokens"]
    assert group["billed_tokens"]["exploration"] > 0  # the read_file and the `cat`
    (row,) = [json.loads(line) for line in rows_file.read_text().splitlines()]
    assert row.pop("machine")  # the rows file's anonymous machine id, not part of a session's row
    assert row["unrecorded_tasks"] == ({"title_generation": 1} if title["calls"] else {})
    alone = json.loads(host.xshare("session", session_id, "--hermes-db", str(host.database), "--json").stdout)
    assert alone == row
    return row


def test_one_shot_session_matches_the_bill(host: Host) -> None:
    ran = host.hermes("chat", "-q", QUESTION, "--yolo")
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert ANSWER in ran.stdout
    found = re.search(r"Session:\s+(\S+)", ran.stdout)
    assert found, ran.stdout[-2000:]
    session_id = found.group(1)
    assert not [entry for entry in host.fake.requests if entry["method"] == "POST" and
                entry["path"] != "/v1/chat/completions" and "prompt_tokens" in entry]
    row = check_against_the_bill(host, session_id, "cli")
    # the plugin's live figures (written at the end of each turn): the main loop, as billed
    live = json.loads(next((host.xshare_home / "hermes" / "live").glob("*.json")).read_text())
    main = host.fake.totals("main")
    assert live["session_id"] == session_id and live["platform"] == "cli"
    assert live["calls"] == main["calls"] and live["prompt_tokens"] == main["prompt_tokens"]
    assert live["prompt_tokens"] == row["prompt_tokens_billed"] - row["unrecorded_prompt_tokens"]


# --- the TUI in tmux -----------------------------------------------------------------------------------


class Pane:
    """A tmux server of its own (its own socket), one 160x45 window running the command."""

    def __init__(self, command: str, name: str) -> None:
        self.socket = name
        self._tmux("new-session", "-d", "-s", name, "-x", "160", "-y", "45", command)

    def _tmux(self, *arguments: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *arguments], capture_output=True, text=True,
                              timeout=30).stdout

    def text(self) -> str:
        return self._tmux("capture-pane", "-p", "-J", "-t", self.socket)

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", self.socket, "-l", text)
        time.sleep(0.5)
        self._tmux("send-keys", "-t", self.socket, "Enter")

    def key(self, key: str) -> None:
        self._tmux("send-keys", "-t", self.socket, key)

    def wait_for(self, pattern: str, timeout: float = 90) -> re.Match:
        deadline = time.monotonic() + timeout
        while True:
            found = re.search(pattern, self.text())
            if found:
                return found
            if time.monotonic() > deadline:
                raise AssertionError(f"{pattern!r} did not appear; the pane shows:\n{self.text()}")
            time.sleep(0.5)

    def running(self) -> bool:
        return subprocess.run(["tmux", "-L", self.socket, "has-session", "-t", self.socket],
                              capture_output=True, timeout=30).returncode == 0

    def quit(self, timeout: float = 60) -> None:
        """/quit, then wait for Hermes to end (its last writes land before the session is measured)."""
        if self.pane_is_paging():
            self.key("Escape")
            time.sleep(0.5)
        self.type("/quit")
        deadline = time.monotonic() + timeout
        while self.running():
            assert time.monotonic() < deadline, f"Hermes did not exit after /quit:\n{self.text()}"
            time.sleep(0.5)

    def pane_is_paging(self) -> bool:
        return "Esc/q close" in self.text()  # the TUI shows long command output in a pager

    def close(self) -> None:
        self._tmux("kill-server")


def figure(text: str) -> int:
    return int(text.replace(",", ""))


# (flag for `hermes chat`, the source Hermes stores, what the screen shows once it takes input)
INTERACTIVE_MODES = {"tui": ("--tui", "tui", r"ready │"), "classic": (None, "cli", r"Type your message")}


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
@pytest.mark.parametrize("mode", sorted(INTERACTIVE_MODES))
def test_interactive_session_and_slash_command_match_the_bill(host: Host, mode: str) -> None:
    flag, source, ready = INTERACTIVE_MODES[mode]
    exports = " ".join(f"{name}={shlex.quote(value)}" for name, value in host.env.items())
    command = (f"cd {shlex.quote(str(host.project))} && exec env -i {exports} {shlex.quote(str(HERMES))} "
               f"chat {flag or ''} --yolo")
    pane = Pane(command, f"xshare-e2e-{os.getpid()}-{mode}")
    try:
        pane.wait_for(ready, timeout=120)
        # before the first message Hermes already shows a session (the classic banner prints its id), and
        # /xshare must name it although the agent, and HERMES_SESSION_ID, only start with the first message
        pane.type("/xshare")
        before = pane.wait_for(r"xshare: (nothing recorded in state\.db yet for session (\S+?)\.|no session is active)")
        assert before.group(2), f"/xshare before the first message: {before.group(0)}"
        session_id = before.group(2)
        if mode == "classic":
            assert pane.wait_for(r"Session: (\S+)").group(1) == session_id
        pane.type(QUESTION)
        pane.wait_for(re.escape(ANSWER))
        deadline = time.monotonic() + 60
        # the title is generated on a thread after the turn, and its usage written after the reply
        while not any(row["task"] == "title_generation" for row in stored(host.database)[1]):
            assert time.monotonic() < deadline, "Hermes recorded no title_generation usage"
            time.sleep(0.5)
        pane.type("/xshare")
        pane.wait_for(r"Seen live by the plugin: [\d,]+ main-loop calls, [\d,]+ prompt tokens")
        shown = pane.text()
        pane.quit()
    finally:
        pane.close()
    row = check_against_the_bill(host, session_id, source)
    main, title = host.fake.totals("main"), host.fake.totals("title")
    assert f"xshare: session {session_id} (interactive)" in shown
    calls, billed = re.search(r"API calls: ([\d,]+); prompt tokens billed: ([\d,]+)", shown).groups()
    assert figure(calls) == row["api_calls"] == main["calls"] + title["calls"]
    assert figure(billed) == row["prompt_tokens_billed"] == main["prompt_tokens"] + title["prompt_tokens"]
    extra = re.search(r"do not show: 1 \(title_generation 1\), ([\d,]+) prompt tokens", shown)
    assert extra and figure(extra.group(1)) == title["prompt_tokens"]
    live_calls, live_prompt = re.search(r"Seen live by the plugin: ([\d,]+) main-loop calls, ([\d,]+) prompt", shown
                                        ).groups()
    assert figure(live_calls) == main["calls"] and figure(live_prompt) == main["prompt_tokens"]
    share = re.search(r"Exploration: ([\d.]+)% of the recorded context", shown).group(1)
    assert share == f"{row['exploration_share_of_context'] * 100:.1f}"
