"""A progress line on stderr for what a person waits for (a cold report over a large history): what xshare
is doing in plain words ("loading the tokenizer", "measuring 1,234/5,678 files, 420/1,220 MB, about 6 s
left"), redrawn on a clock by a thread of its own, so no stretch of the work is a silent wait, and erased
when done. Only when stderr is a terminal, so cron mail and pipes stay clean.

A command opens the line (`shown`); the measuring code below it says what it is doing (`doing`, `measuring`,
`advance`), which does nothing when no line is open. While the line is shown, sys.stdout and sys.stderr
write through `_Erasing`: the line is erased before any other text, so a message never lands inside it,
and the first text on stdout (the report itself) ends it."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Iterator
from typing import TextIO

_FIRST = 0.2  # seconds before the line first appears: a quick command shows none
_EVERY = 0.25  # seconds between redraws
_SO_FAR = 1.0  # a phase longer than this says how long it has taken, so a long one visibly lives


class Line:
    """One command's progress line: the phase in words, and for a measuring phase its files and bytes."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        try:
            self.enabled = stream.isatty()
        except (AttributeError, ValueError):  # a closed or odd stream: no line, no failure
            self.enabled = False
        try:
            self.width = os.get_terminal_size(stream.fileno()).columns if self.enabled else 0
        except (AttributeError, ValueError, OSError):  # no size known: the line is not cut
            self.width = 0
        self.lock = threading.RLock()
        self.started = self.since = time.monotonic()
        self.words = "starting up"
        self.files = self.total = self.files_done = self.bytes_done = 0
        self.counting = False
        self.advanced = self.since  # when bytes_done last grew
        self.shown = self.ended = False

    def doing(self, words: str, blocking: bool = False) -> None:
        """A phase without figures ("settling copies"), drawn at once when the line is already up, or
        `blocking`: what comes may hold the interpreter (a tokenizer's load), so the clock could not draw it."""
        with self.lock:
            self.words, self.since, self.counting = words, time.monotonic(), False
            if self.shown or blocking:
                self.draw()

    def measuring(self, files: int, total_bytes: int, words: str = "measuring") -> None:
        with self.lock:
            self.doing(words)
            self.files, self.total, self.files_done, self.bytes_done = files, total_bytes, 0, 0
            self.counting, self.advanced = True, self.since

    def advance(self, files: int, size: int) -> None:
        with self.lock:
            self.files_done += files
            self.bytes_done += size
            self.advanced = time.monotonic()

    def text(self, now: float) -> str:
        if not self.counting:
            taken = now - self.since
            return self.words + (f", {taken:.0f} s so far" if taken >= _SO_FAR else "")
        return (f"{self.words} {self.files_done:,}/{self.files:,} files, {self.bytes_done / 1e6:,.0f}/"
                f"{self.total / 1e6:,.0f} MB, {self.time_left(now)}")

    def time_left(self, now: float) -> str:
        """From the rate so far, counted down between the batches that move it."""
        spent = self.advanced - self.since
        if self.bytes_done <= 0 or spent <= 0:
            return "working out the time left"
        left = (self.total - self.bytes_done) * spent / self.bytes_done - (now - self.advanced)
        if left < 1:
            return "almost done"
        return f"about {left:.0f} s left" if left < 90 else f"about {left / 60:.0f} min left"

    def draw(self) -> None:
        with self.lock:
            if not self.enabled or self.ended:
                return
            text = self.text(time.monotonic())
            if self.width > 1:
                text = text[:self.width - 1]  # a wrapped line could not be redrawn in place
            self._write("\r" + text + "\x1b[K")
            self.shown = True

    def erase(self) -> None:
        with self.lock:
            if self.shown:
                self._write("\r\x1b[K")
                self.shown = False

    def end(self) -> None:
        """Erased for good: the command's own output has begun."""
        with self.lock:
            self.erase()
            self.ended = True

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            self.enabled = False


class _Erasing:
    """sys.stdout or sys.stderr while the line is shown: the line is erased before anything else is written
    (and for stdout, ended: the output has begun)."""

    def __init__(self, real: TextIO, line: Line, ends: bool) -> None:
        self.real, self.line, self.ends = real, line, ends

    def write(self, text: str) -> int:
        with self.line.lock:
            self.line.end() if self.ends else self.line.erase()
            return self.real.write(text)

    def writelines(self, lines) -> None:
        for text in lines:
            self.write(text)

    def __getattr__(self, name: str):
        return getattr(self.real, name)


_current: Line | None = None


@contextlib.contextmanager
def shown(stream: TextIO | None = None) -> Iterator[Line]:
    """The progress line for what runs inside (the one already open, if any), erased at the end."""
    global _current
    if _current is not None:
        yield _current
        return
    line = Line(stream if stream is not None else sys.stderr)
    if not line.enabled:
        yield line
        return
    _current, real_out, real_err = line, sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Erasing(real_out, line, ends=True), _Erasing(real_err, line, ends=False)
    stop = threading.Event()
    clock = threading.Thread(target=_redraw, args=(line, stop), name="xshare-progress", daemon=True)
    clock.start()
    try:
        yield line
    finally:
        stop.set()
        clock.join()
        line.end()
        sys.stdout, sys.stderr, _current = real_out, real_err, None


def _redraw(line: Line, stop: threading.Event) -> None:
    if stop.wait(_FIRST):
        return
    while not line.ended:
        line.draw()
        if stop.wait(_EVERY):
            return


def _forget_in_child() -> None:
    """A forked worker has no clock thread and may have forked while the line's lock was held: it writes to
    the real streams and draws nothing."""
    global _current
    if _current is not None:
        real = [stream.real if isinstance(stream, _Erasing) else stream for stream in (sys.stdout, sys.stderr)]
        sys.stdout, sys.stderr = real
        _current = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


def doing(words: str, blocking: bool = False) -> None:
    """Say what xshare is doing now on the open line (nothing when none is open)."""
    if _current is not None:
        _current.doing(words, blocking)


def measuring(files: int, total_bytes: int, words: str = "measuring") -> None:
    """A measuring phase begins: `files` to read, `total_bytes` in them."""
    if _current is not None:
        _current.measuring(files, total_bytes, words)


def advance(files: int, size: int) -> None:
    if _current is not None:
        _current.advance(files, size)
