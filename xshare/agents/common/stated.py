"""A record file read as long as `stat` says it is when the read begins, for every agent's whole-file reads
(Claude Code's transcripts are read incrementally, to the same bound: agents/claude_code/lines.py `chunks_to`).

A link to /proc/self/pagemap is a regular file by `stat`, of size 0, and never ends when read; a FIFO waits
for a writer and a device (/dev/zero) never ends. The first is read to its stated size, the others are
refused (an OSError), as the state folder's files are (xshare/state/private.py `open_regular`).
"""

from __future__ import annotations

import os
from pathlib import Path

from xshare.state.private import open_regular


def read_stated(path: Path, most: int | None = None) -> bytes:
    """A regular file's bytes, no more than its size when the read began (nor than `most`, when given)."""
    with open_regular(path) as handle:
        size = os.fstat(handle.fileno()).st_size
        return handle.read(size if most is None else min(size, most))
