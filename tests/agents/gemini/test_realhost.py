"""The real Gemini CLI (0.61.0), end to end, against a fake Gemini API (tests/support/fake_gemini.py) that bills each
request its exact o200k count and counts its exploration tokens itself, from the request alone.

Scenarios: `gemini -p` with the model on auto (its default: a router request picks the model before each
prompt, recorded nowhere) and with `-m gemini-2.5-pro` (no router), each reading, searching, listing,
editing and touching a file; `--resume` within the same minute (0.61 appends the history again without
its bills) and in a later minute (0.61 writes a stub file with the same session id). Each compares
xshare's calls, billed prompt, cache reads and output with the server's log of the streamed requests, and
both exploration shares with what the requests carried. Needs $XSHARE_TEST_GEMINI (the `gemini`
executable; .ci/run installs it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from fake_gemini import FakeGemini, Reply, tool

GEMINI = os.environ.get("XSHARE_TEST_GEMINI")
SKIP = None if GEMINI and os.access(GEMINI, os.X_OK) else \
    "XSHARE_TEST_GEMINI does not name a gemini executable (.ci/run installs @google/gemini-cli 0.61.0)"
pytestmark = [pytest.mark.realhost, pytest.mark.skipif(SKIP is not None, reason=SKIP or "")]
TOLERANCE = 0.001  # 0.1 percentage point
FILES = {"notes.txt": "alpha\nbeta\ngamma: the third letter\n",
         "app.py": "def main():\n    return 42\n\n\nif __name__ == '__main__':\n    print(main())\n",
         "src/lib.py": "".join(f"def helper_{index}(value):\n    return value * {index}\n\n" for index in range(30))}


def six_steps(project: Path) -> list[Reply]:
    return [tool("read_file", file_path="notes.txt"), tool("grep_search", pattern="helper_1"),
            tool("run_shell_command", command="ls -la src"),
            tool("replace", file_path=str(project / "app.py"), old_string="return 42", new_string="return 43",
                 instruction="Make main return 43."),
            tool("run_shell_command", command="touch done.flag"), Reply(text="app.py now returns 43.")]


@dataclass
class Host:
    fake: FakeGemini
    env: dict[str, str]
    home: Path  # the user's home, holding .gemini
    project: Path

    def gemini(self, prompt: str, *extra: str) -> None:
        found = subprocess.run([GEMINI, "--yolo", "-p", prompt, *extra], env=self.env, cwd=self.project,
                               stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
        assert found.returncode == 0, found.stderr[-3000:]

    def chats(self) -> list[Path]:
        return sorted((self.home / ".gemini" / "tmp").glob("*/chats/session-*.jsonl"))

    def xshare(self, *arguments: str) -> dict:
        found = subprocess.run([sys.executable, "-m", "xshare", *arguments, "--gemini-home",
                                str(self.home / ".gemini"), "--json"],
                               env=self.env, capture_output=True, text=True, timeout=120)
        assert found.returncode == 0, found.stderr
        return json.loads(found.stdout)


def make_host(tmp_path: Path, replies) -> Host:
    home, project = tmp_path / "user", tmp_path / "project"
    (home / ".gemini").mkdir(parents=True)
    for name, text in FILES.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    (home / ".gemini" / "settings.json").write_text(json.dumps({
        "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        "security": {"folderTrust": {"enabled": False}, "auth": {"selectedType": "gemini-api-key"}}}))
    fake = FakeGemini(replies(project) if callable(replies) else replies, lifetime=600, max_requests=200).start()
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "GOOGLE_GEMINI_BASE_URL": fake.base_url,
           "GEMINI_API_KEY": "not-a-real-key", "XSHARE_HOME": str(tmp_path / "xshare-home"), "LANG": "C.UTF-8"}
    return Host(fake, env, home, project)


def recorded_calls(host: Host) -> int:
    """The billed responses the chat files hold so far (the last record of a message id wins)."""
    billed = {}
    for path in host.chats():
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if record.get("type") == "gemini" and isinstance(record.get("tokens"), dict):
                billed[record["id"]] = True
    return len(billed)


def wait_for(predicate, timeout: float = 60, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.3)


def session_id(host: Host) -> str:
    return json.loads(host.chats()[0].read_text().splitlines()[0])["sessionId"]


def compare_with_the_wire(host: Host, prompts: int) -> dict:
    main = host.fake.billed("main")
    wait_for(lambda: recorded_calls(host) == len(main), what="the chat to record every response")
    found = host.xshare("session", session_id(host))
    assert found["api_calls"] == len(main)
    bill = sum(entry["prompt_tokens"] for entry in main)
    assert found["prompt_tokens_billed"] == bill
    assert found["usage"]["cache_read"] == sum(entry["cached_tokens"] for entry in main)
    assert found["usage"]["output"] == sum(entry["output_tokens"] for entry in main)
    for category in ("exploration", "edit", "shell"):
        wire = sum(entry["wire"][category] for entry in main) / bill
        assert abs(found["billed_tokens"][category] / bill - wire) <= TOLERANCE, (category, found, wire)
    wire_share = sum(entry["wire"]["exploration"] for entry in main) / bill
    assert abs(found["exploration_share_of_context"] - wire_share) <= TOLERANCE, (found, wire_share)
    assert abs(found["exploration_share_of_prompt"] - wire_share) <= TOLERANCE, (found, wire_share)
    assert found["billed_tokens"]["exploration"] > 0 and found["first_time_tokens"]["injected"] > 0
    # the router's requests are billed and recorded nowhere: named (at most one a prompt), not counted
    assert len(host.fake.billed("router")) <= prompts
    assert found["unseen_calls"] == {"gemini_router": prompts}
    report = host.xshare("report", "--all")
    assert report["groups"]["gemini/interactive"]["sessions"] == 1
    assert report["groups"]["gemini/interactive"]["api_calls"] == len(main)
    return found


@pytest.mark.parametrize("model", [None, "gemini-2.5-pro"], ids=["auto", "gemini-2.5-pro"])
def test_one_prompt_matches_the_wire(tmp_path: Path, model: str | None) -> None:
    host = make_host(tmp_path, six_steps)
    try:
        host.gemini("Look at the project, then make main return 43.", *(["-m", model] if model else []))
        found = compare_with_the_wire(host, prompts=1)
        assert len(host.fake.billed("main")) == 6
        assert found["billed_tokens"]["edit"] > 0 and found["billed_tokens"]["shell"] > 0
        assert len(host.fake.billed("router")) == (1 if model is None else 0)
        if model:
            assert found["model"] == model
    finally:
        host.fake.stop()


def minute_second() -> int:
    return time.gmtime().tm_sec


@pytest.mark.parametrize("later", [False, True], ids=["same-minute", "later-minute"])
def test_a_resumed_session_is_one_session_with_every_call(tmp_path: Path, later: bool) -> None:
    host = make_host(tmp_path, lambda project: six_steps(project) + six_steps(project))
    try:
        if not later:
            wait_for(lambda: minute_second() < 30, 40, "the start of a minute")  # both runs in one minute
        host.gemini("Look at the project, then make main return 43.")
        first_minute = time.gmtime().tm_min
        if later:
            wait_for(lambda: time.gmtime().tm_min != first_minute, 70, "the next minute")
        host.gemini("Look again.", "--resume", "latest")
        assert len(host.fake.billed("main")) == 12
        assert len(host.chats()) == (2 if later else 1)  # the later minute's stub file holds no call
        compare_with_the_wire(host, prompts=2)
    finally:
        host.fake.stop()
