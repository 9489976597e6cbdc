"""A Codex CLI session's project, for `xshare sessions`: the last part of the `cwd` its rollout's first line
(`session_meta`) records. Only what is cheap to know without reading a session again."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path, PurePath

from xshare.measure.ids import normal_id

_FIRST_LINE = 1 << 20  # a session_meta line holds the base instructions: tens of KB


def project_names(files: list[Path], session_ids: Iterable[str]) -> dict[str, str]:
    """Session id -> the project's folder name, for those of `session_ids` whose rollout says it."""
    names: dict[str, str] = {}
    for path in files:
        meta = _first_record(path)
        payload = value if isinstance(value := meta.get("payload"), dict) else meta  # the oldest: no payload
        session_id, cwd = payload.get("id"), payload.get("cwd")
        if isinstance(session_id, str) and isinstance(cwd, str) and cwd.strip():
            names[normal_id(session_id)] = PurePath(cwd.replace("\\", "/")).name or cwd
    wanted = set(session_ids)
    return {session_id: name for session_id, name in names.items() if session_id in wanted}


def _first_record(path: Path) -> dict:
    try:
        with open(path, "rb") as handle:
            value = json.loads(handle.readline(_FIRST_LINE))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}
