"""A Kilo CLI session's project, for `xshare sessions`: the last part of the `directory` its `session` row
records (Kilo 7.7.7 writes the folder `kilo run` ran in). Read-only, one query a database."""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterable
from pathlib import Path, PurePath

from xshare.agents.common.sqlite import read_with_retries, table_columns


def project_names(files: list[Path], session_ids: Iterable[str]) -> dict[str, str]:
    """Session id -> the project's folder name, for those of `session_ids` whose row says it."""
    wanted = set(session_ids)
    names: dict[str, str] = {}
    for path in files:
        # problems are the report's business: a database that cannot be read simply names no project here
        for session_id, name in read_with_retries(path, "Kilo CLI", Counter(), _directories):
            if session_id in wanted:
                names[session_id] = name
    return names


def _directories(connection: sqlite3.Connection, _problems: Counter) -> list[tuple[str, str]]:
    if "directory" not in table_columns(connection, "session"):
        return []
    return [(str(session_id), PurePath(directory.replace("\\", "/")).name or directory)
            for session_id, directory in connection.execute("SELECT id, directory FROM session")
            if isinstance(directory, str) and directory.strip()]
