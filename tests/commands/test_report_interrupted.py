"""A cold report in a terminal: never a silent wait (the progress line from its start, on a clock), and Ctrl-C
keeps what it measured, so the next report measures only the rest and gives an uninterrupted report's figures.
Without a terminal, no line at all."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from big_history import write_big_history
from report_figures import figures
from terminal import Terminal

MEASURING = r"measuring (\d+)/(\d+) files, [\d,]+/[\d,]+ MB, "
INTERRUPTED = (r"xshare: interrupted: (\d+) of (\d+) Claude Code transcripts measured and kept; "
               r"the next report carries on")


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """About 30 MB of sessions sharing no text: a few seconds to measure, cold."""
    root = tmp_path_factory.mktemp("big")
    write_big_history(root, sessions=100, reads=5, lines=300)
    return root


def report(root: Path, home: Path, stdout: Path) -> Terminal:
    env = {**os.environ, "XSHARE_HOME": str(home)}
    return Terminal([sys.executable, "-m", "xshare", "report", "--all", "--json", "--claude-root", str(root)],
                    stdout, env)


def figures_in(path: Path) -> dict:
    return figures(path.read_text())


def test_ctrl_c_keeps_what_was_measured_and_the_next_report_carries_on(history: Path, tmp_path: Path):
    home = tmp_path / "state"
    first = report(history, home, tmp_path / "first.json")
    first.wait_for(r"starting up|reading Claude Code sessions|loading the tokenizer")  # before any file is measured
    progress = first.wait_for(MEASURING + r"(about \d+ s left|almost done)")
    done, files = int(progress.group(1)), int(progress.group(2))
    assert 0 < done < files == 100
    first.ctrl_c()
    assert first.finish() == 130
    said = re.search(INTERRUPTED, first.text())
    assert said, first.text()[-1000:]
    kept, of = int(said.group(1)), int(said.group(2))
    assert done <= kept < of == files
    assert "Traceback" not in first.text() and (tmp_path / "first.json").read_text() == ""
    assert not [path for path in (home / "cache").iterdir() if path.name.startswith(".")]  # no half-written file

    second = report(history, home, tmp_path / "second.json")
    resumed = second.wait_for(MEASURING)
    assert int(resumed.group(2)) == files - kept  # only the rest is measured
    assert second.finish() == 0
    assert second.text().rstrip().endswith("\x1b[K")  # the line erased at the end: nothing else drawn

    whole = report(history, tmp_path / "fresh", tmp_path / "whole.json")
    assert whole.finish() == 0
    assert figures_in(tmp_path / "second.json") == figures_in(tmp_path / "whole.json")
    assert figures_in(tmp_path / "whole.json")["sessions"] == files


def test_without_a_terminal_no_line_is_drawn(history: Path, tmp_path: Path):
    env = {**os.environ, "XSHARE_HOME": str(tmp_path / "state")}
    done = subprocess.run([sys.executable, "-m", "xshare", "report", "--all", "--claude-root", str(history)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0 and "Sessions: 100" in done.stdout
    assert done.stderr == "" and "\r" not in done.stdout and "\x1b" not in done.stdout
