"""The live hook: incremental, locked, silent, and equal to the retrospective reading token for token."""

from __future__ import annotations

import json
import random
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import CORPUS, append_in_pieces, needs_corpus, session_json
from xshare.agents.claude_code.transcript import ClaudeTranscript, describe
from xshare.demo import write_demo_corpus
from xshare.live import hook as live_hook
from xshare.measure import tokens
from xshare.state.paths import file_name, line_file, live_dir, state_dir
from xshare.state.store import locked


def hook(payload: dict) -> None:
    live_hook.run_hook(json.dumps(payload).encode())


def hook_payload(path: Path, event: str = "PostToolBatch", **extra) -> dict:
    return {"session_id": path.stem, "transcript_path": str(path), "cwd": "/home/dev/todo-api",
            "hook_event_name": event, "permission_mode": "default", **extra}


def replay(source: Path, target: Path, rng: random.Random, pieces: int = 12) -> None:
    """Append `source` to `target` in pieces, calling the hook after each, as Claude Code does."""
    for _ in append_in_pieces(source, target, rng, pieces):
        hook(hook_payload(target))


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    return write_demo_corpus(tmp_path / "demo")


def test_live_equals_retrospective_for_every_demo_transcript(capsys, tmp_path: Path, demo: Path):
    rng = random.Random(7)
    main_files = [path for path in demo.rglob("*.jsonl") if not path.name.startswith("agent-")]
    for source in main_files:
        target = tmp_path / "live" / "projects" / source.parent.name / source.name
        replay(source, target, rng, pieces=rng.choice([3, 20, 60]))
        from_file = session_json(capsys, str(target))
        from_live = session_json(capsys, target.stem)
        assert from_live == from_file, source.name
    assert not (state_dir() / "logs" / "hook.log").exists()


def test_subagent_stop_brings_the_agent_transcript_into_its_own_ledger(capsys, demo: Path):
    agent = next(path for path in demo.rglob("agent-a*.jsonl") if "acompact" not in path.name)
    parent = agent.parents[1].with_suffix(".jsonl")
    hook(hook_payload(parent, "SubagentStop", agent_id=agent.stem[6:], agent_type="Explore",
                      agent_transcript_path=str(agent), stop_hook_active=False))
    agent_id = f"{parent.stem}/{agent.stem}"
    assert line_file(agent_id).exists() and line_file(parent.stem).exists()
    assert session_json(capsys, agent_id) == session_json(capsys, str(agent))


def test_a_call_with_nothing_new_loads_neither_state_nor_tokenizer(demo: Path, monkeypatch: pytest.MonkeyPatch):
    path = max(demo.rglob("*.jsonl"), key=lambda item: item.stat().st_size)
    hook(hook_payload(path))
    summary_before = line_file(path.stem).read_bytes()

    def forbidden(*args, **kwargs):
        raise AssertionError("an idle hook call must not get this far")

    monkeypatch.setattr(tokens, "Counter", forbidden)
    monkeypatch.setattr(ClaudeTranscript, "from_state", forbidden)
    monkeypatch.setattr(live_hook, "update", forbidden)
    hook(hook_payload(path, "Stop"))
    assert line_file(path.stem).read_bytes() == summary_before
    assert not (state_dir() / "logs" / "hook.log").exists()


def test_a_hook_that_waits_for_the_lock_still_reads_its_bytes(capsys, tmp_path: Path, demo: Path):
    source = max(demo.rglob("*.jsonl"), key=lambda item: item.stat().st_size)
    target = tmp_path / "projects" / "-p" / source.name
    target.parent.mkdir(parents=True)
    data = source.read_bytes()
    half = data.index(b"\n", len(data) // 2) + 1
    target.write_bytes(data[:half])
    hook(hook_payload(target))
    lock = live_dir() / f"{file_name(target.stem)}.lock"
    with locked(lock):  # another hook is busy with this session ...
        with target.open("ab") as handle:
            handle.write(data[half:])  # ... when the rest of the transcript is written
        waiting = threading.Thread(target=hook, args=(hook_payload(target),))
        waiting.start()
        time.sleep(0.3)
        assert waiting.is_alive()  # it waits rather than giving up on its bytes
    waiting.join(10)
    assert session_json(capsys, target.stem) == session_json(capsys, str(target))


def test_the_hook_is_silent_and_logs_its_problems(capsys, tmp_path: Path):
    live_hook.run_hook(b"this is not json")
    hook({"session_id": "x", "transcript_path": str(tmp_path / "missing" / "x.jsonl")})
    live_hook.run_hook(b"")
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
    log = (state_dir() / "logs" / "hook.log").read_text()
    assert "JSONDecodeError" in log or "ValueError" in log


def test_a_rewritten_transcript_is_read_from_the_start(capsys, tmp_path: Path, demo: Path):
    sources = sorted(demo.rglob("*.jsonl"), key=lambda item: item.stat().st_size)
    target = tmp_path / "projects" / "-p" / "same-name.jsonl"
    target.parent.mkdir(parents=True)
    target.write_bytes(sources[-1].read_bytes())
    hook(hook_payload(target))
    target.write_bytes(sources[-2].read_bytes())  # shorter: a new file under the same name
    hook(hook_payload(target))
    assert session_json(capsys, target.stem) == session_json(capsys, str(target))


def test_without_live_state_session_reads_the_transcript(capsys, demo: Path):
    path = next(demo.rglob("*.jsonl"))
    by_id = session_json(capsys, path.stem, "--claude-root", str(demo))
    assert by_id == session_json(capsys, str(path))


@needs_corpus
def test_real_transcripts_replayed_through_the_hook_equal_the_report(capsys, tmp_path: Path):
    rng = random.Random(11)
    files = sorted((CORPUS / "claude").rglob("*.jsonl"), key=lambda item: item.stat().st_size)
    picked = files[-3:] + rng.sample(files[:-3], 5)
    for source in picked:
        described = describe(source)
        target = tmp_path / "projects" / "-p" / f"{described.session_id.replace('/', '-')}.jsonl"
        replay(source, target, rng, pieces=25)
        assert session_json(capsys, target.stem) == session_json(capsys, str(target))
