"""What the tests of the real OpenCode and of its fork Kilo CLI share: a host that runs the CLI offline against a
fake Chat Completions server (fake_openai.py) in folders of the test's, and the print-mode scenarios both are
checked on (tests/agents/opencode/test_realhost.py, tests/agents/kilo/test_realhost.py). A fork's host says only
what differs: its launcher, its settings and switches, where it keeps its database and how it names titles."""

from __future__ import annotations

import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path

from chat_hosts import compare_with_the_wire, make_project, tool, wait_until, xshare_rows
from chat_wire import ChatWire
from fake_openai import FakeOpenAI, Reply

from xshare.agents.common import unseen

MODELS = ("fake-model", "other-model")


class ForkHost:
    agent = ""  # the agent's id in xshare's rows and the database's folder and name (<agent>/<agent>.db)
    launcher = ""

    def __init__(self, tmp_path: Path, replies: list[Reply]) -> None:
        self.tmp = tmp_path
        self.project = make_project(tmp_path / "project")
        self.data = tmp_path / "data"
        self.fake = FakeOpenAI(replies, lifetime=600, max_requests=300, wire=ChatWire(self.agent)).start()
        models = {name: {"name": name, "tool_call": True, "limit": {"context": 200000, "output": 8000}}
                  for name in MODELS}
        config = {"model": f"fake/{MODELS[0]}", "autoupdate": False, "share": "disabled",
                  "permission": {"edit": "allow", "bash": "allow", "webfetch": "allow"},
                  "provider": {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "Fake", "models": models,
                                        "options": {"baseURL": self.fake.base_url, "apiKey": "not-a-real-key"}}}}
        home = tmp_path / "home"
        home.mkdir(exist_ok=True)
        self.env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8",
                    "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(self.data),
                    "XDG_STATE_HOME": str(tmp_path / "state"), "XDG_CACHE_HOME": str(tmp_path / "cache"),
                    **self.configured(config), "XSHARE_HOME": str(tmp_path / "xshare-home")}

    def configured(self, config: dict) -> dict[str, str]:
        """The fork's config put where it reads it, and the variables that keep it offline."""
        raise NotImplementedError

    def titles_named(self, rows: list[dict]) -> None:
        """The title requests (no tools, recorded nowhere) named in the rows, none counted."""
        raise NotImplementedError

    def continued_titles(self, titles: int) -> bool:
        """Whether a session run and then continued sent this many title requests (it is never named again)."""
        raise NotImplementedError

    @property
    def database(self) -> Path:
        return self.data / self.agent / f"{self.agent}.db"

    def run(self, prompt: str, *extra: str) -> None:
        ran = subprocess.run([self.launcher, "run", "--auto", *extra, prompt], env=self.env, cwd=self.project,
                             stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
        assert ran.returncode == 0, ran.stderr[-3000:]

    def steps(self) -> int:
        """step-finish parts in the database, read-only (WAL: what the CLI committed)."""
        connection = sqlite3.connect(f"file:{self.database}?mode=ro", uri=True)
        try:
            return connection.execute("SELECT count(*) FROM part WHERE data LIKE '%\"step-finish\"%'").fetchone()[0]
        finally:
            connection.close()

    def settled_rows(self) -> list[dict]:
        """xshare's rows once every call the server answered is in the database (never an exit's race)."""
        assert wait_until(lambda: self.steps() >= len(self.fake.billed("main"))), "steps never reached the server's"
        rows, stderr = xshare_rows(self.env, self.tmp, f"--{self.agent}-db", str(self.database))
        assert "unknown" not in stderr and "could not" not in stderr and "not a JSON" not in stderr, stderr
        return [row for row in rows if row["agent"] == self.agent]

    def titles_of(self, rows: list[dict]) -> int:
        return sum(unseen.counts(row.get(unseen.FIELD)).get(f"{self.agent}_title", 0) for row in rows)


def reads_searches_and_edits(make: Callable[[Path, list[Reply]], ForkHost], tmp_path: Path) -> None:
    replies = [tool("read", filePath="app.py"), tool("grep", pattern="helper_1", path="src"),
               tool("bash", command="grep -n gamma notes.txt", description="find gamma"),
               tool("bash", command="ls -la src && wc -l src/lib.py", description="list"),
               tool("edit", filePath="app.py", oldString="return 42", newString="return 43"),
               tool("bash", command="touch done.flag", description="mark"), Reply(text="Edited app.py.")]
    host = make(tmp_path, replies)
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


def another_model_with_a_subagent(make: Callable[[Path, list[Reply]], ForkHost], tmp_path: Path) -> None:
    replies = [tool("task", description="Read the notes", prompt="Read notes.txt and report its lines.",
                    subagent_type="general"),
               tool("read", filePath="notes.txt"), Reply(text="Three lines: alpha, beta, gamma."),  # the child
               tool("read", filePath="src/lib.py"), Reply(text="The notes have three lines.")]
    host = make(tmp_path, replies)
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


def a_continued_session(make: Callable[[Path, list[Reply]], ForkHost], tmp_path: Path) -> None:
    replies = [tool("read", filePath="notes.txt"), Reply(text="Three lines."),
               tool("bash", command="grep -c helper src/lib.py", description="count"), Reply(text="40 helpers.")]
    host = make(tmp_path, replies)
    try:
        host.run("What is in notes.txt?")
        assert wait_until(lambda: host.steps() == 2)
        host.run("And how many helpers are in src/lib.py?", "--continue")
        rows = host.settled_rows()
        assert len(rows) == 1 and rows[0]["api_calls"] == 4  # one session, both turns
        compare_with_the_wire(rows, host.fake)
        host.titles_named(rows)
        assert host.continued_titles(len(host.fake.billed("title")))  # a continued session is not named again
    finally:
        host.fake.stop()
