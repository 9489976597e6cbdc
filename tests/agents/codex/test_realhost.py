"""The real Codex CLI (0.171.0), end to end, against a fake Responses server (tests/support/fake_responses.py) that
bills each request its exact o200k count and counts its exploration tokens itself, from the request alone.

Scenarios: `codex exec` with no model configured (0.171 picks a GPT-6 model in code mode: every action is
one `exec` call whose input is JavaScript) and with `gpt-5.5` (function calls), each reading, searching,
listing, editing and touching a file; `codex exec resume`; and the TUI in tmux, whose title thread is billed
and recorded nowhere. Each compares xshare's calls, billed prompt, cache reads and output with the server's
log, and both exploration shares with what the requests carried. Needs $XSHARE_TEST_CODEX (the `codex`
executable; .ci/run installs it); the TUI test also needs tmux.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from fake_responses import FakeResponses, Reply, code, command, patch

CODEX = os.environ.get("XSHARE_TEST_CODEX")
SKIP = None if CODEX and os.access(CODEX, os.X_OK) else \
    "XSHARE_TEST_CODEX does not name a codex executable (.ci/run installs @openai/codex 0.171.0)"
pytestmark = [pytest.mark.realhost, pytest.mark.skipif(SKIP is not None, reason=SKIP or "")]
TOLERANCE = 0.001  # 0.1 percentage point
FILES = {"notes.txt": "alpha\nbeta\ngamma: the third letter\n",
         "app.py": "def main():\n    return 42\n\n\nif __name__ == '__main__':\n    print(main())\n",
         "src/lib.py": "".join(f"def helper_{index}(value):\n    return value * {index}\n\n" for index in range(30))}
EDIT = "*** Begin Patch\n*** Update File: app.py\n@@\n-    return 42\n+    return 43\n*** End Patch\n"


def code_mode() -> list[Reply]:
    """What a GPT-6 model in code mode sends: one `exec` script per step (one of them mixing two reads)."""
    return [code('text(await tools.exec_command({cmd: "cat notes.txt"}));'),
            code('const a = await tools.exec_command({cmd: "grep -n helper_1 src/lib.py"});\n'
                 'const b = await tools.exec_command({cmd: "wc -l app.py"});\ntext(a); text(b);'),
            code('text(await tools.exec_command({cmd: "ls -la src"}));'),
            code(f'text(await tools.apply_patch({json.dumps(EDIT)}));'),
            code('text(await tools.exec_command({cmd: "touch done.flag"}));'),
            Reply(text="app.py now returns 43.")]


def function_calls() -> list[Reply]:
    return [command("cat notes.txt"), command("grep -n helper_1 src/lib.py"), command("ls -la src"),
            patch(EDIT), command("touch done.flag"), Reply(text="app.py now returns 43.")]


@dataclass
class Host:
    fake: FakeResponses
    env: dict[str, str]
    home: Path  # CODEX_HOME
    project: Path

    def codex(self, *arguments: str, timeout: float = 300) -> subprocess.CompletedProcess:
        return subprocess.run([CODEX, *arguments], env=self.env, cwd=self.project, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=timeout)

    def exec(self, prompt: str, *resume: str) -> None:
        found = self.codex("exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", *resume,
                           prompt)
        assert found.returncode == 0, found.stderr[-3000:]

    def rollouts(self) -> list[Path]:
        return sorted((self.home / "sessions").rglob("rollout-*.jsonl"))

    def xshare(self, *arguments: str) -> dict:
        found = subprocess.run([sys.executable, "-m", "xshare", *arguments, "--codex-home", str(self.home), "--json"],
                               env=self.env, capture_output=True, text=True, timeout=120)
        assert found.returncode == 0, found.stderr
        return json.loads(found.stdout)

    def stop_app_server(self) -> None:
        """The TUI leaves `codex app-server` (and its updater) running: stop them by the pids they wrote."""
        for pid_file in (self.home / "app-server-daemon").glob("*.pid"):
            try:
                pid = json.loads(pid_file.read_text()).get("pid")
                if isinstance(pid, int) and pid > 1:
                    os.kill(pid, 15)
            except (OSError, ValueError, AttributeError):
                continue


def make_host(tmp_path: Path, replies: list[Reply], model: str | None) -> Host:
    home, codex_home, project = tmp_path / "user", tmp_path / "codex-home", tmp_path / "project"
    for folder in (home, codex_home, project):
        folder.mkdir()
    for name, text in FILES.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    fake = FakeResponses(replies, lifetime=600, max_requests=200).start()
    (codex_home / "config.toml").write_text(
        # disable_paste_burst: keys typed by tmux come as fast as a paste, whose Enter would be a newline
        'model_provider = "fake"\ndisable_paste_burst = true\n' + (f'model = "{model}"\n' if model else "")
        + f'[model_providers.fake]\nname = "fake"\nbase_url = "{fake.base_url}"\nenv_key = "XSHARE_FAKE_KEY"\n'
        'wire_api = "responses"\n[analytics]\nenabled = false\n')
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "CODEX_HOME": str(codex_home),
           "XSHARE_FAKE_KEY": "not-a-real-key", "XSHARE_HOME": str(tmp_path / "xshare-home"), "LANG": "C.UTF-8",
           "TERM": "xterm-256color"}
    return Host(fake, env, codex_home, project)


def recorded_calls(path: Path) -> int:
    """The responses a rollout records so far (0.171 writes a token_usage_record per response)."""
    responses = set()
    for line in path.read_text().splitlines():
        if '"token_usage_record"' in line:
            responses.add(json.loads(line)["payload"].get("response_id"))
    return len(responses)


def wait_for(predicate, timeout: float = 60, what: str = "", shown=None) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}" + (f":\n{shown()}" if shown else "")
        time.sleep(0.3)


def compare_with_the_wire(host: Host, session_id: str) -> dict:
    """xshare's figures of one session against the server's log of its turn requests."""
    turns = host.fake.billed("turn")
    rollout = next(path for path in host.rollouts() if path.stem.endswith(session_id))
    wait_for(lambda: recorded_calls(rollout) == len(turns), what="the rollout to record every response")
    found = host.xshare("session", session_id)
    assert found["api_calls"] == len(turns)
    bill = sum(entry["prompt_tokens"] for entry in turns)
    assert found["prompt_tokens_billed"] == bill
    assert found["usage"]["cache_read"] == sum(entry["cached_tokens"] for entry in turns)
    assert found["usage"]["input"] == bill - found["usage"]["cache_read"]
    assert found["usage"]["output"] == sum(entry["output_tokens"] for entry in turns)
    for category in ("exploration", "edit", "shell"):
        wire = sum(entry["wire"][category] for entry in turns) / bill
        assert abs(found["billed_tokens"][category] / bill - wire) <= TOLERANCE, (category, found, wire)
    wire_share = sum(entry["wire"]["exploration"] for entry in turns) / bill
    assert abs(found["exploration_share_of_context"] - wire_share) <= TOLERANCE, (found, wire_share)
    assert abs(found["exploration_share_of_prompt"] - wire_share) <= TOLERANCE, (found, wire_share)
    assert found["billed_tokens"]["exploration"] > 0
    return found


def ask(keys) -> None:
    keys("-l", "What is in notes.txt?")
    time.sleep(0.5)
    keys("Enter")


def keep_the_model(screen, keys) -> bool:
    """Answers the TUI's offer of its new model, when it shows, with 'Use existing model'."""
    if "Use existing model" not in screen():
        return False
    keys("Down")
    keys("Enter")
    time.sleep(1)
    return True


