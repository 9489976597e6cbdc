"""A GitHub Copilot CLI session's project, for `xshare sessions`: the last part of the `cwd` its events file's
first line (`session.start`) records. Only what is cheap to know without reading a session again."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path, PurePath

from xshare.agents.common.sniff import first_record, sniff
from xshare.measure.ids import normal_id


def project_names(files: list[Path], session_ids: Iterable[str]) -> dict[str, str]:
    """Session id -> the project's folder name, for those of `session_ids` whose session.start says it."""
    wanted, names = set(session_ids), {}
    for path in files:
        record = first_record(sniff(path)) or {}
        data = value if isinstance(value := record.get("data"), dict) else {}
        context = value if isinstance(value := data.get("context"), dict) else {}
        session_id, cwd = data.get("sessionId"), context.get("cwd")
        if isinstance(session_id, str) and isinstance(cwd, str) and cwd.strip():
            if (key := normal_id(session_id)) in wanted:
                names[key] = PurePath(cwd.replace("\\", "/")).name or cwd
    return names
