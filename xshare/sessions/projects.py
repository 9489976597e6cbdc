"""The folder name of each session's project, for `xshare sessions` (a list a person reads to find a session;
never the report, never a rows file). Only what is cheap to know without reading a session again:

- Claude Code: the folder under projects/ its transcript lies in (the project's path with / as -);
- Codex CLI: the last part of the `cwd` its rollout's first line (`session_meta`) records;
- Gemini CLI: the folder under tmp/ its chat lies in, unless it is the older 64-hex hash of the path;
- Hermes, OpenCode, OpenClaw: nothing (shown as "-").
"""

from __future__ import annotations

import json
import re
from pathlib import Path, PurePath

from xshare.agents.claude_code import transcript as claude
from xshare.agents.claude_code.adapter import ADAPTER as CLAUDE_CODE
from xshare.agents.protocol import Looking
from xshare.measure.ids import normal_id
from xshare.sessions.registry import BY_AGENT

_HASH = re.compile(r"[0-9a-f]{64}")
_FIRST_LINE = 1 << 20  # a session_meta line holds the base instructions: tens of KB


def project_names(looking: Looking) -> dict[tuple[str, str], str]:
    """(agent, session id) -> the project's folder name, for the sessions whose records say it."""
    names: dict[tuple[str, str], str] = {}
    for agent, by_id in (("claude-code", _claude), ("codex", _codex), ("gemini", _gemini)):
        if looking.given(agent) != []:
            names.update(((agent, session_id), name) for session_id, name in by_id(looking.given(agent)).items())
    return names


def _claude(given: list[str] | None) -> dict[str, str]:
    names: dict[str, str] = {}
    for root in CLAUDE_CODE.roots(given):
        for file in claude.discover([root]):
            try:
                names[file.session_id] = file.path.relative_to(root).parts[0]
            except (ValueError, IndexError):  # reached through a link from elsewhere: not said
                continue
    return names


def _codex(given: list[str] | None) -> dict[str, str]:
    names: dict[str, str] = {}
    for path in BY_AGENT["codex"].discover(given):
        meta = _first_record(path)
        payload = value if isinstance(value := meta.get("payload"), dict) else meta  # the oldest: no payload
        session_id, cwd = payload.get("id"), payload.get("cwd")
        if isinstance(session_id, str) and isinstance(cwd, str) and cwd.strip():
            names[normal_id(session_id)] = PurePath(cwd.replace("\\", "/")).name or cwd
    return names


def _first_record(path: Path) -> dict:
    try:
        with open(path, "rb") as handle:
            value = json.loads(handle.readline(_FIRST_LINE))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _gemini(given: list[str] | None) -> dict[str, str]:
    """By the file's name (session-<time>-<first 8 of the id>.json[l]) and its stem (the A2A server's)."""
    names: dict[str, str] = {}
    for path in BY_AGENT["gemini"].discover(given):
        folder = path.parent.parent.name if path.parent.name == "chats" else ""
        if folder and not _HASH.fullmatch(folder):
            names[path.stem] = folder
            names["id8:" + path.stem.rsplit("-", 1)[-1]] = folder
    return names


def project_of(names: dict[tuple[str, str], str], agent: str, session_id: str) -> str | None:
    """A session's project folder name, or None when its records don't say."""
    found = names.get((agent, session_id))
    if found is None and agent == "gemini":
        found = names.get((agent, "id8:" + session_id[:8]))
    return found
