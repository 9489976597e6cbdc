"""A 1.0.x resume (a new file repeating the history it resumes, unmarked) is read once by a report: after the
file it copies and in the same process, so its copied calls are known as that file's as they come
(agents/claude_code/resumes.py, copies.EarlierCalls), with the rows that reading it again with its copies named
gave. An order that misleads costs a second reading, never a figure.

Fixtures are invented sessions (tests/support/claude_2_1_fixtures.py, via test_reader_forks.a_fork)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agents.claude_code.test_reader_forks import RESUMED_ID, a_fork, read
from xshare.agents.claude_code import many, resumes
from xshare.agents.claude_code import transcript as claude
from xshare.agents.claude_code.copies import EarlierCalls, lost_calls
from xshare.agents.claude_code.transcript import ClaudeTranscript, describe
from xshare.agents.common import counting
from xshare.measure import tokens
from xshare.measure.ids import path_key


def compact(path: Path) -> None:
    """The rows as Claude Code writes them: JSON without spaces."""
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps(row, separators=(",", ":")) + "\n" for row in rows))


def resumes_in_projects(tmp_path: Path, projects: int = 3) -> list[Path]:
    """A session and its 1.0.x resume in each of a few projects, every pair with its own ids."""
    for n in range(projects):
        for path in a_fork(tmp_path / "cc" / f"root{n}", marked=False)[:2]:
            compact(path)
            text = path.read_text().replace('"req_', f'"req{n}_').replace('"msg_', f'"msg{n}_')
            for old in (path.stem, *(other.stem for other in path.parent.glob("*.jsonl"))):
                text = text.replace(old, f"{old[:-1]}{n}")
            path.with_name(f"{path.stem[:-1]}{n}.jsonl").write_text(text)
            path.unlink()
    return [tmp_path / "cc" / f"root{n}" / "projects" for n in range(projects)]


def settled_by_reading_again(roots: list[Path]) -> dict[str, dict]:
    """Each file's row as a report read it before: every file alone, the copies settled across them, then
    each file holding another's calls read again with those named."""
    files = claude.discover(roots)
    alone = {path_key(file.path): read(file.path) for file in files}
    lost = lost_calls({name: (describe(Path(name)).source, dict(transcript.copies.times.items()))
                       for name, transcript in alone.items()})
    return {read(Path(name)).file.session_id: read(Path(name), lost[name]).row() for name in alone}


def reads_logged(monkeypatch: pytest.MonkeyPatch, log: Path) -> None:
    """Every transcript read from now on, by any process (a pool's forked workers too), a line in `log`."""
    real = many.read_file

    def logged(file, current, copied=(), detail=False, earlier=None):
        with log.open("a") as out:
            out.write(f"{file.path}\n")
        return real(file, current, copied, detail, earlier)

    monkeypatch.setattr(many, "read_file", logged)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_resume_is_read_once_with_the_rows_of_reading_it_again(tmp_path: Path, monkeypatch, workers: int):
    monkeypatch.setattr(counting, "PARALLEL_MIN_BYTES", 0)
    roots = resumes_in_projects(tmp_path)
    reads_logged(monkeypatch, tmp_path / "reads.log")
    files = claude.discover(roots)
    measured = many.measure_claude(files, counting.LazyCounter(tokens.choose()), use_cache=False, workers=workers)
    read_paths = (tmp_path / "reads.log").read_text().splitlines()
    assert sorted(read_paths) == sorted(str(file.path) for file in files)  # each once: none read again
    rows = {row["id"]: row for row in measured.rows}
    assert rows == settled_by_reading_again(roots)
    assert [rows[f"{RESUMED_ID[:-1]}{n}"]["api_calls"] for n in range(3)] == [2, 2, 2]  # its first two: the parent's
    assert all(len(copied) == 2 for copied in measured.copied.values()) and len(measured.copied) == 3


