"""The status line (render from saved state only) and `xshare statusline install | remove | status`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from xshare.cli import main
from xshare.demo import write_demo_corpus
from xshare.install import statusline_setup
from xshare.live import session_state
from xshare.live import status_render as statusline
from xshare.state.paths import line_file

REPO = Path(__file__).resolve().parents[2]


def status_payload(path: Path, used: float | None = 41.7) -> dict:
    """Claude Code's documented status-line JSON (the fields xshare reads, and some it does not)."""
    return {"session_id": path.stem, "transcript_path": str(path), "cwd": "/home/dev/todo-api",
            "model": {"id": "claude-sonnet-4-6", "display_name": "Sonnet 4.6"}, "version": "2.1.90",
            "workspace": {"current_dir": "/home/dev/todo-api", "project_dir": "/home/dev/todo-api"},
            "cost": {"total_cost_usd": 1.23, "total_duration_ms": 600000},
            "context_window": {"total_input_tokens": 83400, "context_window_size": 200000,
                               "used_percentage": used, "remaining_percentage": None if used is None else 100 - used,
                               "current_usage": None}}


@pytest.fixture
def session(tmp_path: Path) -> tuple[Path, dict]:
    demo = write_demo_corpus(tmp_path / "demo")
    path = max(demo.rglob("*.jsonl"), key=lambda item: item.stat().st_size)
    row = session_state.update(path)
    return path, row


