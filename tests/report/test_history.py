"""The history: a session whose transcript was deleted still counts; --no-history leaves it out; a
row counted with another tokenizer replaces the old one and is never pooled with the current one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from xshare.cli import main
from xshare.demo import write_demo_corpus
from xshare.live import hook
from xshare.measure.ledger import CATEGORIES
from xshare.report import history

# what every session row holds for a report to sum (a history line without them is refused)
FIGURES = {"prompt_tokens_billed": 0, "context_tokens": 0, "exploration_share_of_context": None,
           "billed_tokens": dict.fromkeys(CATEGORIES, 0), "first_time_tokens": dict.fromkeys(CATEGORIES, 0)}


@pytest.fixture
def demo_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The demo corpus where Claude Code keeps its transcripts (the history serves reports on the
    default locations, not on folders named with --claude-root)."""
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    return write_demo_corpus(tmp_path / "claude")


def report(capsys, root: Path, *extra: str) -> tuple[int, dict | str]:
    code = main(["report", "--all", *extra])
    out = capsys.readouterr().out
    return code, (json.loads(out) if "--json" in extra and code == 0 else out)


def interactive_transcripts(root: Path) -> list[Path]:
    """Top-level transcripts (subagent files live in a folder named after their session)."""
    return sorted(path for path in root.rglob("*.jsonl") if "subagents" not in path.parts)


def test_a_deleted_transcript_still_counts(capsys, demo_root: Path):
    code, before = report(capsys, demo_root, "--json")
    assert code == 0 and before["remembered_sessions"] == 0
    victim = interactive_transcripts(demo_root)[0]
    victim.unlink()
    code, after = report(capsys, demo_root, "--json")
    assert code == 0
    assert after["sessions"] == before["sessions"]
    assert after["remembered_sessions"] >= 1
    assert after["groups"] == before["groups"]  # the same figures, from the remembered row
    code, text = report(capsys, demo_root)
    assert "whose transcript is gone" in text.splitlines()[1]  # said on the header line
    code, without = report(capsys, demo_root, "--json", "--no-history")
    assert without["remembered_sessions"] == 0
    assert without["sessions"] == before["sessions"] - after["remembered_sessions"]


def test_a_report_measuring_what_the_last_one_kept_takes_the_other_lines_where_they_lie(
        capsys, demo_root: Path, monkeypatch: pytest.MonkeyPatch):
    """kept.json: the same rows measured and the file untouched since, the gone sessions' lines are taken where
    the last report found them, not read again with the rest; anything appended meanwhile (the hook's turn, a
    bad line) and the file is read whole again. Every report counts the same and warns the same."""
    report(capsys, demo_root, "--json")
    for path in interactive_transcripts(demo_root)[:2]:
        path.unlink()
    whole_reads: list[int] = []
    real = history._read
    monkeypatch.setattr(history, "_read", lambda: whole_reads.append(1) or real())

    def reported() -> tuple[tuple, int, str]:
        before = len(whole_reads)
        assert main(["report", "--all", "--json"]) == 0
        out, err = capsys.readouterr()
        data = json.loads(out)
        return (data["groups"], data["sessions"], data["remembered_sessions"]), len(whole_reads) - before, err

    cold, read, _ = reported()
    assert read == 1 and cold[2] == 2
    assert reported()[:2] == (cold, 0)  # from kept.json
    with history.history_path().open("ab") as handle:
        handle.write(b'{"id": "s9", "agent": "claude-code"}\n')  # no figures: refused
    figures, read, err = reported()
    assert (figures, read) == (cold, 1) and "the history: 1 line with impossible figures" in err
    figures, read, again = reported()
    assert (figures, read, again) == (cold, 0, err)  # the same warning, from kept.json
    note = history.history_path().parent / "kept.json"
    kept = json.loads(note.read_text())
    assert len(kept["other"]) == 2
    kept["other"][0][2] += 1  # a line's place off by a byte: not that session's row
    note.write_text(json.dumps(kept))
    assert reported()[:2] == (cold, 1)
    note.write_text("{not json")
    assert reported()[:2] == (cold, 1)


def test_a_report_on_a_named_folder_is_on_it_alone(capsys, demo_root: Path, tmp_path: Path):
    report(capsys, demo_root, "--json")
    other = write_demo_corpus(tmp_path / "other")
    interactive_transcripts(other)[0].unlink()
    code, data = report(capsys, demo_root, "--json", "--claude-root", str(other))
    assert data["remembered_sessions"] == 0
    assert data["sessions"] == len(list(other.rglob("*.jsonl")))


def test_the_window_applies_to_remembered_sessions(capsys, demo_root: Path):
    report(capsys, demo_root, "--json")
    for path in interactive_transcripts(demo_root):
        path.unlink()
    code, _ = report(capsys, demo_root, "--json", "--since", "2001-01-01", "--until", "2001-01-02")
    assert code == 2  # every remembered session started long after that window


