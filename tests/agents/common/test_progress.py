"""The progress line: drawn on a clock (no batch need finish), each phase in words, the time left from the rate
so far, erased before any other text and at the end; nothing at all when stderr is not a terminal."""

from __future__ import annotations

import io
import re
import sys
import threading
import time
from pathlib import Path

import pytest

from xshare.agents.claude_code import many
from xshare.agents.claude_code import transcript as claude
from xshare.agents.common import counting, progress
from xshare.demo import write_demo_corpus
from xshare.measure import tokens

DEADLINE = 20.0  # seconds: generous, the machine may be busy


class Terminal(io.StringIO):
    """A stream that says it is a terminal and records what was written, with a way to wait for it."""

    def __init__(self) -> None:
        super().__init__()
        self.changed = threading.Condition()

    def isatty(self) -> bool:
        return True

    def fileno(self) -> int:
        raise OSError("no descriptor")  # no terminal size: the line is not cut

    def write(self, text: str) -> int:
        with self.changed:
            written = super().write(text)
            self.changed.notify_all()
            return written

    def wait_for(self, pattern: str) -> re.Match:
        found = None
        with self.changed:
            ends = time.monotonic() + DEADLINE
            while not (found := re.search(pattern, self.getvalue())) and time.monotonic() < ends:
                self.changed.wait(ends - time.monotonic())
        assert found, f"{pattern!r} never drawn; got {self.getvalue()!r}"
        return found


def test_a_phase_is_drawn_on_the_clock_and_erased_at_the_end():
    terminal = Terminal()
    with progress.shown(terminal):
        progress.doing("settling copies")
        terminal.wait_for(r"\rsettling copies\x1b\[K")  # no batch, no call: the clock drew it
        terminal.wait_for(r"\rsettling copies, \d+ s so far\x1b\[K")  # a long phase says it lives
    assert terminal.getvalue().endswith("\r\x1b[K")


def test_measuring_says_files_and_megabytes_drawn_on_the_clock():
    terminal = Terminal()
    with progress.shown(terminal):
        progress.measuring(10, 4_000_000)
        terminal.wait_for(r"\rmeasuring 0/10 files, 0/4 MB, working out the time left\x1b\[K")
        progress.advance(5, 2_000_000)
        terminal.wait_for(r"\rmeasuring 5/10 files, 2/4 MB, (about \d+ s left|almost done)\x1b\[K")


def test_the_time_left_is_from_the_rate_so_far_and_counts_down_between_batches():
    line = progress.Line(Terminal())
    line.measuring(8, 4_000_000)
    line.since = 100.0
    line.bytes_done, line.advanced = 1_000_000, 110.0  # a quarter in 10 s: 30 s more at that rate
    assert line.time_left(110.0) == "about 30 s left"
    assert line.time_left(125.0) == "about 15 s left"  # no batch ended since: counted down
    assert line.time_left(141.0) == "almost done"
    line.bytes_done = 100_000
    assert line.time_left(110.0) == "about 6 min left"
    assert line.text(110.0) == "measuring 0/8 files, 0/4 MB, about 6 min left"


def test_text_on_stderr_erases_the_line_first_and_stdout_ends_it(monkeypatch):
    terminal, out = Terminal(), io.StringIO()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setattr(sys, "stdout", out)
    with progress.shown():
        progress.doing("loading the tokenizer", blocking=True)  # drawn at once: the load may hold the interpreter
        assert terminal.getvalue() == "\rloading the tokenizer\x1b[K"
        print("xshare: a problem", file=sys.stderr)
        assert terminal.getvalue().endswith("\rloading the tokenizer\x1b[K\r\x1b[Kxshare: a problem\n")
        terminal.wait_for(r"a problem\n\rloading the tokenizer")  # drawn again below the message
        print("the report")
        drawn = terminal.getvalue()
        assert drawn.endswith("\r\x1b[K") and out.getvalue() == "the report\n"
        progress.doing("writing the report")
    assert terminal.getvalue() == drawn  # once the output began, no line again
    assert sys.stderr is terminal and sys.stdout is out


def test_nothing_at_all_without_a_terminal(monkeypatch):
    pipe = io.StringIO()
    monkeypatch.setattr(sys, "stderr", pipe)
    with progress.shown() as line:
        progress.doing("loading the tokenizer", blocking=True)
        progress.measuring(3, 3_000_000)
        progress.advance(3, 3_000_000)
        assert not line.enabled and sys.stderr is pipe  # no thread, no stream put in its place
        print("xshare: a problem", file=sys.stderr)
    assert pipe.getvalue() == "xshare: a problem\n"


def test_no_line_open_no_effect():
    progress.doing("settling copies")
    progress.measuring(1, 1)
    progress.advance(1, 1)  # the measuring code runs the same with no command's line open


def test_a_closed_stream_neither_fails_nor_draws():
    closed = Terminal()
    closed.close()
    with progress.shown(closed):
        progress.doing("loading the tokenizer", blocking=True)
        progress.measuring(1, 10)
        progress.advance(1, 10)


@pytest.mark.parametrize("workers", [1, 2])
def test_measuring_under_the_line_counts_every_file_and_gives_equal_rows(tmp_path: Path, monkeypatch, workers: int):
    monkeypatch.setattr(counting, "PARALLEL_MIN_BYTES", 0)
    files = claude.discover([write_demo_corpus(tmp_path / "demo")])
    assert len(files) > 2
    choice = tokens.choose()
    quiet = many.measure_claude(files, counting.LazyCounter(choice), use_cache=False, workers=workers)
    screen = Terminal()
    with progress.shown(screen) as line:
        shown = many.measure_claude(files, counting.LazyCounter(choice), use_cache=False, workers=workers)
        assert (line.files_done, line.files) == (len(files), len(files))
    assert shown.rows == quiet.rows
    assert screen.getvalue() == "" or screen.getvalue().endswith("\r\x1b[K")  # drawn (if it was) and erased
