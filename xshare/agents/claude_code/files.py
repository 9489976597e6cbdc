"""Claude Code: where its transcripts are, and which session each file is.

One transcript file is one session; a file reached by several paths (a symlinked config folder, a root
named twice or inside another, a hard link) is still one (see same_file). Ids are spelled as xshare's
files store them (see xshare.measure.ids), so a file name that is not UTF-8 keeps one id everywhere.
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from xshare.agents.common import same_file
from xshare.measure.ids import normal_id
from xshare.state.paths import home as user_home

AGENT = "claude-code"  # the rows' agent
INTERACTIVE, SUBAGENT, INTERNAL, AUTOMATED = "interactive", "subagent", "internal", "automated"
# Claude Code's own helper agents replay their parent's context; they are overhead, not task work
INTERNAL_PREFIXES = ("agent-acompact-", "agent-aprompt_suggestion-", "agent-aside_question-")
NOT_REGULAR = "files named *.jsonl skipped: not a regular file (FIFO, device, folder, broken link)"
OUTSIDE_PROJECTS = "files skipped: in projects/ itself, outside any project folder"


@dataclass(frozen=True)
class TranscriptFile:
    path: Path
    session_id: str
    source: str
    parent_id: str | None = None
    # (size, modification time) as discovery found them: the rows cache's test, without a second stat
    found: tuple[int, int] | None = field(default=None, compare=False, repr=False)

    @property
    def is_sidechain_file(self) -> bool:
        return self.source != INTERACTIVE


def default_roots() -> list[Path]:
    """Every projects/ under $CLAUDE_CONFIG_DIR (comma-separated), else the two usual homes."""
    configured = os.environ.get("CLAUDE_CONFIG_DIR")
    if configured:
        bases = [Path(part.strip()).expanduser() for part in configured.split(",") if part.strip()]
    else:  # no home folder (cron, docker --user): what needs one is simply not found
        home, xdg = user_home(), os.environ.get("XDG_CONFIG_HOME")
        config = Path(xdg) if xdg else home / ".config" if home else None
        bases = [base for base in (home and home / ".claude", config and config / "claude") if base]
    return [base / "projects" for base in bases]


def resolve_root(directory: str | Path) -> Path:
    """--claude-root accepts a Claude config folder or its projects/ folder."""
    path = Path(directory).expanduser()
    return path / "projects" if (path / "projects").is_dir() else path


def describe(path: Path, found: tuple[int, int] | None = None) -> TranscriptFile:
    """Which session a transcript file is, from its place alone."""
    stem = normal_id(path.stem)
    if not stem.startswith("agent-"):
        return TranscriptFile(path, stem, INTERACTIVE, None, found)
    source = INTERNAL if stem.startswith(INTERNAL_PREFIXES) else SUBAGENT
    parts = path.parts
    if "subagents" in parts:
        # <session>/subagents/agent-x.jsonl, or <session>/subagents/workflows/<run>/agent-x.jsonl
        session = normal_id(parts[len(parts) - 2 - parts[::-1].index("subagents")])
        return TranscriptFile(path, f"{session}/{stem}", source, session, found)
    return TranscriptFile(path, stem, source, None, found)  # 2.0.x: agent-*.jsonl beside the sessions


def describe_reached(path: Path, is_link: bool | None = None, found: tuple[int, int] | None = None) -> TranscriptFile:
    """The session of the file a path reaches: a symlink to a transcript is that transcript, under the name
    Claude Code gave it (the id the hook and `xshare session` know it by), whatever the link is called."""
    if not (os.path.islink(path) if is_link is None else is_link):
        return describe(path, found)
    return replace(describe(Path(os.path.realpath(path)), found), path=path)


def passed_over(folders: tuple[str, ...], name: str) -> bool:
    """Claude Code's own other files, never transcripts: tool-results/, and subagents/ files but agent-*."""
    return "tool-results" in folders or ("subagents" in folders and not name.startswith("agent-"))


def discover(roots: list[Path], skipped: Counter | None = None) -> list[TranscriptFile]:
    """Every transcript under the roots, in whatever folders they lie: Claude Code writes <project>/*.jsonl
    and <project>/<session>/subagents/**/agent-*.jsonl, backups nest them deeper (<project>/sessions/...).
    Claude Code's own other files (subagents/**/journal.jsonl, tool-results/) are passed over; what else
    is skipped is counted in `skipped`, with why: anything but a regular file (a FIFO or a device would
    hang the reader), and files lying in projects/ itself, outside any project folder.

    Each file is taken once, at the first path met (roots in their order, paths sorted within each); a
    file lying in one root's projects/ itself but in a project folder of another is taken, not skipped."""
    return sorted(transcripts(roots, skipped), key=lambda item: str(item.path))


def transcripts(roots: list[Path], skipped: Counter | None = None) -> Iterator[TranscriptFile]:
    """`discover`'s files as they are met (roots in their order, paths sorted within each). `skipped` is filled
    at the end."""
    skipped = Counter() if skipped is None else skipped
    taken: set[same_file.Identity] = set()
    refused: dict[same_file.Identity, str] = {}
    for root in same_file.unique(root for root in roots if root.is_dir()):
        for name, folders, is_link in sorted(named_jsonl(str(root))):
            identity, status = same_file.examine(name)
            if identity in taken:
                continue
            if status is None or not stat.S_ISREG(status.st_mode):
                refused.setdefault(identity, NOT_REGULAR)
            elif not folders:
                refused.setdefault(identity, OUTSIDE_PROJECTS)
            else:
                taken.add(identity)
                yield describe_reached(Path(name), is_link, (status.st_size, status.st_mtime_ns))
    skipped.update(why for identity, why in refused.items() if identity not in taken)


def any_transcript(roots: list[Path]) -> bool:
    """Whether the roots hold a transcript `transcripts` would take: stops at the first, unsorted."""
    for root in roots:
        for name, folders, _ in named_jsonl(str(root)) if root.is_dir() else ():
            status = same_file.examine(name)[1]
            if folders and status is not None and stat.S_ISREG(status.st_mode):
                return True
    return False


def named_jsonl(root: str) -> Iterator[tuple[str, tuple[str, ...], bool]]:
    """Every entry named *.jsonl under `root` that is not passed over, as `Path.rglob` meets them (any kind of
    entry; a symlinked folder is not entered, nor is one that cannot be listed), with the folders between
    `root` and it and whether it is a link, in no order. os.scandir, not rglob: a report over thousands of
    transcripts spent a fifth of its time in pathlib's walk; tool-results/ folders are never entered."""
    stack: list[tuple[str, tuple[str, ...]]] = [(root, ())]
    while stack:
        folder, folders = stack.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    name = entry.name
                    if name.endswith(".jsonl") and not passed_over(folders, name):
                        yield entry.path, folders, entry.is_symlink()
                    if name != "tool-results" and _is_folder(entry):
                        stack.append((entry.path, (*folders, name)))
        except OSError:  # unreadable or gone meanwhile: its transcripts cannot be read either
            continue


def _is_folder(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def family_files(file: TranscriptFile) -> list[TranscriptFile]:
    """A main transcript's subagent and helper-agent files: <session>/subagents/**/agent-*.jsonl."""
    if file.source != INTERACTIVE:
        return []
    folder = file.path.parent / file.path.stem / "subagents"
    paths = same_file.unique_files(sorted(folder.rglob("agent-*.jsonl"), key=str))
    return sorted((describe_reached(path) for path in paths), key=lambda item: str(item.path))
