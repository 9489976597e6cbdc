"""A Claude Code session's project, for `xshare sessions`: the folder under projects/ its transcript lies in
(the project's path with / as -)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from xshare.agents.claude_code import files as claude


def project_names(roots: list[Path], session_ids: Iterable[str]) -> dict[str, str]:
    """Session id -> the project's folder name, for those of `session_ids` found under `roots`."""
    names: dict[str, str] = {}
    for root in roots:
        for file in claude.discover([root]):
            try:
                names[file.session_id] = file.path.relative_to(root).parts[0]
            except (ValueError, IndexError):  # reached through a link from elsewhere: not said
                continue
    wanted = set(session_ids)
    return {session_id: name for session_id, name in names.items() if session_id in wanted}
