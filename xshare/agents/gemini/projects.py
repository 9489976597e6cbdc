"""A Gemini CLI session's project, for `xshare sessions`: the folder under tmp/ its chat lies in, unless it is
the older 64-hex hash of the path. Only what is cheap to know without reading a session again."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

_HASH = re.compile(r"[0-9a-f]{64}")


def project_names(files: list[Path], session_ids: Iterable[str]) -> dict[str, str]:
    """Session id -> the project's folder name, by the file's name (session-<time>-<first 8 of the id>.json[l])
    or its stem (the A2A server's)."""
    by_stem: dict[str, str] = {}
    by_id8: dict[str, str] = {}
    for path in files:
        folder = path.parent.parent.name if path.parent.name == "chats" else ""
        if folder and not _HASH.fullmatch(folder):
            by_stem[path.stem] = folder
            by_id8[path.stem.rsplit("-", 1)[-1]] = folder
    names = {session_id: by_stem.get(session_id, by_id8.get(session_id[:8])) for session_id in session_ids}
    return {session_id: name for session_id, name in names.items() if name is not None}
