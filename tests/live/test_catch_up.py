"""The status line's catch-up: a ledger left behind (no hook after the compaction summary) is brought up to
date by one detached updater the status line starts, never by the status line process itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from xshare.agents.claude_code.many import measure_one
from xshare.agents.claude_code.transcript import describe
from xshare.agents.common.counting import LazyCounter
from xshare.demo import write_demo_corpus
from xshare.live import catch_up as statusline_update
from xshare.live import session_state
from xshare.measure import tokens
from xshare.state.paths import line_file
from xshare.state.store import locked

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def behind(tmp_path: Path) -> tuple[Path, dict]:
    """A transcript whose ledger covers only its first half, as after a compaction no hook saw."""
    demo = write_demo_corpus(tmp_path / "demo")
    source = max(demo.rglob("*.jsonl"), key=lambda path: path.stat().st_size)
    lines = source.read_bytes().splitlines(keepends=True)
    target = tmp_path / "projects" / "-home-dev-x" / source.name
    target.parent.mkdir(parents=True)
    target.write_bytes(b"".join(lines[: len(lines) // 2]))
    session_state.update(target)
    with target.open("ab") as handle:
        handle.write(b"".join(lines[len(lines) // 2 :]))
    return target, {"HOME": str(tmp_path / "home"), "XSHARE_HOME": os.environ["XSHARE_HOME"], "NO_COLOR": "1",
                    **({"XSHARE_VOCAB": os.environ["XSHARE_VOCAB"]} if "XSHARE_VOCAB" in os.environ else {}),
                    "TIKTOKEN_CACHE_DIR": os.environ["TIKTOKEN_CACHE_DIR"], "XSHARE_WORKER": "0"}


def show(path: Path, env: dict, *args: str) -> str:
    """The status line's first line as Claude Code runs it: isolated, no site-packages."""
    payload = {"session_id": path.stem, "transcript_path": str(path), "version": "2.1.332"}
    done = subprocess.run([sys.executable, "-I", "-S", str(REPO / "statusline" / "statusline.py"), *args],
                          input=json.dumps(payload), capture_output=True, text=True, env=env, timeout=30)
    assert done.returncode == 0 and done.stderr == ""
    return done.stdout.strip().split("\n")[0]


def offset(path: Path) -> int:
    return json.loads(line_file(path.stem).read_text())["offset"]


def wait_for_offset(path: Path, timeout: float = 60) -> bool:
    deadline = time.monotonic() + timeout
    while offset(path) != path.stat().st_size:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def test_a_behind_line_starts_one_updater_that_catches_the_ledger_up(behind):
    path, env = behind
    first = show(path, env)
    assert first.endswith(" …") and offset(path) < path.stat().st_size
    assert wait_for_offset(path), "the updater never brought the ledger up to the transcript's size"
    second = show(path, env)
    row, _ = measure_one(describe(path), LazyCounter(tokens.choose()))
    assert "…" not in second and f"· {row['api_calls']:,} calls" in second
    mark = "" if row["tokenizer"] == "o200k_base" else "≈"
    assert second.startswith(f"explore {mark}{row['exploration_share_of_context']:.1%} of context")


def test_while_an_updater_runs_no_second_one_starts(behind):
    path, env = behind
    with locked(statusline_update.updater_lock(path.stem), blocking=False) as held:
        assert held
        assert statusline_update.kick(path.stem, str(path)) is False
        assert show(path, env).endswith(" …")
        time.sleep(1.5)
        assert offset(path) < path.stat().st_size  # nothing ran beside the updater holding the lock
    assert statusline_update.kick(path.stem, str(path)) is True
    assert wait_for_offset(path)


def test_an_updater_started_while_another_holds_the_lock_exits_without_work(behind):
    path, env = behind
    program = ("import sys; sys.path.insert(0, sys.argv[1]); from xshare.live.catch_up import main; "
               "main(sys.argv[2:])")
    with locked(statusline_update.updater_lock(path.stem), blocking=False):
        done = subprocess.run([sys.executable, "-c", program, str(REPO), path.stem, str(path)],
                              env={**os.environ, **env}, capture_output=True, timeout=60)
        assert done.returncode == 0 and done.stdout == b"" and done.stderr == b""
        assert offset(path) < path.stat().st_size


def test_no_catch_up_option_and_a_payload_without_transcript_start_nothing(behind):
    path, env = behind
    assert show(path, env, "--no-catch-up").endswith(" …")
    assert statusline_update.kick(path.stem, "") is False and statusline_update.kick("", str(path)) is False
    time.sleep(1.5)
    assert offset(path) < path.stat().st_size


def test_install_sets_the_refresh_timer_that_shows_the_caught_up_figures(isolated_home: Path):
    from xshare.cli import main
    from xshare.install.statusline_setup import REFRESH_SECONDS

    assert main(["statusline", "install"]) == 0
    entry = json.loads((isolated_home / ".claude" / "settings.json").read_text())["statusLine"]
    assert entry["refreshInterval"] == REFRESH_SECONDS and 1 <= REFRESH_SECONDS <= 10
