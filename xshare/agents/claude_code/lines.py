"""Bytes -> complete lines for the transcript reader: regular files only, linear time, bounded memory;
and the slow parse of the rare line orjson refuses.

A transcript arrives in chunks (the whole file, or what the live hook finds appended). A line that spans
chunks is kept as a list of pieces and joined once, when its newline arrives, so a long line costs its
length, not its length times the number of chunks. A line longer than MAX_LINE is not held at all: the
reader streams past it to its newline and reports it. The longest line of the real transcripts measured
(2026-11-30, 32,006 lines) was 1.3 MB; 64 MB leaves room for a tool result holding large images.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections import Counter
from collections.abc import Iterator
from typing import BinaryIO

MAX_LINE = 64 << 20
CHUNK = 1 << 22
SKIP = object()  # parse_slowly: the line holds no row (blank, or malformed and counted as such)
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)


class NotRegularFile(OSError):
    """A FIFO, a device, a socket or a folder where a transcript should be: never read (it can block or
    never end)."""


def open_regular(path: os.PathLike | str) -> tuple[BinaryIO, os.stat_result]:
    """Open a regular file for reading without ever blocking on it: checked before opening (a FIFO's
    open can wait for a writer), opened non-blocking, and checked again on the descriptor (the path may
    have been swapped in between)."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise NotRegularFile(f"not a regular file: {os.fspath(path)}")
    fd = os.open(path, _OPEN_FLAGS)
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise NotRegularFile(f"not a regular file: {os.fspath(path)}")
        if _OPEN_FLAGS & getattr(os, "O_NONBLOCK", 0):
            os.set_blocking(fd, True)  # a regular file never blocks; plain reads from here on
        return os.fdopen(fd, "rb"), status
    except BaseException:
        os.close(fd)
        raise


def chunks_to(handle: BinaryIO, size: int) -> Iterator[bytes]:
    """The file's bytes from where `handle` stands up to `size`, the size stat gave when the read began, in
    CHUNKs: a file that never ends though stat calls it regular (a link to /proc/self/pagemap) ends there,
    and what is appended meanwhile is the next read's."""
    left = size - handle.tell()
    while left > 0 and (chunk := handle.read(min(CHUNK, left))):
        left -= len(chunk)
        yield chunk


def is_regular(path: os.PathLike | str) -> bool:
    """True for a regular file (following symlinks); False for anything else or a path that cannot be stat'ed."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def fingerprint(handle: BinaryIO, length: int) -> list:
    """[length, hash] of a file's first `length` bytes: a file overwritten in place changes it."""
    handle.seek(0)
    return [length, hashlib.blake2b(handle.read(length), digest_size=16).hexdigest()]


class LineSplitter:
    """Splits chunks into lines; a line longer than `max_line` comes out as None (dropped, never held)."""

    def __init__(self, max_line: int = MAX_LINE, views: bool = False) -> None:
        self.max_line = max_line
        self.views = views  # lines within a chunk as memoryviews of it (for a parser that reads them)
        self._parts: list[bytes] = []
        self._held = 0  # bytes of the partial line seen so far (held in _parts unless skipping)
        self._skipping = False

    @property
    def held(self) -> int:
        """Bytes of the unfinished line seen so far (held, or streamed past when too long)."""
        return self._held

    def split(self, data: bytes) -> Iterator[bytes | memoryview | None]:
        """Every line `data` completes, in order, None for one longer than `max_line`; what follows the
        last newline is held for the next chunk. The bytes the lines took, newlines included, are
        `held` before + len(data) - `held` after. With `views`, a line within `data` is a memoryview of
        it (no copy: orjson reads it as it is); a line is cut just before it is used (still in the CPU's
        cache), not all of a chunk's at once."""
        find = data.find
        start, end = 0, find(b"\n")
        if end != -1 and (self._held or self._skipping):
            line = self._complete(data[:end])
            self._parts, self._held, self._skipping = [], 0, False
            yield line
            start, end = end + 1, find(b"\n", end + 1)
        view, limit = memoryview(data) if self.views else data, self.max_line
        while end != -1:
            yield view[start:end] if end - start <= limit else None
            start, end = end + 1, find(b"\n", end + 1)
        if start < len(data):
            self._hold(data[start:] if start else data)

    def _complete(self, last: bytes) -> bytes | None:
        if self._skipping or self._held + len(last) > self.max_line:
            return None
        return b"".join((*self._parts, last))

    def _hold(self, piece: bytes) -> None:
        self._held += len(piece)
        if self._skipping:
            return
        if self._held > self.max_line:
            self._parts, self._skipping = [], True
        else:
            self._parts.append(piece)

    def rest(self) -> tuple[bytes | None, int]:
        """The unfinished last line (None if too long to hold) and its size; the splitter starts empty."""
        rest = None if self._skipping else b"".join(self._parts)
        size = self._held
        self._parts, self._held, self._skipping = [], 0, False
        return rest, size


def parse_slowly(line: bytes | memoryview, problems: Counter) -> object:
    """What json makes of a line orjson refused, or SKIP: a blank line (no problem) or a malformed one
    (counted). orjson rejects lone surrogates, bad UTF-8 and nesting past 1024 levels; json takes the
    first, "replace" the second (counted), and gives up on the third with a RecursionError."""
    line = bytes(line)
    if not line.strip():
        return SKIP
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        text = line.decode("utf-8", "replace")
        problems["lines with non-UTF-8 bytes (replaced)"] += 1
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        problems["malformed lines skipped"] += 1
        return SKIP
