"""What measuring Claude Code's transcripts came to, kept whole (agents/claude_code/outcome_cache.py): a report over
the same files as the last one, none changed, takes it without checking the rows cache; one more file, one
grown, one gone, another window's files or a broken outcome file are checked as before, with a fresh state
folder's figures."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from xshare.agents.claude_code import outcome_cache, rows_cache
from xshare.agents.claude_code.many import COPY_FILES
from xshare.cli import main
from xshare.demo import write_demo_corpus


@pytest.fixture
def roots(tmp_path: Path) -> list[str]:
    """The demo corpus, and a backup of one of its sessions in a second root (a copy: counted once)."""
    projects = write_demo_corpus(tmp_path / "claude")
    original = max(projects.glob("*/*.jsonl"), key=lambda path: path.stat().st_size)
    backup = tmp_path / "backup" / "projects" / original.parent.name / original.name
    backup.parent.mkdir(parents=True)
    shutil.copy2(original, backup)
    return ["--claude-root", str(tmp_path / "claude"), "--claude-root", str(tmp_path / "backup"),
            "--hermes-db", str(tmp_path / "none.db")]


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times the rows cache was checked."""
    loads: list[int] = []
    real = rows_cache.load
    monkeypatch.setattr(rows_cache, "load", lambda *args: loads.append(1) or real(*args))
    return loads


def figures(capsys, roots: list[str], *extra: str) -> tuple[dict, str]:
    """The report's figures (not the moment it ran, nor how its texts were counted) and its stderr."""
    assert main(["report", "--all", "--json", *roots, *extra]) == 0
    out, err = capsys.readouterr()
    data = json.loads(out)
    return {key: value for key, value in data.items() if key not in ("window", "counter", "counter_note")}, err


def fresh(capsys, roots: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    with monkeypatch.context() as scoped:
        scoped.setenv("XSHARE_HOME", str(tmp_path / f"fresh-{len(list(tmp_path.glob('fresh-*')))}"))
        return figures(capsys, roots)[0]


def test_a_report_over_the_last_reports_files_takes_what_it_came_to(capsys, roots: list[str], checked: list[int],
                                                                   tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    cold, err = figures(capsys, roots)
    assert f"{COPY_FILES}: 1" in err and outcome_cache.outcome_file().is_file() and len(checked) == 1
    warm, warm_err = figures(capsys, roots)
    assert (warm, warm_err) == (cold, err)  # the copy said once more, from what was kept
    assert len(checked) == 1  # the rows cache not checked
    assert warm == fresh(capsys, roots, tmp_path, monkeypatch)


def test_other_files_are_checked_in_the_rows_cache_as_before(capsys, roots: list[str], checked: list[int],
                                                             tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    figures(capsys, roots)
    transcripts = sorted((tmp_path / "claude" / "projects").glob("*/*.jsonl"))
    grown = transcripts[0]
    grown.write_bytes(grown.read_bytes() + grown.read_bytes().splitlines(keepends=True)[-1])
    gone = transcripts[-1]
    gone_bytes = gone.read_bytes()
    for change in ("grown", "gone", "back"):
        if change == "gone":
            gone.unlink()
        if change == "back":
            gone.write_bytes(gone_bytes)
        before = len(checked)
        after = figures(capsys, roots, "--no-history")[0]
        assert len(checked) == before + 1, change
        assert after == fresh(capsys, roots, tmp_path, monkeypatch), change
    before = len(checked)
    one_root = figures(capsys, roots[:2])[0]  # the backup root left out: its copy no longer in what is read
    assert len(checked) == before + 1 and one_root["sessions"] == after["sessions"]
    rows_cache.cache_file().unlink()  # the rows cache gone (an upgrade): what was made from it goes with it
    assert figures(capsys, roots[:2])[0] == one_root and len(checked) == before + 2


def test_rows_come_in_the_files_order_however_much_was_remembered(capsys, roots: list[str], tmp_path: Path):
    """The rows file (and so the session list's ties by start time) of a first report, of one that took the
    outcome, and of one that checked every row in the rows cache: the same bytes, in the files' order, not the
    order the reading ended in."""
    written = {}
    for way in ("first", "outcome taken", "rows cache checked", "one file read again"):
        if way == "rows cache checked":
            outcome_cache.outcome_file().unlink()
        if way == "one file read again":
            outcome_cache.outcome_file().unlink()
            rows_cache.cache_file().write_bytes(b"".join(rows_cache.cache_file().read_bytes().splitlines(True)[:-1]))
        written[way] = tmp_path / f"{way}.jsonl"
        figures(capsys, roots, "--rows", str(written[way]))
    assert len({path.read_bytes() for path in written.values()}) == 1


@pytest.mark.parametrize("damage", ["torn", "another tokenizer", "settling not JSON", "a row not JSON"])
def test_a_broken_outcome_file_is_passed_over(capsys, roots: list[str], checked: list[int], damage: str):
    kept, _ = figures(capsys, roots)
    path = outcome_cache.outcome_file()
    lines = path.read_bytes().split(b"\n")
    if damage == "torn":
        path.write_bytes(b"\n".join(lines)[:-40])
    elif damage == "another tokenizer":
        path.write_bytes(b"\n".join([lines[0].replace(b"o200k_base", b"chars/4"), *lines[1:]]))
    elif damage == "settling not JSON":
        path.write_bytes(b"\n".join([lines[0], b"{not json", *lines[2:]]))
    else:
        path.write_bytes(b"\n".join([*lines[:2], b"[1, 2]", *lines[3:]]))
    assert figures(capsys, roots)[0] == kept
    assert len(checked) == 2
