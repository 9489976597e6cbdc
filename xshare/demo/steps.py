"""Playing an invented session: steps (read, grep, edit, ...) against a fake repo, one API call each."""

from __future__ import annotations

import fnmatch
import re
from datetime import datetime, timezone
from typing import Any

from xshare.demo.projects import DOCSTRINGS, FakeRepo
from xshare.demo.tally import parse_line
from xshare.demo.writer import TranscriptWriter, text


def play(w: TranscriptWriter, p: FakeRepo, steps: list[tuple[Any, ...]], *, hooks: bool = False) -> list[str]:
    """Play (kind, arg, say, *extra) steps, one API call each, results derived from the fake repo:
    read (offset, limit), grep (mode), glob, bash (output or callable or None, exit code), edit (old, new),
    multi (list of (old, new)), write (content), say (final text)."""
    ids = []
    for i, (kind, arg, say, *more) in enumerate(steps):
        if kind == "say":
            w.call(text(arg))
            continue
        path, think = p.abs(arg), ("" if i % 3 == 1 and w.version >= "2" else None)
        window = {"offset": more[0], "limit": more[1]} if kind == "read" and more else {}
        mode = more[0] if kind == "grep" and more else "files_with_matches"
        name, inp = {"read": ("Read", {"file_path": path, **window}), "glob": ("Glob", {"pattern": arg}),
                     "grep": ("Grep", {"pattern": arg, "path": p.root, "output_mode": mode}),
                     "bash": ("Bash", {"command": arg, "description": say}),
                     "write": ("Write", {"file_path": path, "content": (more or [""])[0]}),
                     }.get(kind, ("Edit", {}))
        if kind == "edit":
            inp = {"file_path": path, "old_string": more[0], "new_string": more[1], "replace_all": False}
        pairs = more[0] if kind == "multi" else []
        edits = [{"old_string": o, "new_string": n, "replace_all": False} for o, n in pairs]
        if edits:
            name, inp = "MultiEdit", {"file_path": path, "edits": edits}
        missing = [e["old_string"] for e in edits or [inp] if "old_string" in e and e["old_string"] not in p.files[arg]]
        assert not missing, f"{arg}: {missing}"  # every edit must apply to the file as it is now
        tid = w.use(name, inp, say=None if kind == "bash" else say, think=think)
        ids.append(tid)
        if hooks:
            hook = {"type": "hook_progress", "hookEvent": "PostToolUse", "hookName": f"PostToolUse:{name}"}
            w.progress({**hook, "command": "callback"}, tid)
        if kind == "read":
            w.read_result(tid, path, p.files[arg], **window)
        elif kind == "grep":
            w.grep_result(tid, p.grep(arg), mode=mode)
        elif kind == "glob":
            pattern = arg.replace("**/", "")
            w.glob_result(tid, [p.abs(f) for f in sorted(p.files) if fnmatch.fnmatch(f, pattern)])
        elif kind == "bash":
            out = p.sh(arg) if not more or more[0] is None else more[0]() if callable(more[0]) else more[0]
            w.bash_result(tid, out, exit_code=(more + [0, 0])[1])
        elif kind == "edit":
            w.edit_result(tid, path, more[0], more[1], p.files[arg])
            p.files[arg] = p.files[arg].replace(more[0], more[1], 1)
        elif kind == "multi":
            original = p.files[arg]
            for e in edits:
                p.files[arg] = p.files[arg].replace(e["old_string"], e["new_string"], 1)
            done = "\n".join(f'{k}. Replaced "{e["old_string"]}" with "{e["new_string"]}"'
                             for k, e in enumerate(edits, 1))
            w.tool_result(tid, f"Applied {len(edits)} edits to {path}:\n{done}", {
                "filePath": path, "edits": edits, "originalFileContents": original, "structuredPatch": [],
                "userModified": False})
        else:
            w.write_result(tid, path, more[0], p.files.get(arg))
            p.files[arg] = more[0]
    return ids


def demo_time(day: int, hour: int, minute: int) -> datetime:
    return datetime(2026, 11, day, hour, minute, 7, tzinfo=timezone.utc)


def docstring_steps(rel: str, p: FakeRepo, per_call: int) -> list[tuple[Any, ...]]:
    """MultiEdit steps adding a docstring under each def of a file that lacks one, `per_call` at a time."""
    found = re.finditer(r'^( *)def ([a-z]\w*)\((?:[^()]|\([^()]*\))*\)[^:\n]*:\n(?! *""")', p.files[rel], re.M)
    pairs = [(m[0][:-1], f'{m[0][:-1]}\n{m[1]}    """{DOCSTRINGS[m[2]]}"""') for m in found if m[2] in DOCSTRINGS]
    return [("multi", rel, None, pairs[i:i + per_call]) for i in range(0, len(pairs), per_call)]


def weeks_of(log: str) -> str:
    """`tally -by week` on a log: hours and entries per ISO week, largest first, then the total."""
    weeks: dict[str, list[float]] = {}
    for line in log.splitlines():
        start, end, *_ = parse_line(line)
        year, week, _ = start.isocalendar()
        weeks.setdefault(f"{year}-W{week:02d}", []).append((end - start).total_seconds() / 3600)
    rows = sorted(weeks.items(), key=lambda kv: (-sum(kv[1]), kv[0]))
    total = sum(map(sum, weeks.values()))
    return "".join(f"{k}  {sum(h):6.2f}h  {len(h):>2}\n" for k, h in rows) + f"   total  {total:6.2f}h\n"
