"""The report's sums kept for the rows they were summed from (report/sums_memo.py): a repeated report over the
same rows says the same figures without summing them again; another row, another price table, other code or a
broken memo sums them again, and the figures are then a fresh state folder's."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from xshare.cli import main
from xshare.demo import write_demo_corpus
from xshare.report import periods, sums_memo


@pytest.fixture
def demo_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    return write_demo_corpus(tmp_path / "claude")


@pytest.fixture
def sums(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times the rows were summed."""
    summed: list[int] = []
    real = periods.sum_rows

    def counted(*args, **kwargs):
        summed.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(periods, "sum_rows", counted)
    return summed


def report(capsys, *extra: str) -> str:
    assert main(["report", "--all", *extra]) == 0
    return capsys.readouterr().out


def figures(capsys, *extra: str) -> dict:
    """A JSON report's figures: all of it but the moment it ran and how its texts were counted (a second
    report finds every count remembered)."""
    data = json.loads(report(capsys, "--json", *extra))
    return {key: value for key, value in data.items() if key not in ("window", "counter", "counter_note")}


def fresh(capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *extra: str) -> dict:
    """The same report's figures from a new state folder: nothing kept from before."""
    with monkeypatch.context() as scoped:
        scoped.setenv("XSHARE_HOME", str(tmp_path / f"fresh-{len(list(tmp_path.glob('fresh-*')))}"))
        return figures(capsys, *extra)


def test_a_repeated_report_says_the_same_without_summing_the_rows_again(
        capsys, demo_root: Path, sums: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    cold = figures(capsys)  # the rows as measured, in the order the reading finished them
    warm = figures(capsys)  # the rows from the cache, in its order: summed again, the same figures
    assert warm == cold and sums_memo.memo_path().is_file()
    summed = len(sums)
    text = report(capsys)
    again, again_text = figures(capsys), report(capsys)
    assert (again, again_text) == (warm, text)
    assert len(sums) == summed  # none summed: the memo's rows, table and code are these reports'
    assert again["sessions"] > 0 and again["dollars"]["dollars"] > 0  # the dollars came back with the groups
    assert fresh(capsys, tmp_path, monkeypatch) == again


def one_more_call(transcript: Path) -> None:
    """The transcript's last API call made once more, a minute later, with a larger prompt: a new call."""
    lines = transcript.read_bytes().splitlines()
    last = json.loads(next(line for line in reversed(lines) if b'"assistant"' in line and b'"usage"' in line))
    last["message"]["id"] += "-again"
    last["requestId"] = last.get("requestId", "req") + "-again"
    last["uuid"] = last["uuid"][:-4] + "beef"
    last["parentUuid"] = json.loads(lines[-1]).get("uuid")
    last["timestamp"] = last["timestamp"][:14] + "59" + last["timestamp"][16:]
    usage = last["message"]["usage"]
    usage["cache_read_input_tokens"] = usage.get("cache_read_input_tokens", 0) + 900
    transcript.write_bytes(b"\n".join([*lines, json.dumps(last).encode()]) + b"\n")


def test_a_grown_transcript_is_summed_again_as_a_fresh_state_folder_sums_it(
        capsys, demo_root: Path, sums: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    before = figures(capsys)
    transcript = max(demo_root.rglob("*.jsonl"), key=lambda path: path.stat().st_size)
    one_more_call(transcript)
    summed = len(sums)
    after = figures(capsys)
    assert len(sums) == summed + 1
    assert after == fresh(capsys, tmp_path, monkeypatch)
    assert after["groups"] != before["groups"]


def test_another_price_table_is_summed_again(capsys, demo_root: Path, sums: list[int], tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch):
    shipped = figures(capsys)
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"date": "2026-12-01", "models": {"claude-sonnet-4-5": {
        "input": 30.0, "cache_read": 3.0, "cache_write_5m": 37.5, "cache_write_1h": 60.0, "output": 150.0}}}))
    priced = figures(capsys, "--prices", str(prices))
    assert priced["dollars"] != shipped["dollars"] and len(sums) == 2
    assert priced == fresh(capsys, tmp_path, monkeypatch, "--prices", str(prices))
    assert figures(capsys) == shipped  # the shipped table again: summed again, as before
    assert figures(capsys, "--no-dollars")["dollars"] is None and len(sums) == 5


@pytest.mark.parametrize("memo", [b"{not json", b'{"layout": 1, "key": "x", "groups": {}}', "dollars broken"])
def test_a_memo_that_is_broken_or_not_this_reports_is_passed_over(capsys, demo_root: Path, sums: list[int],
                                                                  memo: bytes | str):
    first = figures(capsys)
    path = sums_memo.memo_path()
    if memo == "dollars broken":  # this report's key, its dollars' sums not numbers: summed again
        kept = json.loads(path.read_bytes())
        kept["dollars"]["by_model"] = {"claude-sonnet-4-5": ["many", 1]}
        path.write_text(json.dumps(kept))
    else:
        path.write_bytes(memo)
    assert figures(capsys) == first
    assert len(sums) == 2


def test_periods_and_marks_are_summed_from_the_rows_every_time(capsys, demo_root: Path, sums: list[int]):
    first = figures(capsys, "--by", "week")
    assert figures(capsys, "--by", "week") == first and "over_time" in first
    assert len(sums) == 2
    assert main(["mark", "tried a map of the code", "--at", "2026-01-01"]) == 0
    capsys.readouterr()
    marked = figures(capsys)
    assert "marks" in marked and len(sums) == 3
    assert figures(capsys) == marked and len(sums) == 4


def test_the_code_stamp_changes_with_any_file_of_the_package(tmp_path: Path):
    package = tmp_path / "xshare"
    (package / "report").mkdir(parents=True)
    (package / "__pycache__").mkdir()
    module, table = package / "report" / "render.py", package / "prices.json"
    module.write_text("A = 1\n")
    table.write_text("{}")
    stamp = sums_memo.code_stamp(package)
    (package / "__pycache__" / "render.cpython-311.pyc").write_bytes(b"compiled")
    (package / "notes.txt").write_text("not code")
    assert sums_memo.code_stamp(package) == stamp  # compiled copies and other files are not the code
    module.write_text("A = 2\n")  # the same size: its time tells it apart
    os.utime(module, ns=(1, 1))
    edited = sums_memo.code_stamp(package)
    assert edited != stamp
    table.write_text('{"date": "2026-12-01"}')
    os.utime(table, ns=(1, 1))
    assert sums_memo.code_stamp(package) not in (stamp, edited)
    assert sums_memo.code_stamp(tmp_path / "gone") is None  # not a folder xshare can list: no stamp


def test_without_a_code_stamp_the_rows_are_summed_every_time(capsys, demo_root: Path, sums: list[int],
                                                              monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(sums_memo, "code_stamp", lambda: None)  # as from a zipped install
    first = figures(capsys)
    assert figures(capsys) == first and len(sums) == 2 and not sums_memo.memo_path().exists()
