"""The rows file and the nightly merge (spec review 3b: a session that wrote since is collected again)."""

from __future__ import annotations

from pathlib import Path

from xshare.measure.ledger import CATEGORIES
from xshare.report.rows import merge_rows, read_rows, write_rows


def row(session_id: str, last: str | None, calls: int = 1, **extra) -> dict:
    figures = {"prompt_tokens_billed": 0, "context_tokens": 0, "exploration_share_of_context": None,
               "billed_tokens": dict.fromkeys(CATEGORIES, 0), "first_time_tokens": dict.fromkeys(CATEGORIES, 0)}
    return {"id": session_id, "agent": "claude-code", "last_activity": last, "api_calls": calls, **figures, **extra}


def test_new_sessions_are_appended_and_known_ones_kept():
    merged, added, replaced = merge_rows([row("a", "2026-11-01T10:00:00Z")],
                                         [row("a", "2026-11-01T10:00:00Z"), row("b", "2026-11-02T10:00:00Z")])
    assert (added, replaced) == (1, 0)
    assert [r["id"] for r in merged] == ["a", "b"]


def test_a_session_that_wrote_since_its_row_replaces_it():
    merged, added, replaced = merge_rows([row("a", "2026-11-01T10:00:00Z", calls=5)],
                                         [row("a", "2026-11-01T12:00:00Z", calls=9)])
    assert (added, replaced) == (0, 1)
    assert merged == [row("a", "2026-11-01T12:00:00Z", calls=9)]


def test_rows_from_before_last_activity_fall_back_to_ended_at_or_are_taken_once_more():
    old_with_end = {"id": "a", "agent": "claude-code", "ended_at": "2026-11-01T10:00:00Z", "api_calls": 5}
    old_without = {"id": "b", "agent": "claude-code", "api_calls": 5}
    merged, added, replaced = merge_rows(
        [old_with_end, old_without],
        [row("a", "2026-11-01T10:00:00Z"), row("b", "2026-11-01T10:00:00Z", calls=7)],
    )
    assert (added, replaced) == (0, 1)
    assert {r["id"]: r["api_calls"] for r in merged} == {"a": 5, "b": 7}


def test_same_id_from_two_agents_are_two_sessions():
    merged, added, _ = merge_rows([row("x", "2026-11-01T10:00:00Z")],
                                  [{**row("x", "2026-11-01T10:00:00Z"), "agent": "hermes"}])
    assert added == 1 and len(merged) == 2


def test_rows_file_round_trip_and_bad_lines(tmp_path: Path, capsys):
    path = tmp_path / "rows.jsonl"
    write_rows(path, [row("a", "2026-11-01T10:00:00Z"), row("b", None)])
    with path.open("ab") as handle:
        handle.write(b"{not json\n[1, 2]\n\n")
    assert [r["id"] for r in read_rows(path)] == ["a", "b"]
    assert "2 unreadable lines dropped" in capsys.readouterr().err
    assert read_rows(tmp_path / "missing.jsonl") == []
