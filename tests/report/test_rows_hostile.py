"""Issue 29, the rows file's part: `--rows FILE` naming a file that is not a rows file (a settings.json, a
CSV, notes) is refused and left as it was; two `collect` runs merging into one file lose no session."""

from __future__ import annotations

import json
import stat
import threading
from pathlib import Path

import pytest

from xshare.cli import main
from xshare.demo import write_demo_corpus
from xshare.report import rows as rows_file
from xshare.report.rows import NOT_ROWS, merge_into, read_rows

NOT_ROWS_FILES = {
    "settings.json": '{\n  "statusLine": {"type": "command", "command": "xshare statusline"}\n}\n',
    "sessions.csv": "id,agent,share\na1,claude-code,0.41\n",
    "notes.md": "# what changed this week\n- added an index\n",
    "array.json": '[{"agent": "claude-code", "id": "a1"}]\n',
}


@pytest.fixture(scope="module")
def demo_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_demo_corpus(tmp_path_factory.mktemp("demo"))


@pytest.mark.parametrize("name", sorted(NOT_ROWS_FILES))
@pytest.mark.parametrize("command", ["collect", "report"])
def test_a_file_that_is_not_a_rows_file_is_refused_and_left_as_it_was(capsys, tmp_path: Path, demo_root: Path,
                                                                      command: str, name: str):
    path = tmp_path / name
    path.write_text(NOT_ROWS_FILES[name])
    path.chmod(0o644)
    code = main([command, "--all", "--rows", str(path), "--claude-root", str(demo_root)])
    captured = capsys.readouterr()
    assert code == 1 and captured.out == ""
    assert captured.err.splitlines() == [f"xshare: could not write the rows file {path}: {NOT_ROWS}"]
    assert path.read_text() == NOT_ROWS_FILES[name] and stat.S_IMODE(path.stat().st_mode) == 0o644


def test_an_empty_file_and_a_rows_file_are_still_written(capsys, tmp_path: Path, demo_root: Path):
    path = tmp_path / "rows.jsonl"
    path.write_text("")
    assert main(["collect", "--all", "--rows", str(path), "--claude-root", str(demo_root)]) == 0
    first = capsys.readouterr().out
    count = len(read_rows(path))
    assert count > 0 and f": {count} sessions added, 0 replaced" in first
    assert main(["collect", "--all", "--rows", str(path), "--claude-root", str(demo_root)]) == 0
    assert ": 0 sessions added, 0 replaced" in capsys.readouterr().out and len(read_rows(path)) == count


def test_two_collects_merging_into_one_file_lose_no_session(capsys, tmp_path: Path, demo_root: Path, monkeypatch):
    """Run A reads the file, then run B merges and writes while A has not written yet: without a lock A's
    write would drop B's sessions. Here B waits for A (A gives B a second to get in the way first)."""
    collected = tmp_path / "all.jsonl"
    assert main(["collect", "--all", "--rows", str(collected), "--claude-root", str(demo_root)]) == 0
    capsys.readouterr()
    rows = [json.loads(line) for line in collected.read_text().splitlines()]
    first, second = rows[: len(rows) // 2], rows[len(rows) // 2:]
    path = tmp_path / "team.jsonl"
    a_has_read, b_done = threading.Event(), threading.Event()
    original = rows_file.read_packed

    def read_then_let_b_in(given: Path):
        found = original(given)
        if not a_has_read.is_set():  # run A, which read first
            a_has_read.set()
            b_done.wait(timeout=1.0)  # without the lock B finishes here; with it, B cannot start
        return found

    monkeypatch.setattr(rows_file, "read_packed", read_then_let_b_in)

    def run_b() -> None:
        a_has_read.wait(timeout=10)
        merge_into(path, second)
        b_done.set()

    b = threading.Thread(target=run_b)
    b.start()
    merge_into(path, first)
    b.join(timeout=30)
    assert sorted(row["id"] for row in read_rows(path)) == sorted(row["id"] for row in rows)
