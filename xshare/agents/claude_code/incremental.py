"""A transcript's bytes taken as complete lines, incrementally: the live hook reads only what was appended
since its last call, and a line is taken once it is complete, so any split of the bytes gives the same
ledger. A file that shrank, was replaced or was overwritten in place (its first bytes changed) is read
again from its start; a FIFO or a device is never opened for reading (it could block or never end).
"""

from __future__ import annotations

import os
from collections import Counter

from xshare.agents.claude_code import lines
from xshare.agents.claude_code.files import TranscriptFile
from xshare.printing import problem_at
from xshare.state.store import loads

INCOMPLETE = "last lines incomplete (still being written?), left for later"

_FINGERPRINT = 4096  # the first bytes of a transcript, hashed: a file overwritten in place is read again


class IncrementalLines:
    """The bytes-to-lines half of a transcript reader (ClaudeTranscript): its `__init__` sets `file`,
    `offset`, `identity`, `fingerprint`, `problems`, `unreadable`, `mtime_ns` and `_lines` (a
    lines.LineSplitter); it takes each line in `_line(line)` and forgets what it read in `_start_over()`."""

    file: TranscriptFile
    offset: int
    identity: list | None  # (device, inode) of the file the offset belongs to
    fingerprint: list | None  # [length, hash] of the first bytes read
    problems: Counter[str]
    unreadable: str | None
    mtime_ns: int | None
    _lines: lines.LineSplitter

    def _line(self, line: bytes | memoryview) -> None:
        raise NotImplementedError

    def _start_over(self) -> None:
        raise NotImplementedError

    def catch_up(self) -> int:
        """Read what was appended since last time; start over if the file shrank, was replaced or was
        overwritten in place (its first bytes changed). Regular files only: a FIFO or a device is never
        opened for reading (it could block or never end)."""
        try:
            handle, stat = lines.open_regular(self.file.path)
        except lines.NotRegularFile:
            return self._cannot_read("not a regular file")
        except OSError as error:
            return self._cannot_read(error.__class__.__name__)
        with handle:
            try:
                return self._read(handle, stat)
            except OSError as error:
                return self._cannot_read(error.__class__.__name__)

    def _cannot_read(self, why: str) -> int:
        self.unreadable = why
        self.problems[f"transcripts that could not be read ({why})"] += 1
        return 0

    def _read(self, handle, stat: os.stat_result) -> int:
        identity = [stat.st_dev, stat.st_ino]
        self.mtime_ns = stat.st_mtime_ns
        if stat.st_size < self.offset or (self.identity and self.identity != identity) or not self._same_start(handle):
            self._start_over()
        self.identity = identity
        handle.seek(self.offset)
        before = self.offset
        for chunk in lines.chunks_to(handle, stat.st_size):
            self.feed(chunk)
        self.finish()
        if not self.fingerprint or self.fingerprint[0] < min(self.offset, _FINGERPRINT):
            self.fingerprint = lines.fingerprint(handle, min(self.offset, _FINGERPRINT))
        return self.offset - before

    def _same_start(self, handle) -> bool:
        """False when the bytes already read no longer begin the file (`cp other.jsonl this.jsonl`)."""
        return not self.fingerprint or lines.fingerprint(handle, self.fingerprint[0]) == self.fingerprint

    def feed(self, data: bytes) -> None:
        """Take every complete line of `data`; keep a trailing partial line for later."""
        splitter = self._lines
        held = splitter.held
        for line in splitter.split(data):
            if line is None:
                self.problems[f"lines longer than {lines.MAX_LINE >> 20} MB skipped"] += 1
            else:
                self._line(line)
        self.offset += held + len(data) - splitter.held  # the bytes of the lines taken, newlines included

    def finish(self) -> None:
        """At end of file: a last line without its newline counts only if it is a whole JSON object."""
        pending, size = self._lines.rest()
        if pending is not None and not pending.strip():
            self.offset += size
            return
        if pending is not None and self._whole_object(pending):
            self._line(pending)
            self.offset += size
        else:
            self.problems[problem_at(INCOMPLETE, self.file.path)] += 1

    @staticmethod
    def _whole_object(data: bytes) -> bool:
        try:
            return isinstance(loads(data), dict)
        except (ValueError, RecursionError):
            return False
