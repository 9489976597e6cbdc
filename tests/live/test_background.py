"""The background pass: the history measured into the caches before anyone asks (sessions/prefill.py), started
detached and at low priority by the SessionStart hook and Hermes's plugin load (live/background.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hermes_fixtures import HermesDb

from tests.conftest import CORPUS, needs_corpus
from xshare.agents.claude_code import adapter as claude_adapter
from xshare.agents.claude_code import many as claude_code
from xshare.agents.claude_code import rows_cache
from xshare.agents.common import counting as counter
from xshare.cli import main
from xshare.demo import write_demo_corpus
from xshare.live import background
from xshare.live import hook as live_hook
from xshare.measure import tokens
from xshare.sessions import prefill
from xshare.state.store import locked

REPO = Path(__file__).resolve().parents[2]


class Interrupted(Exception):
    """Stands for the pass being killed part-way."""


@pytest.fixture
def history(tmp_path: Path) -> dict:
    """A Claude Code root (the demo's two projects) and a Hermes database, as a report's flags name them."""
    write_demo_corpus(tmp_path / "claude")
    db = HermesDb(tmp_path / "hermes" / "state.db", 22)
    db.session("h1", "cli", tokens=(900, 0, 0, 12), api_calls=1)
    db.message("h1", "user", "where is the config read?")
    db.message("h1", "assistant", "in settings.py")
    db.close()
    homes = {agent: [] for agent in ("claude-code", "hermes", "codex", "gemini", "opencode", "openclaw")}
    homes.update({"claude-code": [str(tmp_path / "claude")], "hermes": [str(tmp_path / "hermes" / "state.db")]})
    return homes


@pytest.fixture(autouse=True)
def every_core_again():
    yield
    counter.limit_workers(None)  # the pass limits its own process; the tests run in this one


def report(monkeypatch, capsys, home: Path, homes: dict, rows: Path) -> dict:
    monkeypatch.setenv("XSHARE_HOME", str(home))
    argv = ["report", "--all", "--json", "--no-history", "--rows", str(rows)]
    argv += [f"--claude-root={homes['claude-code'][0]}", f"--hermes-db={homes['hermes'][0]}"]
    assert main(argv) == 0
    found = json.loads(capsys.readouterr().out)
    found["window"].pop("until")
    found.pop("counter"), found.pop("counter_note")  # after a pass nothing is counted: the figures are the same
    return found


def rows_of(path: Path) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return sorted(({k: v for k, v in row.items() if k != "machine"} for row in rows), key=lambda row: row["id"])


def reads_counted(monkeypatch) -> list[Path]:
    """Every transcript the reader reads from now on, by path."""
    read, real = [], claude_code.read_file

    def counting(file, *args, **kwargs):
        read.append(file.path)
        return real(file, *args, **kwargs)

    monkeypatch.setattr(claude_code, "read_file", counting)
    return read


def test_after_a_pass_the_first_report_reads_nothing_and_equals_a_cold_one(tmp_path, monkeypatch, capsys,
                                                                          history):
    cold = report(monkeypatch, capsys, tmp_path / "cold", history, tmp_path / "cold.jsonl")
    monkeypatch.setenv("XSHARE_HOME", str(tmp_path / "warm"))
    assert prefill.run_pass(history) == "measured"
    read = reads_counted(monkeypatch)
    monkeypatch.setattr(tokens.Counter, "load", lambda self: pytest.fail("the tokenizer was loaded"))
    assert report(monkeypatch, capsys, tmp_path / "warm", history, tmp_path / "warm.jsonl") == cold
    assert read == []
    assert rows_of(tmp_path / "warm.jsonl") == rows_of(tmp_path / "cold.jsonl")
    assert {row["agent"] for row in rows_of(tmp_path / "warm.jsonl")} == {"claude-code", "hermes"}


def test_a_killed_pass_resumes_where_it_stopped(tmp_path, monkeypatch, capsys, history):
    cold = report(monkeypatch, capsys, tmp_path / "cold", history, tmp_path / "cold.jsonl")
    monkeypatch.setenv("XSHARE_HOME", str(tmp_path / "warm"))
    real, parts = claude_code.measure_claude, []

    def killed_after_one_part(files, *args, **kwargs):
        if parts:
            raise Interrupted
        parts.append([file.path for file in files])
        return real(files, *args, **kwargs)

    monkeypatch.setattr(claude_adapter, "measure_claude", killed_after_one_part)  # the pass is its adapter's
    with pytest.raises(Interrupted):
        prefill.run_pass(history, part_bytes=1)  # a part per project folder
    assert not prefill.stamp_file().exists()  # not done: the next session's hook starts it again
    choice = tokens.choose()
    done = set(rows_cache.load(choice.name, {str(path) for path in parts[0]}))
    assert done == {str(path) for path in parts[0]}  # the first part's rows were kept as soon as it was read
    monkeypatch.setattr(claude_adapter, "measure_claude", real)
    read = reads_counted(monkeypatch)
    assert prefill.run_pass(history, part_bytes=1) == "measured"
    assert read and not set(read) & set(parts[0])  # only what the killed pass had not read
    assert report(monkeypatch, capsys, tmp_path / "warm", history, tmp_path / "warm.jsonl") == cold
    assert rows_of(tmp_path / "warm.jsonl") == rows_of(tmp_path / "cold.jsonl")


def test_nothing_changed_nothing_measured_and_a_change_reads_only_itself(tmp_path, monkeypatch, history):
    assert prefill.run_pass(history) == "measured"
    read = reads_counted(monkeypatch)
    assert prefill.run_pass(history) == "unchanged"
    assert read == []
    transcript = max(Path(history["claude-code"][0]).rglob("*.jsonl"), key=lambda path: path.stat().st_size)
    with transcript.open("ab") as handle:
        handle.write(b'{"type":"summary","summary":"later"}\n')
    assert prefill.run_pass(history) == "measured"
    assert read == [transcript]


def test_one_pass_at_a_time(monkeypatch, history):
    with locked(prefill.lock_file()) as mine:
        assert mine
        started = time.monotonic()
        assert prefill.run_pass(history) == "busy"
        assert time.monotonic() - started < 1
    assert not prefill.stamp_file().exists()


def test_without_tiktoken_no_caches_of_estimates_are_made(monkeypatch, history):
    estimate = tokens.TokenizerChoice(tokens.ESTIMATE, None, "tiktoken is not installed")
    monkeypatch.setattr(tokens, "choose", lambda *args, **kwargs: estimate)
    assert prefill.run_pass(history) == "no tiktoken"
    assert not prefill.stamp_file().exists() and not rows_cache.cache_file().exists()


def started(monkeypatch) -> list:
    calls: list = []
    monkeypatch.setattr(subprocess, "Popen", lambda command, **kwargs: calls.append((command, kwargs)))
    return calls


def test_start_is_due_once_per_setup_and_refresh(monkeypatch):
    monkeypatch.delenv("XSHARE_NO_BACKGROUND")
    calls = started(monkeypatch)
    assert background.start() and len(calls) == 1
    command, options = calls[0]
    assert command[0] == sys.executable and options.get("start_new_session") and options["stdout"] == subprocess.DEVNULL
    prefill.write_stamp("0")  # a pass just finished
    assert not background.start() and len(calls) == 1
    assert background.due(time.time() + background.REFRESH + 1)
    monkeypatch.setenv("XSHARE_VOCAB", "/elsewhere/o200k_base.tiktoken")  # another setup: its caches differ
    assert background.due()


@pytest.mark.parametrize("stamp", [b"\x00garbage{", b"[1, 2]", b'{"setup": 3, "at": "yesterday"}'])
def test_a_damaged_stamp_is_no_stamp(monkeypatch, stamp):
    monkeypatch.delenv("XSHARE_NO_BACKGROUND")
    calls = started(monkeypatch)
    prefill.stamp_file().parent.mkdir(parents=True)
    prefill.stamp_file().write_bytes(stamp)
    assert background.start() and len(calls) == 1


@pytest.mark.parametrize("value", ["1", "yes"])
def test_turned_off(monkeypatch, value):
    monkeypatch.setenv("XSHARE_NO_BACKGROUND", value)
    calls = started(monkeypatch)
    assert not background.start() and calls == []


def test_session_start_starts_it_unless_the_env_is_being_built(monkeypatch, tmp_path):
    from xshare.install import plugin_env_build

    starts: list = []
    monkeypatch.setattr(background, "start", lambda: starts.append(1) or True)
    building = [False]
    monkeypatch.setattr(plugin_env_build, "start_build", lambda: building[0])
    payload = {"session_id": "s", "transcript_path": str(tmp_path / "s.jsonl"), "hook_event_name": "SessionStart"}
    live_hook.run_hook(json.dumps(payload).encode())
    assert starts == [1]
    live_hook.run_hook(json.dumps({**payload, "hook_event_name": "PostToolBatch"}).encode())
    assert starts == [1]
    building[0] = True  # pip at work: the pass waits for the next session
    live_hook.run_hook(json.dumps(payload).encode())
    assert starts == [1]


def test_hermes_plugin_load_starts_it(monkeypatch):
    from xshare import hermes_plugin

    class Context:
        def __getattr__(self, name):
            return lambda *args, **kwargs: None

    starts: list = []
    monkeypatch.setattr(background, "start", lambda: starts.append(1) or True)
    hermes_plugin.register(Context())
    assert starts == [1]
    monkeypatch.setattr(background, "start", lambda: 1 / 0)  # whatever goes wrong, Hermes loads the plugin
    hermes_plugin.register(Context())


def _child_env(tmp_path: Path, **extra: str) -> dict:
    env = {key: value for key, value in os.environ.items() if key != "XSHARE_NO_BACKGROUND"}
    return {**env, "PYTHONPATH": str(REPO), **extra}


def test_the_detached_pass_runs_lowered_and_finishes(tmp_path, monkeypatch):
    """The real thing: started as the hook starts it, it fills the caches at the lowest priority and ends."""
    write_demo_corpus(tmp_path / "claude")
    env = _child_env(tmp_path, CLAUDE_CONFIG_DIR=str(tmp_path / "claude"))
    code = "from xshare.live.background import start; print(start())"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "True" and done.stderr == ""
    deadline = time.monotonic() + 120
    while not prefill.stamp_file().exists():
        assert time.monotonic() < deadline, "the background pass did not finish"
        time.sleep(0.1)
    with locked(prefill.lock_file()) as mine:  # waits for the pass to let go: it is over
        assert mine
    assert rows_cache.cache_file().exists()
    log = Path(os.environ["XSHARE_HOME"]) / "logs" / "hook.log"
    assert not log.exists() or "Traceback" not in log.read_text()
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False"  # just ran: not again


def test_lowered_priority(tmp_path):
    code = ("import os, subprocess, shutil; from xshare.live.background import lower_priority; lower_priority(); "
            "print(os.nice(0)); ionice = shutil.which('ionice'); "
            "print(subprocess.run([ionice, '-p', str(os.getpid())], capture_output=True, text=True).stdout.strip() "
            "if ionice else 'idle')")
    done = subprocess.run([sys.executable, "-c", code], env=_child_env(tmp_path), capture_output=True, text=True,
                          timeout=60)
    nice, io = done.stdout.splitlines()
    assert nice == "19"
    if sys.platform.startswith("linux") and os.uname().machine in background._IOPRIO_SYSCALL:
        assert io.strip().startswith("idle")


def test_a_state_folder_that_is_a_file_costs_the_pass_nothing_but_a_cold_report(tmp_path):
    (tmp_path / "not-a-folder").write_text("")
    code = "from xshare.live.background import main; raise SystemExit(main())"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env=_child_env(tmp_path, XSHARE_HOME=str(tmp_path / "not-a-folder")))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


@needs_corpus
def test_on_real_transcripts_the_first_report_after_a_pass_equals_a_cold_one(tmp_path, monkeypatch, capsys):
    roots = sorted(path for path in (CORPUS / "claude").iterdir() if (path / "projects").is_dir())
    if not roots:
        pytest.skip("no Claude Code roots in ../shared/corpus")
    root = min(roots[:4], key=lambda path: sum(file.stat().st_size for file in path.rglob("*.jsonl")))
    homes = {"claude-code": [str(root)], "hermes": []}
    for agent in ("codex", "gemini", "opencode", "openclaw"):
        homes[agent] = []
    cold = report(monkeypatch, capsys, tmp_path / "cold", {**homes, "hermes": [str(tmp_path / "none.db")]},
                  tmp_path / "cold.jsonl")
    monkeypatch.setenv("XSHARE_HOME", str(tmp_path / "warm"))
    assert prefill.run_pass(homes, part_bytes=1 << 20) == "measured"
    read = reads_counted(monkeypatch)
    warm = report(monkeypatch, capsys, tmp_path / "warm", {**homes, "hermes": [str(tmp_path / "none.db")]},
                  tmp_path / "warm.jsonl")
    assert (warm, read) == (cold, [])
    assert rows_of(tmp_path / "warm.jsonl") == rows_of(tmp_path / "cold.jsonl")
