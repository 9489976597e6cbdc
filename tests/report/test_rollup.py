"""`xshare report --from-rows`: a team's rows files summed as the report sums sessions, streaming."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from xshare.cli import main
from xshare.report import identity
from xshare.report.render import summarize
from xshare.report.rollup import read_rows_files


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def demo_rows(tmp_path: Path, capsys) -> Path:
    path = tmp_path / "rows.jsonl"
    assert run(capsys, "report", "--demo", "--rows", str(path))[0] == 0
    return path


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_rollup_of_one_file_equals_the_report_of_its_rows(demo_rows: Path):
    rows = load(demo_rows)
    rollup = read_rows_files([demo_rows], lambda row: "in")
    assert rollup.groups() == summarize(rows)
    assert rollup.rows == len(rows) and len(rollup.machines) == 1 and len(rollup.people) == 1


def test_rows_carry_a_random_machine_id_that_stays(demo_rows: Path, capsys, tmp_path: Path):
    machines = {row["machine"] for row in load(demo_rows)}
    assert machines == {identity.machine_id()} and len(machines.pop()) == 32
    assert all("person" not in row for row in load(demo_rows))  # none unless the user sets one
    again = tmp_path / "again.jsonl"
    run(capsys, "report", "--demo", "--rows", str(again))
    assert {row["machine"] for row in load(again)} == {identity.machine_id()}


def test_machines_people_duplicates_and_bad_lines(demo_rows: Path, tmp_path: Path, capsys,
                                                  monkeypatch: pytest.MonkeyPatch):
    rows = load(demo_rows)
    second = tmp_path / "second.jsonl"  # another machine, with a person id set by its team
    second.write_text("".join(json.dumps({**row, "machine": "m2", "person": "alice"}) + "\n" for row in rows)
                      + "not json\n" + '{"id": "x"}\n')
    code, out, err = run(capsys, "report", "--all", "--json", "--from-rows", str(demo_rows), str(second),
                         str(demo_rows))
    data = json.loads(out)
    assert code == 0 and data["sessions"] == 2 * len(rows)
    assert data["rollup"]["machines"] == 2 and data["rollup"]["people"] == 2
    assert data["rollup"]["duplicate_rows"] == len(rows) and data["rollup"]["unreadable_lines"] == 2
    assert "given twice" in err and "unreadable lines: 2" in err
    assert data["groups"] == summarize(rows + rows)


def test_tokenizers_are_never_pooled(demo_rows: Path, tmp_path: Path, capsys):
    rows = load(demo_rows)
    other = tmp_path / "estimate.jsonl"
    other.write_text("".join(json.dumps({**row, "machine": "m3", "tokenizer": "chars/4 estimate"}) + "\n"
                             for row in rows[:2]))
    code, out, _ = run(capsys, "report", "--all", "--json", "--from-rows", str(demo_rows), str(other))
    data = json.loads(out)
    assert data["tokenizer"] == rows[0]["tokenizer"] and data["groups"] == summarize(rows)
    assert data["rollup"]["other_tokenizers"] == {"chars/4 estimate": 2}
    code, text, _ = run(capsys, "report", "--all", "--from-rows", str(demo_rows), str(other))
    assert "2 sessions counted with chars/4 estimate left out" in text


def test_the_window_applies_and_nothing_in_it_exits_2(demo_rows: Path, capsys):
    code, _, err = run(capsys, "report", "--since", "2001-01-01", "--until", "2001-02-01", "--from-rows",
                       str(demo_rows))
    assert code == 2 and "outside the window" in err


def test_a_missing_file_is_said_and_the_rest_read(demo_rows: Path, tmp_path: Path, capsys):
    code, out, err = run(capsys, "report", "--all", "--json", "--from-rows", str(tmp_path / "gone.jsonl"),
                         str(demo_rows))
    assert code == 0 and "could not be read" in err and json.loads(out)["rollup"]["files"] == 1


def test_a_row_with_a_bad_figure_changes_no_sum(demo_rows: Path, tmp_path: Path):
    rows = load(demo_rows)
    bad = tmp_path / "bad.jsonl"
    broken = [{**rows[0], "id": "b1", "context_tokens": "many"},
              {**rows[0], "id": "b2", "billed_tokens": {**rows[0]["billed_tokens"], "shell": None}},
              {**rows[0], "id": "b3", "first_time_tokens": {}}]
    bad.write_text("".join(json.dumps(row) + "\n" for row in broken))
    rollup = read_rows_files([demo_rows, bad], lambda row: "in")
    assert sum(rollup.impossible.values()) == 3 and rollup.bad_lines == 0 and rollup.groups() == summarize(rows)
