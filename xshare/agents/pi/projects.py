"""A pi session's project, for `xshare sessions`: the last part of the `cwd` its header (the file's first line)
records. Only what is cheap to know without reading a session again."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path, PurePath

from xshare.agents.common.sniff import first_record, sniff
from xshare.measure.ids import normal_id

HEADER = 1 << 12  # the header is one short line: {type, version, id, timestamp, cwd}


def project_names(files: list[Path], session_ids: Iterable[str]) -> dict[str, str]:
    """Session id -> the project's folder name, for those of `session_ids` whose header says it."""
    names: dict[str, str] = {}
    for path in files:
        header = first_record(sniff(path, HEADER)) or {}
        session_id, cwd = header.get("id"), header.get("cwd")
        if header.get("type") == "session" and isinstance(session_id, str) and isinstance(cwd, str) and cwd.strip():
            names[normal_id(session_id)] = PurePath(cwd).name or cwd
    wanted = set(session_ids)
    return {session_id: name for session_id, name in names.items() if session_id in wanted}
