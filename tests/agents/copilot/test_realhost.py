"""The real GitHub Copilot CLI 1.0.102 (`@github/copilot` with `@github/copilot-linux-x64`, pinned in .ci/run),
offline (`COPILOT_OFFLINE`, its BYOK provider `COPILOT_PROVIDER_BASE_URL`) against a fake Chat Completions server
(tests/support/fake_openai.py) that bills every request its exact o200k count and counts its exploration tokens
itself (tests/support/chat_wire.py).

Scenarios, in print mode (`copilot -p --allow-all-tools`): reading (view), searching (grep, glob), read-only
shell commands and an edit; a `task` subagent that reads (its calls in the parent's events file); a
`--resume=<id>` turn appended to the first session; and a `--continue` turn through its Anthropic provider
type (fake_anthropic.py), whose cache reads and writes it folds into `inputTokens`; `/compact` (`-p "/compact"
--continue`), whose summary request only its compaction event records; and the TUI (`copilot` in
tmux, `COPILOT_ALLOW_ALL`: a prompt typed in, a read and a shell read, `/exit`). Each compares xshare's
calls, billed prompt, cache reads and output with the server's log, and the exploration share with what the
requests carried. Every request the server answered is in the events file (no title or router request), so
no unrecorded call is named. Needs $XSHARE_TEST_COPILOT (the `copilot` launcher .ci/run installs); skips without
it (the TUI test also without tmux).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from chat_hosts import compare_with_the_wire, make_project, tool, wait_until, xshare_rows
from chat_wire import ChatWire
from fake_anthropic import FakeAnthropic
from fake_openai import FakeOpenAI, Reply

from xshare.agents.common import unseen

COPILOT = os.environ.get("XSHARE_TEST_COPILOT", "")
SKIP = None if COPILOT and Path(COPILOT).is_file() else \
    "XSHARE_TEST_COPILOT does not name a copilot launcher (.ci/run installs @github/copilot 1.0.102)"
pytestmark = [pytest.mark.realhost, pytest.mark.skipif(SKIP is not None, reason=SKIP or "")]
MODEL = "fake-model"


class Host:
    def __init__(self, tmp_path: Path, replies: list[Reply]) -> None:
        self.tmp = tmp_path
        self.project = make_project(tmp_path / "project")
        self.fake = FakeOpenAI(replies, lifetime=600, max_requests=300, wire=ChatWire("copilot")).start()
        self.home = tmp_path / "home"
        self.home.mkdir(exist_ok=True)
        self.env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(self.home), "LANG": "C.UTF-8",
                    "COPILOT_OFFLINE": "true", "COPILOT_PROVIDER_BASE_URL": self.fake.base_url,
                    "COPILOT_PROVIDER_TYPE": "openai", "COPILOT_PROVIDER_API_KEY": "not-a-real-key",
                    "COPILOT_MODEL": MODEL, "COPILOT_AUTO_UPDATE": "false",
                    "XSHARE_HOME": str(tmp_path / "xshare-home")}

    @property
    def copilot_home(self) -> Path:
        return self.home / ".copilot"

    def run(self, prompt: str, *extra: str) -> None:
        ran = subprocess.run([COPILOT, "-p", prompt, "--allow-all-tools", "--disable-client-telemetry", *extra],
                             env=self.env, cwd=self.project, stdin=subprocess.DEVNULL, capture_output=True,
                             text=True, timeout=300)
        assert ran.returncode == 0, ran.stderr[-3000:]

    def records(self) -> int:
        return sum(path.read_text().count('"type":"session.usage_record"')
                   for path in self.copilot_home.glob("session-state/*/events.jsonl"))

    def settled_rows(self) -> list[dict]:
        """xshare's rows once every call the server answered is in an events file (never an exit's race)."""
        assert wait_until(lambda: self.records() >= len(self.fake.billed("main"))), "records never reached the server's"
        rows, stderr = xshare_rows(self.env, self.tmp, "--copilot-home", str(self.copilot_home))
        assert "unknown" not in stderr and "could not" not in stderr and "Copilot" not in stderr, stderr
        rows = [row for row in rows if row["agent"] == "copilot"]
        assert not any(unseen.counts(row.get(unseen.FIELD)) for row in rows)
        return rows


def test_reads_searches_shell_and_an_edit(tmp_path: Path) -> None:
    project = tmp_path / "project"
    replies = [tool("view", path=str(project / "app.py")), tool("grep", pattern="helper_1", paths=str(project / "src")),
               tool("glob", pattern="**/*.py"),
               tool("bash", command="grep -n gamma notes.txt", description="find gamma"),
               tool("bash", command="ls -la src && wc -l src/lib.py", description="list"),
               tool("edit", path=str(project / "app.py"), old_str="return 42", new_str="return 43"),
               Reply(text="Edited app.py.")]
    host = Host(tmp_path, replies)
    try:
        host.run("Look around, then make main return 43.")
        rows = host.settled_rows()
        assert len(rows) == 1 and rows[0]["model"] == MODEL
        figures = compare_with_the_wire(rows, host.fake)
        assert figures["calls"] == len(replies) and rows[0]["billed_tokens"]["edit"] > 0
        assert (project / "app.py").read_text().count("return 43") == 1
    finally:
        host.fake.stop()


def test_a_task_subagent_reads_in_the_parents_file(tmp_path: Path) -> None:
    project = tmp_path / "project"
    task = {"description": "Read the notes", "prompt": "Read notes.txt and report its lines.",
            "agent_type": "explore", "name": "reader"}
    replies = [Reply(tool_calls=[("task", task)]),
               tool("view", path=str(project / "notes.txt")), Reply(text="Three lines: alpha, beta, gamma."),
               tool("view", path=str(project / "src" / "lib.py")), Reply(text="The notes have three lines.")]
    host = Host(tmp_path, replies)
    try:
        host.run("Have a subagent read the notes, then read the library.")
        rows = host.settled_rows()
        assert len(rows) == 1  # one session: the subagent is a thread of it
        figures = compare_with_the_wire(rows, host.fake)
        assert figures["calls"] == len(replies)
    finally:
        host.fake.stop()


def test_a_resume_appends_to_the_same_session(tmp_path: Path) -> None:
    project = tmp_path / "project"
    replies = [tool("view", path=str(project / "notes.txt")), Reply(text="alpha, beta, gamma."),
               tool("bash", command="cat app.py", description="read app"), Reply(text="main returns 42.")]
    host = Host(tmp_path, replies)
    try:
        host.run("Read the notes.")
        first = host.settled_rows()
        assert len(first) == 1
        host.run("Now read app.py.", f"--resume={first[0]['id']}")
        rows = host.settled_rows()
        assert [row["id"] for row in rows] == [first[0]["id"]]
        figures = compare_with_the_wire(rows, host.fake)
        assert figures["calls"] == len(replies)
    finally:
        host.fake.stop()


def test_compact_is_a_call_only_its_compaction_event_records(tmp_path: Path) -> None:
    replies = [tool("view", path=str(tmp_path / "project" / "notes.txt")), Reply(text="alpha, beta, gamma."),
               Reply(text="<summary>The notes were read: three lines.</summary>")]
    host = Host(tmp_path, replies)
    try:
        host.run("Read the notes.")
        host.run("/compact", "--continue")
        assert wait_until(lambda: len(host.fake.billed("main")) == len(replies))
        rows, stderr = xshare_rows(host.env, host.tmp, "--copilot-home", str(host.copilot_home))
        rows = [row for row in rows if row["agent"] == "copilot"]
        assert len(rows) == 1 and rows[0]["compactions"] == 1 and "Copilot" not in stderr, stderr
        figures = compare_with_the_wire(rows, host.fake)
        assert figures["calls"] == len(replies) == host.records() + 1  # the summary request: no usage record
    finally:
        host.fake.stop()


def test_the_anthropic_provider_folds_cache_reads_and_writes_into_the_prompt(tmp_path: Path) -> None:
    host = Host(tmp_path, [])
    host.fake.stop()
    anthropic = FakeAnthropic(lifetime=600).start()
    host.env.update(COPILOT_PROVIDER_TYPE="anthropic", COPILOT_PROVIDER_BASE_URL=anthropic.url,
                    COPILOT_MODEL="claude-sonnet-4.5")
    try:
        host.run("Say hello.")
        host.run("Once more.", "--continue")
        assert wait_until(lambda: host.records() >= len(anthropic.requests) == 2)
        rows, stderr = xshare_rows(host.env, host.tmp, "--copilot-home", str(host.copilot_home))
        rows = [row for row in rows if row["agent"] == "copilot"]
        assert len(rows) == 1 and "Copilot" not in stderr, stderr
        usages = [request.usage for request in anthropic.requests]
        assert rows[0]["api_calls"] == 2
        assert rows[0]["prompt_tokens_billed"] == sum(usage["input_tokens"] + usage["cache_read_input_tokens"]
                                                      + usage["cache_creation_input_tokens"] for usage in usages)
        assert rows[0]["usage"]["cache_read"] == sum(usage["cache_read_input_tokens"] for usage in usages) > 0
        assert rows[0]["usage"]["cache_write_5m"] == sum(usage["cache_creation_input_tokens"] for usage in usages)
        assert rows[0]["usage"]["output"] == sum(usage["output_tokens"] for usage in usages)
    finally:
        anthropic.stop()


@pytest.mark.skipif(shutil.which("tmux") is None, reason="the TUI test needs tmux")
def test_the_tui(tmp_path: Path) -> None:
    replies = [tool("view", path=str(tmp_path / "project" / "notes.txt")),
               tool("bash", command="head -3 src/lib.py", description="peek"), Reply(text="Three lines; helpers.")]
    host = Host(tmp_path, replies)
    name = f"xshare-copilot-{os.getpid()}-{tmp_path.name}"
    env = {**host.env, "TERM": "xterm-256color", "COPILOT_ALLOW_ALL": "true"}
    command = (f"cd {shlex.quote(str(host.project))} && env -i "
               + " ".join(f"{key}={shlex.quote(value)}" for key, value in env.items()) + f" {shlex.quote(COPILOT)}")
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "160", "-y", "45", command], check=True)
    try:
        screen = lambda: subprocess.run(["tmux", "capture-pane", "-p", "-t", name], capture_output=True,  # noqa: E731
                                        text=True).stdout
        assert wait_until(lambda: "/ commands" in screen(), timeout=90), screen()
        subprocess.run(["tmux", "send-keys", "-t", name, "-l", "What is in notes.txt and src/lib.py?"], check=True)
        assert wait_until(lambda: "notes.txt and src/lib.py?" in screen(), timeout=30), screen()
        subprocess.run(["tmux", "send-keys", "-t", name, "Enter"], check=True)
        assert wait_until(lambda: len(host.fake.billed("main")) == len(replies) == host.records(), timeout=120), (
            screen(), host.fake.billed("main"))
        subprocess.run(["tmux", "send-keys", "-t", name, "-l", "/exit"], check=True)
        assert wait_until(lambda: "/exit" in screen(), timeout=30), screen()
        subprocess.run(["tmux", "send-keys", "-t", name, "Enter"], check=True)
        gone = lambda: subprocess.run(["tmux", "has-session", "-t", name], capture_output=True).returncode != 0  # noqa: E731
        assert wait_until(gone, timeout=120), screen()
        rows = host.settled_rows()
        assert len(rows) == 1 and rows[0]["source"] == "interactive" and rows[0]["api_calls"] == len(replies)
        compare_with_the_wire(rows, host.fake)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
        host.fake.stop()
