"""The demo corpus: six invented Claude Code sessions over two invented projects."""

from __future__ import annotations

import random
import tempfile
import uuid
from pathlib import Path

from xshare.demo.projects import tally_repo, todo_repo
from xshare.demo.tally_sessions import gateway, legacy, web
from xshare.demo.todo_sessions import bug_hunt, feature, long_session
from xshare.demo.writer import project_dir_name

# The problems the demo corpus holds on purpose, to show how xshare reports them; `report --demo` says so
# beside each (a warning a new user can't place makes the demo look broken)
DELIBERATE_ODDITIES = {
    "last lines incomplete (still being written?), left for later":
        "on purpose: one demo session is cut mid-line, as a transcript still being written is",
    "malformed lines skipped": "on purpose: two demo lines are written without a newline between them",
}


def write_demo_corpus(root: Path) -> Path:
    """Write a small, deterministic Claude Code config root under `root`; returns `root/projects`."""
    projects = Path(root) / "projects"
    todo, tally = todo_repo(), tally_repo()
    rng = random.Random("xshare-demo-corpus")
    sids = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(6)]
    todo_dir, tally_dir = projects / project_dir_name(todo.root), projects / project_dir_name(tally.root)
    legacy(tally_dir, tally, sids[0])
    bug_hunt(todo_dir, todo, sids[1])
    feature(todo_dir, todo, sids[2])
    web(tally_dir, tally, sids[3])
    long_session(todo_dir, todo, sids[4])
    gateway(tally_dir, tally, sids[5])
    return projects


def demo_homes(projects: Path) -> dict[str, list[str]]:
    """The demo corpus as the commands name an agent's records (by agent): what they read for `--demo`."""
    return {"claude-code": [str(projects)]}


def showcase(projects: Path) -> Path:
    """The session the bare `html --demo` shows: the largest, whose page has every section (the most recent
    is a short one)."""
    return max(projects.glob("*/*.jsonl"), key=lambda path: path.stat().st_size)


def temporary_demo_corpus() -> tuple[tempfile.TemporaryDirectory, Path]:
    """The demo corpus in a temporary folder of its own, for `report --demo` and `html --demo`: the folder
    (removed when it is dropped) and the Claude Code projects folder inside it."""
    folder = tempfile.TemporaryDirectory(prefix="xshare-demo-")
    return folder, write_demo_corpus(Path(folder.name))