def run_script(payload: object, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """As Claude Code runs it: a fresh isolated interpreter, no site-packages (so no tiktoken)."""
    stdin = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return subprocess.run([sys.executable, "-I", "-S", str(REPO / "statusline" / "statusline.py"), *args],
                          input=stdin, capture_output=True, env=env, timeout=30)


def test_it_renders_the_saved_figures(session):
    path, row = session
    text = statusline.render(status_payload(path), second=None, colour=False)
    share, bill = row["exploration_share_of_context"], row["exploration_share_of_prompt"]
    assert text == (f"explore {share:.1%} of context · {bill:.1%} of bill · calib {row['recorded_over_billed']:.0%}"
                    f" · {row['api_calls']} calls · ctx 42%")


@pytest.mark.parametrize(("share", "code"), [(0.05, "32"), (0.2, "33"), (0.3, "31"), (0.61, "31")])
def test_colours_follow_the_specs_thresholds(session, share: float, code: str):
    path, _ = session
    saved = json.loads(line_file(path.stem).read_text())
    saved["exploration_share_of_context"] = share
    line_file(path.stem).write_text(json.dumps(saved))
    assert f"\033[{code}m{share:.1%}\033[0m" in statusline.render(status_payload(path))


def test_format_second_line_and_estimate_marker(session):
    path, _ = session
    saved = json.loads(line_file(path.stem).read_text())
    saved["tokenizer"] = "chars/4"
    line_file(path.stem).write_text(json.dumps(saved))
    text = statusline.render(status_payload(path, used=None), "{calls} calls, {context}", "see {html}", colour=False)
    first, second = text.split("\n")
    assert first == f"{saved['api_calls']} calls, ≈{saved['exploration_share_of_context']:.1%}"
    assert second == f"see {saved['html']}" and second.endswith(".html")


def test_a_share_the_bill_cannot_support_shows_as_unknown(session):
    """Issue 28: recorded / billed over 100% plus the allowance is no share, in the summary the hook writes
    and in the line, even from a summary written before the check."""
    from xshare.measure.ledger import ROUNDING_ALLOWANCE, UNEXPLAINED

    assert statusline.SUPPORTED_CALIBRATION == 1 + ROUNDING_ALLOWANCE
    path, row = session
    short = {**row, "prompt_tokens_billed": row["context_tokens"] // 2}  # a bill half of what the records show
    saved = session_state.summary(short, 0, path)
    assert saved["exploration_share_of_context"] is None and saved["exploration_share_of_prompt"] is None
    assert saved["unknown_because"] == UNEXPLAINED
    older = {**json.loads(line_file(path.stem).read_text()), "recorded_over_billed": 1.62}  # a share beside it
    assert older["exploration_share_of_context"] is not None  # what an older summary would still show
    for written in (saved, {**older, "unknown_because": None}):
        line_file(path.stem).write_text(json.dumps(written))
        text = statusline.render(status_payload(path), second=None, colour=False)
        assert text.startswith("explore ? of context · ? of bill · calib ")
        assert "(the records exceed the bill: shares unknown)" in text


def test_a_transcript_grown_past_the_saved_state_is_marked(session):
    path, _ = session
    with path.open("ab") as handle:
        handle.write(b'{"type": "progress"}\n')
    assert statusline.render(status_payload(path), colour=False).split("\n")[0].endswith(" …")


def test_the_script_runs_without_site_packages_and_honours_no_color(session, isolated_home: Path):
    path, row = session
    env = {"HOME": str(isolated_home), "XSHARE_HOME": str(line_file("x").parents[1]), "NO_COLOR": "1"}
    done = run_script(status_payload(path), env=env)
    assert done.returncode == 0 and done.stderr == b""
    assert done.stdout.decode().startswith(f"explore {row['exploration_share_of_context']:.1%} of context")
    assert b"\033[" not in done.stdout


@pytest.mark.parametrize("stdin", [b"", b"not json", b"[1, 2]", json.dumps({"session_id": "no-such-session"}).encode()])
def test_any_problem_prints_a_short_fallback_and_exits_0(stdin: bytes, isolated_home: Path):
    done = run_script(stdin, env={"HOME": str(isolated_home)})
    assert done.returncode == 0 and done.stdout.startswith(b"explore: ")


# --- install / remove / status ---------------------------------------------------------------------------


def settings(home: Path) -> dict:
    return json.loads((home / ".claude" / "settings.json").read_text())


def test_install_into_a_fresh_home_and_remove(capsys, isolated_home: Path):
    assert main(["statusline", "install"]) == 0
    entry = settings(isolated_home)["statusLine"]
    assert entry["type"] == "command" and "-I -S" in entry["command"]
    interpreter, script = entry["command"].split('"')[1], entry["command"].split('"')[3]
    assert Path(interpreter).is_absolute() and Path(interpreter).exists() and Path(script).is_file()
    assert main(["statusline", "status"]) == 0 and "installed" in capsys.readouterr().out
    assert main(["statusline", "remove"]) == 0
    assert not (isolated_home / ".claude" / "settings.json").exists()  # there was none before install


def test_someone_elses_status_line_is_kept_unless_forced_and_put_back(capsys, isolated_home: Path):
    path = isolated_home / ".claude" / "settings.json"
    path.parent.mkdir()
    theirs = {"type": "command", "command": "~/bin/my-line.sh", "padding": 1}
    path.write_text(json.dumps({"model": "opus", "statusLine": theirs}, indent=2))
    assert main(["statusline", "install"]) == 1
    assert "--force" in capsys.readouterr().err
    assert settings(isolated_home)["statusLine"] == theirs
    assert main(["statusline", "install", "--force", "--line2", "summary: {html}"]) == 0
    assert "--line2" in settings(isolated_home)["statusLine"]["command"]
    assert json.loads(path.with_name("settings.json.xshare-backup").read_text())["statusLine"] == theirs
    assert main(["statusline", "install", "--force"]) == 0  # re-installing keeps what it first replaced
    assert main(["statusline", "remove"]) == 0
    assert settings(isolated_home) == {"model": "opus", "statusLine": theirs}


def test_install_respects_claude_config_dir_and_refuses_a_broken_file(capsys, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch):
    config = tmp_path / "claude-config"
    config.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    (config / "settings.json").write_text("{ not json")
    assert main(["statusline", "install"]) == 1
    assert (config / "settings.json").read_text() == "{ not json"
    (config / "settings.json").write_text("{}")
    assert main(["statusline", "install"]) == 0
    assert statusline_setup.is_ours(json.loads((config / "settings.json").read_text())["statusLine"])


def test_status_says_when_the_installed_script_is_gone(capsys, isolated_home: Path):
    path = isolated_home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"statusLine": {"type": "command",
                                               "command": '"/usr/bin/python3" -I -S "/gone/xshare/statusline.py"'}}))
    assert main(["statusline", "status"]) == 0
    assert "missing" in capsys.readouterr().out