def test_another_tokenizer_replaces_the_row_and_is_not_pooled(capsys, demo_root: Path):
    report(capsys, demo_root, "--json")
    report(capsys, demo_root, "--json", "--estimate")  # measured again with chars/4: replaces every row
    tokenizers = {row["tokenizer"] for row in history.recall().values()}
    assert len(tokenizers) == 1 and "o200k" not in tokenizers.pop()
    for path in interactive_transcripts(demo_root):
        path.unlink()
    code, data = report(capsys, demo_root, "--json")  # o200k_base now: the remembered rows are chars/4
    assert data["remembered_sessions"] == 0 and data["remembered_other_tokenizer"] > 0
    code, text = report(capsys, demo_root)
    assert "counted with another tokenizer, left out" in text


def test_history_holds_no_text_or_paths(capsys, demo_root: Path):
    report(capsys, demo_root, "--json")
    data = history.history_path().read_text()
    assert str(demo_root) not in data and "compaction_snapshots" not in data
    for path in demo_root.rglob("*.jsonl"):
        for line in path.read_text().splitlines():
            try:
                message = json.loads(line).get("message")
            except ValueError:  # the demo holds a malformed line and a torn last line on purpose
                continue
            content = message.get("content") if isinstance(message, dict) else None
            if isinstance(content, str) and len(content) > 12:
                assert content[:40] not in data


def test_the_last_line_wins_and_a_torn_line_is_skipped(tmp_path: Path):
    base = {"id": "s1", "agent": "claude-code", "tokenizer": "o200k_base", "method": 5, **FIGURES}
    history.remember([{**base, "api_calls": 1, "last_activity": "2026-11-01T10:00:00Z"},
                      {**base, "api_calls": 3, "last_activity": "2026-11-01T11:00:00Z"},
                      {**base, "api_calls": 2, "last_activity": "2026-11-01T10:30:00Z"}])  # a stale live state
    with history.history_path().open("ab") as handle:
        handle.write(b'{"id": "s2", "agent": "claude-co')
    remembered = history.recall()
    assert list(remembered) == [("claude-code", "s1")]
    assert remembered[("claude-code", "s1")]["api_calls"] == 3
    history.remember([{**base, "tokenizer": "estimate", "api_calls": 2, "last_activity": "2026-11-01T10:30:00Z"}])
    assert history.recall()[("claude-code", "s1")]["tokenizer"] == "estimate"  # another tokenizer replaces


def test_two_sessions_of_one_id_are_remembered_once_not_at_every_report(tmp_path: Path):
    """Two roots may each hold a transcript.jsonl: one key, two rows. The first is remembered; the next report,
    measuring the same two, adds nothing (it added both again at every report, the file growing without end)."""
    base = {"id": "transcript", "agent": "claude-code", "tokenizer": "t", "method": 5, **FIGURES}
    measured = [{**base, "api_calls": 1}, {**base, "api_calls": 2}]
    history.keep(measured)
    lines = history.history_path().read_bytes().count(b"\n")
    for _ in range(3):
        assert not history.keep(measured)  # nothing remembered beyond the two measured
    assert history.history_path().read_bytes().count(b"\n") == lines == 1
    assert history.recall()[("claude-code", "transcript")]["api_calls"] == 1


def test_a_long_history_is_compacted(tmp_path: Path):
    rows = [{"id": f"s{index % 10}", "agent": "claude-code", "tokenizer": "t", "method": 5, "api_calls": 0, **FIGURES,
             "last_activity": f"2026-11-01T10:{index // 10:02d}:00Z"} for index in range(600)]
    history.remember(rows)
    assert len(history.recall()) == 10
    assert len(history.history_path().read_bytes().splitlines()) == 10


def test_an_unwritable_history_does_not_stop_the_report(capsys, demo_root: Path):
    history.history_path().parent.mkdir(parents=True)
    history.history_path().mkdir()  # a folder where the file should be
    code, data = report(capsys, demo_root, "--json")
    assert code == 0 and data["sessions"] > 0


@pytest.mark.parametrize("event, kept", [("Stop", True), ("PostToolBatch", False)])
def test_the_hook_remembers_a_session_at_a_turns_end(demo_root: Path, event: str, kept: bool):
    transcript = interactive_transcripts(demo_root)[0]
    payload = {"hook_event_name": event, "session_id": transcript.stem, "transcript_path": str(transcript)}
    hook.run_hook(json.dumps(payload).encode())
    remembered = history.recall()
    assert (("claude-code", transcript.stem) in remembered) == kept
    if kept:
        assert remembered[("claude-code", transcript.stem)]["api_calls"] > 0


def test_collect_remembers_what_it_measured(capsys, demo_root: Path, tmp_path: Path):
    assert main(["collect", "--all", "--rows", str(tmp_path / "rows.jsonl")]) == 0
    capsys.readouterr()
    deleted = interactive_transcripts(demo_root)
    for path in deleted:
        path.unlink()
    code, data = report(capsys, demo_root, "--json")
    assert code == 0 and data["remembered_sessions"] == len(deleted) > 0  # their subagents' files remain
