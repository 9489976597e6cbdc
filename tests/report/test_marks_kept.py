"""Issue 29, the marks' part: a mark xshare cannot read (a date typo, a newer format) stays in the marks
file through every `xshare mark` and `mark --remove`; a marks file that is no list at all is left as it is,
refused in one line."""

from __future__ import annotations

import json

import pytest

from xshare.cli import main
from xshare.report import periods
from xshare.report.periods import marks_path, read_marks

READABLE = {"label": "added an index", "at": "2026-11-10T09:00:00+00:00"}
TYPO = {"label": "moved to opus", "at": "2026-13-02T09:00:00+00:00"}  # month 13
NEWER = {"label": {"en": "a rule in CLAUDE.md"}, "at": "2026-11-20T09:00:00+00:00", "v": 2}


def stored() -> list:
    return json.loads(marks_path().read_text())


def mark(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["mark", *argv])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.out, captured.err


def test_marks_xshare_cannot_read_outlive_adding_and_removing(capsys):
    marks_path().parent.mkdir(parents=True)
    marks_path().write_text(json.dumps([READABLE, TYPO, NEWER]))
    code, out, _ = mark(capsys, "pinned the model", "--at", "2026-11-15")
    assert code == 0 and "pinned the model" in out
    assert stored()[:3] == [READABLE, TYPO, NEWER] and stored()[3]["label"] == "pinned the model"
    code, out, err = mark(capsys)  # the list numbers what it can read, and says the rest are left out
    assert code == 0 and out.splitlines() == ["1  2026-11-10 09:00 UTC  added an index",
                                              "2  2026-11-15 00:00 UTC  pinned the model"]
    assert "could not be read" in err
    code, out, _ = mark(capsys, "--remove", "1")
    assert code == 0 and "added an index" in out
    assert stored()[:2] == [TYPO, NEWER] and [m["label"] for m in read_marks()] == ["pinned the model"]


def test_a_mark_another_run_removed_meanwhile_is_said(capsys, monkeypatch):
    """Between counting the marks and removing one, another `mark --remove` may take it: said, not a crash."""
    marks_path().parent.mkdir(parents=True)
    marks_path().write_text(json.dumps([READABLE]))
    real = periods.remove_mark

    def after_another_run(number: int) -> dict | None:
        marks_path().write_text("[]")  # the other run got there first
        return real(number)

    monkeypatch.setattr(periods, "remove_mark", after_another_run)
    code, out, err = mark(capsys, "--remove", "1")
    assert code == 2 and out == "" and "no mark 1" in err and stored() == []


@pytest.mark.parametrize("content", ['{"version": 3, "marks": []}', '[{"label": "half', "not json"])
def test_a_marks_file_that_is_no_list_is_left_as_it_is(capsys, content: str):
    marks_path().parent.mkdir(parents=True)
    marks_path().write_text(content)
    code, out, err = mark(capsys, "a change")
    assert code == 1 and out == ""
    assert [line for line in err.splitlines() if "could not store" in line] == [
        f"xshare: could not store the mark: {marks_path()} holds no list of marks xshare can read; left as it is "
        "(fix or remove it)"]
    assert marks_path().read_text() == content
