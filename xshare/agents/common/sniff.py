"""Telling a file's shape by its first bytes, for each agent's `recognise.py` (whose file is it, by its
content, never its name, so that `xshare session PATH` reads a Codex rollout as Codex's whatever it is
called) and for the readers that take one JSON document or JSON Lines, plain or zstd-compressed."""

from __future__ import annotations

from pathlib import Path

from xshare.agents.common.stated import read_stated

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def sniff(path: Path, size: int = 1 << 16) -> bytes:
    """A file's first bytes, for telling whose it is (b"" when it cannot be read)."""
    try:  # a FIFO is refused, not waited on; a file that never ends is read to its stated size
        return read_stated(path, size)
    except OSError:
        return b""


def first_record(head: bytes) -> dict | None:
    """The first non-empty line of a JSON Lines head, as an object (None when it is not one)."""
    import json  # only when a path is given: the hot paths never tell files apart

    line = next((line for line in head.splitlines() if line.strip()), b"")
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def starts_with_other_json(head: bytes) -> bool:
    """Whether a head's first line is whole JSON that is not an object (no agent writes such a line)."""
    import json  # only when a path is given, as first_record

    line = next((line for line in head.splitlines() if line.strip()), b"")
    try:
        return not isinstance(json.loads(line), dict)
    except ValueError:
        return False  # empty, or a first line still being written


def one_document(path: Path, data: bytes) -> bool:
    """Whether a record file is one JSON document rather than JSON Lines: by its name where the agent named
    it (.json, .jsonl), else by its content (a file renamed or saved under another name)."""
    if path.suffix in (".json", ".jsonl"):
        return path.suffix == ".json"
    import json  # only for a file under a name no agent gives

    try:
        return isinstance(json.loads(data), dict)
    except ValueError:
        return False


def compressed(path: Path, data: bytes) -> bool:
    """zstd-compressed (OpenClaw's archived transcripts: `....zst`), by name or by the frame's magic."""
    return path.name.endswith(".zst") or data.startswith(ZSTD_MAGIC)
