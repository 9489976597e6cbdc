"""A progress line on stderr for what a person waits for (a cold report over a large history):
files and bytes done, rate, time left. Only when stderr is a terminal, so cron mail and `--json`
pipes stay clean; redrawn at most five times a second, erased when done."""

from __future__ import annotations

import sys
import time
from typing import TextIO

_EVERY = 0.2  # seconds between redraws


class Progress:
    def __init__(self, files: int, total_bytes: int, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.files, self.total = files, total_bytes
        self.files_done = self.bytes_done = 0
        self.started = self.drawn = time.monotonic()
        self.shown = False
        try:
            self.enabled = self.stream.isatty()
        except (AttributeError, ValueError):  # a closed or odd stream: no progress, no failure
            self.enabled = False

    def advance(self, files: int, size: int) -> None:
        self.files_done += files
        self.bytes_done += size
        now = time.monotonic()
        if self.enabled and now - self.drawn >= _EVERY:
            self.drawn = now
            self._write("\r" + self.line(now - self.started) + "\x1b[K")
            self.shown = True

    def line(self, elapsed: float) -> str:
        rate = self.bytes_done / elapsed if elapsed > 0 else 0.0
        left = (self.total - self.bytes_done) / rate if rate > 0 else None
        eta = f"{left:.0f} s left" if left is not None else "estimating time left"
        return (f"measuring: {self.files_done:,}/{self.files:,} files, {self.bytes_done / 1e6:,.0f}/"
                f"{self.total / 1e6:,.0f} MB, {rate / 1e6:.0f} MB/s, {eta}")

    def done(self) -> None:
        if self.shown:
            self._write("\r\x1b[K")

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            self.enabled = False
