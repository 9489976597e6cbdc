"""A Qwen Code session's project, for `xshare sessions`: the last part of the `cwd` its chat's first record says
(the folder under projects/ is that path with every separator made "-", which cannot be undone)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path, PurePath

from xshare.agents.common.sniff import first_record, sniff


def project_names(files: list[Path], session_ids: Iterable[str]) -> dict[str, str]:
    """Session id -> the project's folder name, for the main chats (`chats/<session id>.jsonl`) asked about."""
    wanted = set(session_ids)
    names: dict[str, str] = {}
    for path in files:
        if path.parent.name != "chats" or path.stem not in wanted:
            continue
        record = first_record(sniff(path, 1 << 14))
        cwd = record.get("cwd") if record else None
        if isinstance(cwd, str) and PurePath(cwd).name:
            names[path.stem] = PurePath(cwd).name
    return names
