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
import sqlite3
import subprocess
from pathlib import Path

import pytest
from chat_hosts import compare_with_the_wire, make_project, tool, wait_until, xshare_rows
from chat_wire import ChatWire
from fake_openai import FakeOpenAI, Reply

from xshare.agents.common import unseen

KILO = os.environ.get("XSHARE_TEST_KILO", "")
SKIP = None if KILO and Path(KILO).is_file() else \
    "XSHARE_TEST_KILO does not name a kilo launcher (.ci/run installs @kilocode/cli 7.7.7)"
pytestmark = [pytest.mark.realhost, pytest.mark.skipif(SKIP is not None, reason=SKIP or "")]
MODELS = ("fake-model", "other-model")


class Host:
    def __init__(self, tmp_path: Path, replies: list[Reply]) -> None:
        self.tmp = tmp_path
        self.project = make_project(tmp_path / "project")
        self.data = tmp_path / "data"
        self.fake = FakeOpenAI(replies, lifetime=600, max_requests=300, wire=ChatWire("kilo")).start()
        models = {name: {"name": name, "tool_call": True, "limit": {"context": 200000, "output": 8000}}
                  for name in MODELS}
        config = {"model": f"fake/{MODELS[0]}", "autoupdate": False, "share": "disabled",
                  "permission": {"edit": "allow", "bash": "allow", "webfetch": "allow"},
                  "provider": {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "Fake", "models": models,
                                        "options": {"baseURL": self.fake.base_url, "apiKey": "not-a-real-key"}}}}
        home = tmp_path / "home"
        home.mkdir(exist_ok=True)
        # KILO_CONFIG_CONTENT: the whole config, so nothing of the machine's user is read
        self.env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8",
                    "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(self.data),
                    "XDG_STATE_HOME": str(tmp_path / "state"), "XDG_CACHE_HOME": str(tmp_path / "cache"),
                    "KILO_CONFIG_CONTENT": json.dumps(config), "KILO_AUTH_CONTENT": "{}",
                    "KILO_DISABLE_AUTOUPDATE": "1", "KILO_DISABLE_MODELS_FETCH": "1",
                    "KILO_DISABLE_LSP_DOWNLOAD": "1", "KILO_DISABLE_DEFAULT_PLUGINS": "1",
                    "XSHARE_HOME": str(tmp_path / "xshare-home")}

    @property
    def database(self) -> Path:
        return self.data / "kilo" / "kilo.db"

    def run(self, prompt: str, *extra: str) -> None:
        ran = subprocess.run([KILO, "run", "--auto", *extra, prompt], env=self.env, cwd=self.project,
                             stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
        assert ran.returncode == 0, ran.stderr[-3000:]

    def steps(self) -> int:
        """step-finish parts in the database, read-only (WAL: what Kilo committed)."""
        connection = sqlite3.connect(f"file:{self.database}?mode=ro", uri=True)
        try:
            return connection.execute("SELECT count(*) FROM part WHERE data LIKE '%\"step-finish\"%'").fetchone()[0]
        finally:
            connection.close()

    def settled_rows(self) -> list[dict]:
        """xshare's rows once every call the server answered is in the database (never an exit's race)."""
        assert wait_until(lambda: self.steps() >= len(self.fake.billed("main"))), "steps never reached the server's"
        rows, stderr = xshare_rows(self.env, self.tmp, "--kilo-db", str(self.database))
        assert "unknown" not in stderr and "could not" not in stderr and "not a JSON" not in stderr, stderr
        return [row for row in rows if row["agent"] == "kilo"]

    def titles_named(self, rows: list[dict]) -> None:
        """Up to one title request is named for each top-level session, none counted: `kilo run` may exit
        before the request is sent, or after it is answered and before its title is stored."""
        titles = len(self.fake.billed("title"))
        named = sum(unseen.counts(row.get(unseen.FIELD)).get("kilo_title", 0) for row in rows)
        top_level = sum(1 for row in rows if row["source"] == "interactive")
        assert titles <= named == top_level, (named, titles, top_level)


def test_default_model_reads_searches_and_edits(tmp_path: Path) -> None:
    replies = [tool("read", filePath="app.py"), tool("grep", pattern="helper_1", path="src"),
               tool("bash", command="grep -n gamma notes.txt", description="find gamma"),
               tool("bash", command="ls -la src && wc -l src/lib.py", description="list"),
               tool("edit", filePath="app.py", oldString="return 42", newString="return 43"),
               tool("bash", command="touch done.flag", description="mark"), Reply(text="Edited app.py.")]
    host = Host(tmp_path, replies)
    try:
        host.run("Look around, then make main return 43.")
        rows = host.settled_rows()
        assert len(rows) == 1 and rows[0]["source"] == "interactive" and rows[0]["model"] == MODELS[0]
        figures = compare_with_the_wire(rows, host.fake)
        assert figures["calls"] == len(replies) and rows[0]["billed_tokens"]["edit"] > 0
        assert rows[0]["billed_tokens"]["shell"] > 0  # the touch
        host.titles_named(rows)
        assert (host.project / "app.py").read_text().count("return 43") == 1
    finally:
        host.fake.stop()


def test_another_model_with_a_subagent(tmp_path: Path) -> None:
    replies = [tool("task", description="Read the notes", prompt="Read notes.txt and report its lines.",
                    subagent_type="general"),
               tool("read", filePath="notes.txt"), Reply(text="Three lines: alpha, beta, gamma."),  # the child
               tool("read", filePath="src/lib.py"), Reply(text="The notes have three lines.")]
    host = Host(tmp_path, replies)
    try:
        host.run("Have a subagent read the notes.", "--model", f"fake/{MODELS[1]}")
        rows = host.settled_rows()
        by_source = {row["source"]: row for row in rows}
        assert sorted(by_source) == ["interactive", "subagent"]
        assert by_source["subagent"]["parent"] == by_source["interactive"]["id"]
        assert by_source["subagent"]["api_calls"] == 2 and by_source["interactive"]["model"] == MODELS[1]
        compare_with_the_wire(rows, host.fake)
        host.titles_named(rows)
        assert unseen.FIELD not in by_source["subagent"]
    finally:
        host.fake.stop()


def test_a_continued_session(tmp_path: Path) -> None:
    replies = [tool("read", filePath="notes.txt"), Reply(text="Three lines."),
               tool("bash", command="grep -c helper src/lib.py", description="count"), Reply(text="40 helpers.")]
    host = Host(tmp_path, replies)
    try:
        host.run("What is in notes.txt?")
        assert wait_until(lambda: host.steps() == 2)
        host.run("And how many helpers are in src/lib.py?", "--continue")
        rows = host.settled_rows()
        assert len(rows) == 1 and rows[0]["api_calls"] == 4  # one session, both turns
        compare_with_the_wire(rows, host.fake)
        host.titles_named(rows)
        assert len(host.fake.billed("title")) <= 1  # a continued session is not named again
    finally:
        host.fake.stop()


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
