"""Which counter counts a report's new texts, and why, as its Tokenizer line says (issue 34): fastokens on a large
cold report, tiktoken below its crossover, when it is ruled out, missing or broken (said once, the figures the
same), and no tokenizer at all when every count is remembered; on the demo corpus, through the report itself."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from xshare.agents.common import counting
from xshare.cli import main
from xshare.demo import write_demo_corpus
from xshare.measure import tokens

# another xshare process counting one text into the count store (an earlier run, a report's worker)
COUNT_ONE = "from xshare.measure import tokens; c = tokens.Counter(tokens.choose()); c.count('{}'); c.flush()"
REMEMBERED = "every count remembered from earlier runs: no tokenizer loaded"


@pytest.fixture
def demo_root(tmp_path: Path) -> Path:
    return write_demo_corpus(tmp_path / "claude")


def report(capsys, root: Path, *flags: str) -> tuple[dict, str, str]:
    """The JSON report of `root` (its counter's fields), and the text report's Tokenizer line and stderr."""
    assert main(["report", "--all", "--json", "--no-dollars", "--claude-root", str(root.parent), *flags]) == 0
    data = json.loads(capsys.readouterr().out)
    assert main(["report", "--all", "--no-dollars", "--claude-root", str(root.parent), *flags]) == 0
    out, err = capsys.readouterr()
    (line,) = [line for line in out.splitlines() if line.startswith("Tokenizer:")]
    return data, line, err


def figures(data: dict) -> dict:
    return {key: value for key, value in data.items() if key not in ("counter", "counter_note", "window")}


def test_a_small_cold_report_is_counted_by_tiktoken_and_says_fastokens_would_not_pay(capsys, demo_root: Path,
                                                                                      monkeypatch):
    monkeypatch.delenv("XSHARE_COUNTER", raising=False)
    data, line, _ = report(capsys, demo_root, "--no-cache")
    assert data["tokenizer"] == "o200k_base" and data["counter"] == "tiktoken"
    assert data["counter_note"].startswith("fewer texts than fastokens' load pays for: 1.")
    pays_from = tokens.FAST_MIN_TEXT_BYTES * counting.cores() / counting.TEXT_SHARE  # 263.2 MB on 2 cores
    assert data["counter_note"].endswith(f"MB of records to count from nothing, it pays from {pays_from / 1e6:.1f} MB")
    assert line.startswith("Tokenizer: o200k_base, counted by tiktoken (fewer texts than fastokens' load pays for:")


def test_a_cold_report_above_the_crossover_is_counted_by_fastokens_with_the_same_figures(capsys, demo_root: Path,
                                                                                         monkeypatch):
    pytest.importorskip("fastokens", reason="fastokens has no wheel for this platform")
    monkeypatch.delenv("XSHARE_COUNTER", raising=False)
    reference, _, _ = report(capsys, demo_root, "--no-cache")
    monkeypatch.setattr(tokens, "FAST_MIN_TEXT_BYTES", 1000)  # the demo's 1.4 MB then pays for the load
    data, line, err = report(capsys, demo_root, "--no-cache")
    assert data["counter"] == "fastokens"
    assert data["counter_note"].startswith("exact, the same counts as tiktoken; loaded because 1.")
    assert data["counter_note"].endswith("MB of records was to be counted from nothing")
    assert line.startswith("Tokenizer: o200k_base, counted by fastokens (exact, the same counts as tiktoken; loaded")
    assert figures(data) == figures(reference) and "fastokens" not in err


def test_xshare_counter_rules_fastokens_out_and_says_so(capsys, demo_root: Path, monkeypatch):
    monkeypatch.setattr(tokens, "FAST_MIN_TEXT_BYTES", 1000)
    monkeypatch.setenv("XSHARE_COUNTER", "tiktoken")
    data, line, _ = report(capsys, demo_root, "--no-cache")
    assert (data["counter"], data["counter_note"]) == ("tiktoken", "XSHARE_COUNTER=tiktoken")
    assert line == "Tokenizer: o200k_base, counted by tiktoken (XSHARE_COUNTER=tiktoken)"


def test_where_fastokens_is_not_installed_tiktoken_counts_and_the_line_says_why(capsys, demo_root: Path,
                                                                                monkeypatch):
    monkeypatch.delenv("XSHARE_COUNTER", raising=False)
    reference, _, said = report(capsys, demo_root, "--no-cache")
    monkeypatch.setattr(tokens, "FAST_MIN_TEXT_BYTES", 1000)
    monkeypatch.setattr(tokens, "fast_installed", lambda: False)
    data, line, err = report(capsys, demo_root, "--no-cache")
    assert (data["counter"], data["counter_note"]) == ("tiktoken", tokens.FAST_MISSING)
    assert line == f"Tokenizer: o200k_base, counted by tiktoken ({tokens.FAST_MISSING})"
    assert figures(data) == figures(reference) and err == said  # not an error: nothing more on stderr


def test_a_fastokens_that_fails_to_load_is_said_once_and_tiktoken_counts_the_same(capsys, demo_root: Path,
                                                                                  monkeypatch):
    monkeypatch.delenv("XSHARE_COUNTER", raising=False)
    reference, _, before = report(capsys, demo_root, "--no-cache")

    def broken(vocab):
        raise ImportError("undefined symbol in the extension")

    monkeypatch.setattr(tokens, "FAST_MIN_TEXT_BYTES", 1000)
    monkeypatch.setattr(tokens, "fast_installed", lambda: True)
    monkeypatch.setattr(tokens, "_load_fast", broken)
    assert main(["report", "--all", "--no-dollars", "--no-cache", "--claude-root", str(demo_root.parent)]) == 0
    out, err = capsys.readouterr()
    said = "fastokens could not be loaded (ImportError): tiktoken counts the same"
    assert sorted(err.splitlines()) == sorted([*before.splitlines(), f"xshare: {said}"])  # one line, not an error
    assert f"Tokenizer: o200k_base, counted by tiktoken ({said})" in out.splitlines()
    data, _, _ = report(capsys, demo_root, "--no-cache")
    assert data["counter"] == "tiktoken" and figures(data) == figures(reference)


def test_a_report_whose_counts_are_all_remembered_loads_no_tokenizer(capsys, demo_root: Path, monkeypatch):
    monkeypatch.delenv("XSHARE_COUNTER", raising=False)
    first, _, _ = report(capsys, demo_root)  # counts and rows kept for the next run
    assert first["counter"] == "tiktoken"
    for cache in (Path(tokens.store_path()).parents[1] / "cache").glob("*"):
        cache.unlink()  # the rows are read again (an upgrade), every text's count is remembered
    data, line, _ = report(capsys, demo_root)
    assert (data["counter"], data["counter_note"]) == (None, REMEMBERED)
    assert line == f"Tokenizer: o200k_base ({REMEMBERED})"
    assert figures(data) == figures(first)


def test_new_texts_counted_by_another_process_are_seen_in_the_count_store(tmp_path: Path):
    """A report's worker loads tiktoken on a text no run has counted and adds its count to the store: the report
    says tiktoken counted, though its own process loaded nothing."""
    subprocess.run([sys.executable, "-c", COUNT_ONE.format("a text an earlier run counted")], check=True, timeout=120)
    later = counting.LazyCounter(tokens.choose())
    counting.load_if_counting(later.made(), 1 << 40, 2)  # remembered counts: nothing loaded here
    assert later.made().loaded is None
    assert counting.how_counted(later) == (None, REMEMBERED)
    subprocess.run([sys.executable, "-c", COUNT_ONE.format("a text no run had counted")], check=True, timeout=120)
    assert counting.how_counted(later) == (
        "tiktoken", "the texts no earlier run had counted; fastokens loads only when counting from nothing")
