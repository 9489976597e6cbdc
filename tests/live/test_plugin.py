"""The Claude Code plugin as Claude Code sees it: its files, and a session replayed end to end through
the hook and the status line, each run as a separate process with the documented stdin JSON."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CORPUS, NO_NETWORK, append_in_pieces, needs_corpus
from xshare.demo import write_demo_corpus

REPO = Path(__file__).resolve().parents[2]
EVENTS = {"PostToolBatch", "Stop", "SubagentStop", "PreCompact", "PostCompact", "SessionStart", "SessionEnd"}


def test_manifest_and_marketplace():
    manifest = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "xshare" and re.fullmatch(r"\d+\.\d+\.\d+", manifest["version"])
    for key in ("description", "author", "license", "keywords"):
        assert manifest[key]
    # no invented home: the repository's public address is not known to the checkout (issue 21)
    assert "homepage" not in manifest and "repository" not in manifest
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())
    assert market["name"] == "xshare" and market["owner"]["name"]
    assert market["plugins"] == [market["plugins"][0]] and market["plugins"][0]["source"] == "./"
    assert sorted(path.name for path in (REPO / ".claude-plugin").iterdir()) == [
        "icon.png", "marketplace.json", "plugin.json"]
    # the plugin's venv, and uv's download of a Python where none is new enough (GitHub's release assets)
    assert manifest["network"] == {"hosts": ["pypi.org", "files.pythonhosted.org", "github.com",
                                             "release-assets.githubusercontent.com", "objects.githubusercontent.com"]}


def test_icon_is_a_square_png_of_the_size_the_plugin_directory_wants():
    manifest = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())
    data = (REPO / manifest["icon"]).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert width == height and 512 <= width <= 2048 and len(data) < 2_000_000


def test_hooks_are_async_and_run_the_plugins_own_xshare():
    hooks = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]
    assert set(hooks) == EVENTS
    for groups in hooks.values():
        (handler,) = [handler for group in groups for handler in group["hooks"]]
        assert handler["async"] is True and handler["type"] == "command"
        assert handler["command"] == 'python3 "${CLAUDE_PLUGIN_ROOT}/bin/xshare" hook'


def test_the_slash_command_frontmatter():
    text = (REPO / "commands" / "exploration-share.md").read_text()
    front = dict(line.split(": ", 1) for line in text.split("---")[1].strip().splitlines())
    assert set(front) == {"description", "argument-hint", "allowed-tools", "disable-model-invocation"}
    assert front["disable-model-invocation"] == "true"
    command = re.search(r"!`(.+?)`", text).group(1)
    allowed = re.fullmatch(r"Bash\((.+):\*\)", front["allowed-tools"]).group(1)
    assert command.startswith(allowed)  # pre-approved, or the dynamic context would abort


def test_the_slash_prompt_says_the_dollar_lines_are_xshares_list_prices(capsys):
    """Issue 30: the prompt said "Do not guess at money: these are tokens" above an output with dollar lines.
    It names the lines the output has, says they are list prices xshare computed, and that the model must
    not compute its own."""
    from xshare.cli import main

    prompt = " ".join((REPO / "commands" / "exploration-share.md").read_text().split("---", 2)[2].split())
    assert main(["slash", "--", "--demo", "--estimate"]) == 0
    dollar_line = next(line for line in capsys.readouterr().out.splitlines() if "$" in line)
    assert dollar_line.startswith('In dollars (list prices of') and '("In dollars (list prices of ...)")' in prompt
    assert "these are tokens" not in prompt and "list prices xshare computed" in prompt
    assert "never compute a dollar figure of your own" in prompt


def plugin_env(home: Path, **extra: str) -> dict:
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", ""), "XSHARE_HOME": str(home / "xshare"),
           "LANG": "C.UTF-8", "XSHARE_WORKER": "0", "XSHARE_NO_BACKGROUND": "1", **extra}  # nothing outlives a test
    return env


def test_with_nothing_but_python3_it_counts_characters_and_says_so(tmp_path: Path):
    """No site-packages (no tiktoken, no orjson): the plugin's own copy still reports, labelled."""
    done = subprocess.run([sys.executable, "-I", "-S", str(REPO / "bin" / "xshare"), "report", "--demo"],
                          capture_output=True, text=True, env=plugin_env(tmp_path), timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Tokenizer: chars/4 (tiktoken is not installed)" in done.stdout


def test_slash_command_output_always_exits_0(tmp_path: Path):
    done = subprocess.run([sys.executable, str(REPO / "bin" / "xshare"), "slash", "--session", "abc", "--"],
                          capture_output=True, text=True, env=plugin_env(tmp_path), timeout=120)
    assert done.returncode == 0
    assert "No session started in the window" in done.stdout
    assert "This session: no live figures yet" in done.stdout and "xshare html abc" in done.stdout


def replay_like_claude_code(source: Path, target: Path, home: Path, pieces: int) -> str:
    """Append the transcript in pieces, run the hook after each (as Claude Code does after every
    tool batch), then run the status line once; returns what it printed."""
    env = plugin_env(home, NO_COLOR="1")
    for _ in append_in_pieces(source, target, random.Random(source.name), pieces):
        payload = {"session_id": target.stem, "transcript_path": str(target), "cwd": "/home/dev/x",
                   "hook_event_name": "PostToolBatch", "tool_calls": []}
        hook = subprocess.run([sys.executable, str(REPO / "bin" / "xshare"), "hook"], input=json.dumps(payload),
                              capture_output=True, text=True, env=env, timeout=120)
        assert hook.returncode == 0 and hook.stdout == "" and hook.stderr == ""
    status = {"session_id": target.stem, "transcript_path": str(target), "version": "2.1.90",
              "model": {"id": "claude-sonnet-4-6", "display_name": "Sonnet 4.6"},
              "context_window": {"used_percentage": 37.0, "context_window_size": 200000}}
    shown = subprocess.run([sys.executable, "-I", "-S", str(REPO / "statusline" / "statusline.py")],
                           input=json.dumps(status), capture_output=True, text=True, env=env, timeout=30)
    assert shown.returncode == 0
    session = subprocess.run([sys.executable, str(REPO / "bin" / "xshare"), "session", str(target), "--json"],
                             capture_output=True, text=True, env=env, timeout=120)
    row = json.loads(session.stdout)
    expected = (f"explore {row['exploration_share_of_context']:.1%} of context · "
                f"{row['exploration_share_of_prompt']:.1%} of bill · calib {row['recorded_over_billed']:.0%} · "
                f"{row['api_calls']:,} calls · ctx 37%")
    assert shown.stdout.split("\n")[0] == expected  # the second line: tests/live/test_status_render_fields.py
    return shown.stdout


def test_a_first_session_is_exact_with_no_network_and_no_vocabulary_named(tmp_path: Path):
    """The hook as Claude Code runs it on a machine that has only the installed plugin: no $XSHARE_VOCAB,
    nothing beside the checkout, and any network use refused. The packaged vocabulary makes it exact."""
    source = max(write_demo_corpus(tmp_path / "demo").rglob("*.jsonl"), key=lambda item: item.stat().st_size)
    target = tmp_path / "live" / source.name
    target.parent.mkdir()
    target.write_bytes(source.read_bytes())
    home = tmp_path / "home"
    env = plugin_env(home, NO_COLOR="1")
    payload = {"session_id": target.stem, "transcript_path": str(target), "hook_event_name": "Stop"}
    script = str(REPO / "bin" / "xshare")
    run_hook = NO_NETWORK + f"import runpy\nsys.argv = ['xshare', 'hook']\nrunpy.run_path({script!r})"
    hook = subprocess.run([sys.executable, "-c", run_hook], input=json.dumps(payload), capture_output=True, text=True,
                          env=env, timeout=120)
    assert hook.returncode == 0 and hook.stderr == "", hook.stderr
    saved = json.loads((home / "xshare" / "live" / f"{target.stem}.line.json").read_text())
    assert saved["tokenizer"] == "o200k_base" and saved["offset"] == target.stat().st_size
    status = {"session_id": target.stem, "transcript_path": str(target), "context_window": {"used_percentage": 5.0}}
    shown = subprocess.run([sys.executable, "-I", "-S", str(REPO / "statusline" / "statusline.py")],
                           input=json.dumps(status), capture_output=True, text=True, env=env, timeout=30)
    assert shown.stdout.startswith(f"explore {saved['exploration_share_of_context']:.1%} of context")
    assert "≈" not in shown.stdout  # the estimate marker


def test_end_to_end_on_demo_transcripts(tmp_path: Path):
    demo = write_demo_corpus(tmp_path / "demo")
    for index, source in enumerate(sorted(demo.rglob("*.jsonl"), key=lambda item: -item.stat().st_size)[:2]):
        # each in a folder of its own: a session's files beside each other would share request ids, which
        # the hook (reading one file) and `session` (its whole project folder) then settle differently
        replay_like_claude_code(source, tmp_path / "live" / str(index) / source.name, tmp_path / "home", pieces=6)


@needs_corpus
@pytest.mark.parametrize("index", [0, 1])
def test_end_to_end_on_real_transcripts(tmp_path: Path, index: int):
    files = sorted((CORPUS / "claude").rglob("*.jsonl"), key=lambda item: item.stat().st_size)
    source = files[len(files) * (index + 1) // 3]
    replay_like_claude_code(source, tmp_path / "live" / "s.jsonl", tmp_path / "home", pieces=5)
