"""Driving the real Claude Code CLI offline against tests/support/fake_anthropic.py: print mode and the TUI in tmux.

The CLI comes from $XSHARE_TEST_CLAUDE (.ci/run installs the pinned npm package and sets it). Every run
gets its own CLAUDE_CONFIG_DIR, HOME and XSHARE_HOME under a temporary folder, the plugin from this
checkout (--plugin-dir), and a PATH whose `python3` is the interpreter running the tests, so the plugin's
hooks count with the same tokenizer as the `xshare` commands the tests compare them with. The plugin's own
environment is switched off (XSHARE_NO_PLUGIN_ENV=1) except in the test that builds it for real.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from fake_anthropic import FakeAnthropic

REPO = Path(__file__).resolve().parents[2]
CLAUDE = os.environ.get("XSHARE_TEST_CLAUDE", "")
API_KEY = "sk-ant-fake-key-for-tests-0000"
QUIET = {"DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
         "DISABLE_AUTOUPDATER": "1"}
PASSED_ON = ("LANG", "TIKTOKEN_CACHE_DIR", "XSHARE_VOCAB", "TERM")


def claude_missing() -> str | None:
    """Why the real-CLI tests cannot run here, or None."""
    if not CLAUDE:
        return "XSHARE_TEST_CLAUDE is not set (.ci/run installs @anthropic-ai/claude-code from npm and sets it)"
    if not os.access(CLAUDE, os.X_OK):
        return f"XSHARE_TEST_CLAUDE={CLAUDE} is not an executable"
    return None


class ClaudeHost:
    """One temporary Claude Code installation: config dir, project folder, xshare home, environment."""

    def __init__(self, root: Path, fake: FakeAnthropic) -> None:
        self.root, self.fake = root, fake
        self.project = root / "project"
        self.config = root / "claude-config"
        self.xshare_home = root / "xshare-home"
        for folder in (self.project, self.config, root / "home"):
            folder.mkdir(parents=True, exist_ok=True)
        self.env = {name: os.environ[name] for name in PASSED_ON if name in os.environ}
        self.env.update(QUIET, HOME=str(root / "home"), CLAUDE_CONFIG_DIR=str(self.config),
                        XSHARE_HOME=str(self.xshare_home), ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY=API_KEY,
                        PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
                        NO_COLOR="1", XSHARE_NO_PLUGIN_ENV="1", XSHARE_NO_BACKGROUND="1",
                        XSHARE_WORKER_IDLE="30")  # the hooks' warm worker, gone soon after the test
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            self.env["IS_SANDBOX"] = "1"  # else Claude Code refuses to bypass permissions as root

    def claude_p(self, prompt: str, *extra: str, timeout: float = 180) -> tuple[subprocess.CompletedProcess, list]:
        """One `claude -p` run with the plugin; returns the run and the requests the server billed for it."""
        before = len(self.fake.requests)
        done = subprocess.run([CLAUDE, "-p", prompt, *extra, "--plugin-dir", str(REPO),
                               "--permission-mode", "bypassPermissions"],
                              cwd=self.project, env=self.env, capture_output=True, text=True, timeout=timeout)
        assert done.returncode == 0, f"claude -p failed: {done.stderr[-2000:]}"
        return done, self.fake.since(before)

    def transcripts(self) -> list[Path]:
        """The main sessions' transcripts (subagents' live in <session>/subagents/)."""
        return sorted((self.config / "projects").glob("*/*.jsonl"))

    def line(self, session_id: str) -> dict | None:
        from xshare.state.paths import file_name

        try:
            return json.loads((self.xshare_home / "live" / f"{file_name(session_id)}.line.json").read_text())
        except (OSError, ValueError):
            return None

    def wait_for_ledger(self, transcript: Path, session_id: str | None = None, timeout: float = 60) -> dict:
        """Until the live ledger covers every byte of the transcript (the hooks outlive a -p run)."""
        session_id = session_id or transcript.stem
        deadline = time.monotonic() + timeout
        while True:
            line = self.line(session_id)
            if line and line.get("offset") == transcript.stat().st_size:
                return line
            if time.monotonic() > deadline:
                raise AssertionError(f"the live ledger never caught up: {line} vs {transcript.stat().st_size} bytes")
            time.sleep(0.2)

    def xshare(self, *args: str, hide_transcripts: bool = False) -> dict:
        """`xshare ... --json` as the user runs it; hide_transcripts points it at an empty Claude folder, so
        a session id can only be answered from the live ledger the hook keeps."""
        env = dict(self.env, CLAUDE_CONFIG_DIR=str(self.root / "nothing-here")) if hide_transcripts else self.env
        done = subprocess.run([sys.executable, "-m", "xshare", *args, "--json"], env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def trust_project(self) -> None:
        """What the first interactive start would ask: onboarding, the bypass warning, folder trust."""
        state = {"hasCompletedOnboarding": True, "bypassPermissionsModeAccepted": True, "theme": "dark",
                 "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
                 "projects": {str(self.project): {"hasTrustDialogAccepted": True,
                                                  "hasCompletedProjectOnboarding": True}}}
        (self.config / ".claude.json").write_text(json.dumps(state))
        settings = self.config / "settings.json"
        current = json.loads(settings.read_text()) if settings.exists() else {}
        settings.write_text(json.dumps({**current, "skipDangerousModePermissionPrompt": True}))


class Tmux:
    """The TUI in a private tmux server (its own socket), 160x45."""

    def __init__(self, host: ClaudeHost) -> None:
        self.host = host
        self.base = ["tmux", "-S", str(host.root / "tmux.sock")]

    def start(self) -> None:
        env_words = [f"{name}={value}" for name, value in self.host.env.items()]
        subprocess.run([*self.base, "new-session", "-d", "-x", "160", "-y", "45", "-c", str(self.host.project),
                        "env", *env_words, CLAUDE, "--plugin-dir", str(REPO), "--permission-mode",
                        "bypassPermissions"], check=True, timeout=30)

    def type(self, text: str) -> None:
        subprocess.run([*self.base, "send-keys", "-l", text], check=True, timeout=30)
        time.sleep(0.4)  # let the prompt box take the text before Enter (else it may be a newline)
        subprocess.run([*self.base, "send-keys", "Enter"], check=True, timeout=30)

    def screen(self) -> str:
        return subprocess.run([*self.base, "capture-pane", "-p"], capture_output=True, text=True, timeout=30).stdout

    def wait_for(self, predicate, timeout: float) -> str:
        """Until the screen satisfies predicate(screen); returns the last screen either way."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if predicate(screen) or time.monotonic() > deadline:
                return screen
            time.sleep(0.25)

    def pid(self) -> int:
        out = subprocess.run([*self.base, "display-message", "-p", "#{pane_pid}"], capture_output=True, text=True,
                             timeout=30).stdout
        return int(out.strip())

    def stop(self) -> None:
        subprocess.run([*self.base, "kill-server"], capture_output=True, timeout=30)


def tmux_missing() -> str | None:
    return None if shutil.which("tmux") else "tmux is not installed (.ci/run installs it with apt-get as root)"


def status_line(screen: str) -> str:
    """The status line under the prompt: xshare's line is the one that starts with 'explore'."""
    lines = [line.strip() for line in screen.splitlines() if line.strip().startswith("explore")]
    return lines[-1] if lines else ""


def expected_line(row: dict) -> str:
    """What the status line shows for a saved row (without Claude Code's own `ctx` field); `≈` marks a
    count made without the o200k_base vocabulary."""
    mark = "" if row["tokenizer"] == "o200k_base" else "≈"
    return (f"explore {mark}{row['exploration_share_of_context']:.1%} of context · "
            f"{mark}{row['exploration_share_of_prompt']:.1%} of bill · calib {row['recorded_over_billed']:.0%} · "
            f"{row['api_calls']:,} calls")


def wait_until(predicate, timeout: float, step: float = 0.2) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(step)
    return True