def test_a_resume_read_before_the_file_it_copies_is_read_again_with_the_same_rows(tmp_path: Path, monkeypatch):
    """The order is only a guess: a resume whose first call seems the earlier is read first, knows nothing of
    its copies, and is read again once every file is settled; the file it copies bills its calls either way."""
    roots = resumes_in_projects(tmp_path, projects=1)
    real = resumes.first_lines
    monkeypatch.setattr(resumes, "first_lines", lambda path: ("0", real(path)[1]) if RESUMED_ID[:-1] in path.name
                        else real(path))
    reads_logged(monkeypatch, tmp_path / "reads.log")
    files = claude.discover(roots)
    measured = many.measure_claude(files, counting.LazyCounter(tokens.choose()), use_cache=False, workers=1)
    read_paths = [Path(line).name for line in (tmp_path / "reads.log").read_text().splitlines()]
    resumed, parent = (f"{RESUMED_ID[:-1]}0.jsonl", next(file.path.name for file in files
                                                         if not file.path.name.startswith(RESUMED_ID[:-1])))
    assert read_paths == [resumed, parent, resumed]
    assert {row["id"]: row for row in measured.rows} == settled_by_reading_again(roots)


def test_a_file_read_after_another_reads_as_copies_the_calls_that_one_holds_earlier(tmp_path: Path):
    parent_path, copy_path, _ = a_fork(tmp_path / "cc", marked=False)
    parent, alone = read(parent_path), read(copy_path)
    held = {path_key(path): ("interactive", dict(transcript.copies.times.items()))
            for path, transcript in ((parent_path, parent), (copy_path, alone))}
    lost = lost_calls(held)[path_key(copy_path)]
    earlier = EarlierCalls()
    earlier.add(path_key(parent_path), "interactive", parent.copies.times)
    after = ClaudeTranscript(describe(copy_path), tokens.Counter(tokens.choose()))
    after.copies.after(earlier, "interactive", path_key(copy_path))
    after.catch_up()
    assert set(after.copies.settled) == lost and len(lost) == 2
    assert after.row() == read(copy_path, lost).row() and after.row()["api_calls"] == 2
    # its own calls as read alone: what settling compares, the copies' times included
    assert after.copies.times.to_json() == alone.copies.times.to_json()
    # the other way round, the parent holds those calls earlier: it bills them whatever was read before it
    earlier = EarlierCalls()
    earlier.add(path_key(copy_path), "interactive", alone.copies.times)
    parent_after = ClaudeTranscript(describe(parent_path), tokens.Counter(tokens.choose()))
    parent_after.copies.after(earlier, "interactive", path_key(parent_path))
    parent_after.catch_up()
    assert parent_after.copies.settled == [] and parent_after.row() == parent.row()


def test_a_resume_and_the_file_it_copies_are_one_family_read_in_the_order_of_their_first_calls(tmp_path: Path):
    roots = resumes_in_projects(tmp_path)
    pairs = [sorted((root / "-home-dev-app").glob("*.jsonl"), key=lambda path: path.name.startswith(RESUMED_ID[:-1]))
             for root in roots]
    # the second resume's calls its own, its first rows naming the session it resumes (a resume after a compaction)
    rows = [json.loads(line) for line in pairs[1][1].read_text().splitlines()]
    for row in rows:
        row.update({"requestId": f"new_{row['requestId']}"} if "requestId" in row else {})
    next(row for row in rows if row.get("type") == "user")["sessionId"] = pairs[1][0].stem
    pairs[1][1].write_text("".join(json.dumps(row, separators=(",", ":")) + "\n" for row in rows))
    pairs[2][1].unlink()  # the third session alone
    files = claude.discover(roots)
    found = [[files[index].path for index in family]
             for family in resumes.families(files, [file.path.stat().st_size for file in files])]
    assert sorted(found) == sorted([pairs[0], pairs[1], pairs[2][:1]])  # each resume after the file it copies
    assert found[-1] == pairs[2][:1]  # the largest families first
    parent_time, parent_ids = resumes.first_lines(pairs[0][0])
    copy_time, copy_ids = resumes.first_lines(pairs[0][1])
    assert parent_time < copy_time and parent_ids & copy_ids  # the same first call, copied later


def test_the_first_lines_of_what_is_no_transcript_tie_it_to_nothing(tmp_path: Path):
    (tmp_path / "empty.jsonl").write_bytes(b"")
    (tmp_path / "prompt.jsonl").write_text(json.dumps({"type": "user", "message": "x" * 200_000}) + "\n")
    (tmp_path / "folder.jsonl").mkdir()
    for name in ("empty.jsonl", "prompt.jsonl", "folder.jsonl", "gone.jsonl"):
        assert resumes.first_lines(tmp_path / name) == ("\uffff", frozenset())