def only_session(host: Host) -> str:
    rollouts = host.rollouts()
    assert len(rollouts) == 1, rollouts
    return json.loads(rollouts[0].read_text().splitlines()[0])["payload"]["id"]


@pytest.mark.parametrize("model", [None, "gpt-5.5"], ids=["default-code-mode", "gpt-5.5"])
def test_exec_matches_the_wire(tmp_path: Path, model: str | None) -> None:
    host = make_host(tmp_path, code_mode() if model is None else function_calls(), model)
    try:
        host.exec("Look at the project, then make main return 43.")
        session_id = only_session(host)
        found = compare_with_the_wire(host, session_id)
        assert len(host.fake.billed("turn")) == 6 and not host.fake.billed("title")
        assert found["source"] == "automated" and not found.get("unseen_calls")
        assert found["billed_tokens"]["edit"] > 0 and found["billed_tokens"]["shell"] > 0
        if model is None:
            assert found["model"].startswith("gpt-6") and all("exec" in json.dumps(entry["body"]["input"])
                                                               for entry in host.fake.billed("turn")[1:])
        report = host.xshare("report", "--all")
        assert report["groups"]["codex/automated"]["api_calls"] == 6
    finally:
        host.fake.stop()


def test_exec_resume_matches_the_wire(tmp_path: Path) -> None:
    first = [command("cat notes.txt"), Reply(text="notes.txt has three lines.")]
    second = [command("grep -n gamma notes.txt"), patch(EDIT), Reply(text="gamma is on line 3.")]
    host = make_host(tmp_path, [*first, *second], "gpt-5.5")
    try:
        host.exec("What is in notes.txt?")
        session_id = only_session(host)
        host.exec("Which line holds gamma?", "resume", session_id)
        assert len(host.fake.billed("turn")) == len(first) + len(second)
        compare_with_the_wire(host, session_id)
        report = host.xshare("report", "--all")
        assert report["groups"]["codex/automated"]["sessions"] == 1
    finally:
        host.fake.stop()


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_the_tui_matches_the_wire_and_names_its_title_request(tmp_path: Path) -> None:
    host = make_host(tmp_path, [command("cat notes.txt"), Reply(text="It lists alpha, beta and gamma.")], "gpt-5.5")
    session = f"xshare-codex-{os.getpid()}"
    shell = " ".join(f"{key}={value}" for key, value in host.env.items())

    def screen() -> str:
        return subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True).stdout

    def keys(*words: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", session, *words], check=True)

    try:
        subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "160", "-y", "45", "-c", str(host.project),
                        f"env -i {shell} {CODEX} --dangerously-bypass-approvals-and-sandbox"], check=True)
        wait_for(lambda: "Ask Codex" in screen(), 90, "the TUI's prompt", screen)
        # 0.171 offers its new model a few seconds after the prompt shows (keep the configured one), or not at all
        offered = time.monotonic() + 20
        while time.monotonic() < offered and not keep_the_model(screen, keys):
            time.sleep(0.5)
        ask(keys)

        def answered() -> bool:
            if keep_the_model(screen, keys) and not host.fake.billed("turn"):
                ask(keys)  # the offer took the keys: ask again
            return "alpha, beta and gamma" in screen()

        wait_for(answered, 120, "the answer", screen)
        wait_for(lambda: host.fake.billed("title"), 60, "the title request")  # a background thread: wait for it
        session_id = only_session(host)
        found = compare_with_the_wire(host, session_id)
        assert found["source"] == "interactive" and found["unseen_calls"] == {"codex_title": 1}
        assert len(host.fake.billed("turn")) == 2
        report = host.xshare("report", "--all")
        assert report["groups"]["codex/interactive"]["unseen_calls"] == {"codex_title": 1}
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
        host.stop_app_server()
        host.fake.stop()
