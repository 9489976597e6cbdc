"""The progress line: on a terminal it says files, bytes, rate and time left, then erases itself;
anywhere else (cron, pipes, --json) stderr stays empty."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from xshare.agents.claude_code import many as claude_code
from xshare.agents.claude_code import transcript as claude
from xshare.agents.common import counting as counter
from xshare.agents.common import progress
from xshare.demo import write_demo_corpus
from xshare.measure import tokens


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_sees_files_bytes_rate_and_time_left(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(progress, "_EVERY", 0.0)
    screen = Terminal()
    line = progress.Progress(4, 8_000_000, screen)
    line.advance(1, 2_000_000)
    line.advance(2, 4_000_000)
    drawn = screen.getvalue().split("\r")
    assert "measuring: 3/4 files, 6/8 MB" in drawn[-1] and " s left" in drawn[-1] and "MB/s" in drawn[-1]
    line.done()
    assert screen.getvalue().endswith("\r\x1b[K")  # the line is erased, the report starts clean


def test_nothing_is_written_when_stderr_is_not_a_terminal(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(progress, "_EVERY", 0.0)
    pipe = io.StringIO()
    line = progress.Progress(2, 100, pipe)
    line.advance(1, 50)
    line.done()
    assert pipe.getvalue() == ""


def test_a_closed_stream_neither_fails_nor_draws():
    closed = Terminal()
    closed.close()
    line = progress.Progress(1, 10, closed)
    line.advance(1, 10)
    line.done()


@pytest.mark.parametrize("workers", [1, 2])
def test_measuring_on_a_terminal_draws_progress_and_equal_rows(tmp_path: Path, monkeypatch, workers: int):
    monkeypatch.setattr(progress, "_EVERY", 0.0)
    monkeypatch.setattr(counter, "PARALLEL_MIN_BYTES", 0)
    files = claude.discover([write_demo_corpus(tmp_path / "demo")])
    assert len(files) > 2
    choice = tokens.choose()
    quiet = claude_code.measure_claude(files, counter.LazyCounter(choice), use_cache=False, workers=workers)
    screen = Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    shown = claude_code.measure_claude(files, counter.LazyCounter(choice), use_cache=False, workers=workers)
    assert shown.rows == quiet.rows
    assert f"measuring: {len(files)}/{len(files)} files" in screen.getvalue()
    assert screen.getvalue().endswith("\r\x1b[K")


def test_the_report_through_a_pipe_keeps_stderr_empty(tmp_path: Path):
    demo = write_demo_corpus(tmp_path / "demo")
    done = subprocess.run([sys.executable, "-m", "xshare", "report", "--all", "--json", "--no-cache",
                           "--claude-root", str(demo.parent)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) and "measuring" not in done.stderr
