"""What the speed benches share: the histories they measure (the corpus's Claude Code roots, a big history made
of them, their distinct texts) and how one process tree is timed."""

from __future__ import annotations

import compileall
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path


class Counted:
    """A reader's token counter from a plain function (xshare/agents/common/counting.py TokenCounter)."""

    def __init__(self, count: Callable[[str], int], name: str) -> None:
        self.count, self.name, self.fallbacks = count, name, 0

    def flush(self) -> None:
        pass

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus" / "claude"
DEFAULT_VOCAB = REPO.parent / "shared" / "vocab" / "o200k_base.tiktoken"

# Runs one command; prints its wall seconds, the CPU seconds (user + system) and the peak RSS (KB) of any one
# process of it and all it started, and its exit code.
_MEASURED = (
    "import resource, subprocess, sys, time\n"
    "started = time.perf_counter()\n"
    "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n"
    "wall = time.perf_counter() - started\n"
    "used = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(wall, used.ru_utime + used.ru_stime, used.ru_maxrss, code)\n"
)
_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_API_ID = re.compile(rb'(?<=")(?:msg|req|toolu|chatcmpl|resp|call)_[A-Za-z0-9_-]+')
_SESSION_NAME = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|agent-")


def roots_of(corpus: Path) -> list[Path]:
    """The Claude Code roots (folders holding projects/) of a corpus, or the corpus itself if it is one."""
    if (corpus / "projects").is_dir():
        return [corpus]
    return sorted(path for path in corpus.iterdir() if (path / "projects").is_dir())


def jsonl_bytes(roots: list[Path]) -> int:
    return sum(path.stat().st_size for root in roots for path in (root / "projects").rglob("*.jsonl"))


def renamed(part: str, copy: int) -> str:
    """A session's file and folder (<uuid>.jsonl, <uuid>/, agent-*.jsonl) with the copy's number after
    the name, so a copy is a session of its own and a subagent still belongs to its session's copy."""
    if not _SESSION_NAME.match(part):
        return part
    stem, dot, suffix = part.partition(".")
    return f"{stem}-c{copy}{dot}{suffix}"


def build_big(roots: list[Path], target: Path, size_gb: float, distinct: bool = False) -> list[Path]:
    """A history of about size_gb made of the corpus's transcripts copied under new names, each copy's ids its
    own (`own_ids`), so every copy is sessions of its own and nothing is de-duplicated away. Copies repeat the corpus's
    texts, a best case for a first report, which counts each distinct text once; with `distinct`, every
    copy after the first starts each message text and tool result with its own mark (every JSON string
    under a "text" or "content" key), so those never repeat across copies; tool inputs such as commands
    and paths still do. Close to a history as big with as much new text per byte as the corpus has."""
    files = [path for root in roots for path in (root / "projects").rglob("*.jsonl")]
    written, copy = 0, 0
    while written < size_gb * 1e9:
        for path in files:
            relative = path.relative_to(next(root for root in roots if root in path.parents))
            out = target / f"copy{copy}" / Path(*(renamed(part, copy) for part in relative.parts))
            out.parent.mkdir(parents=True, exist_ok=True)
            if copy:
                out.write_bytes(own_ids(marked(path.read_bytes(), copy) if distinct else path.read_bytes(), copy))
            else:
                shutil.copyfile(path, out)
            written += out.stat().st_size
        copy += 1
    return sorted(target.iterdir())


def own_ids(data: bytes, copy: int) -> bytes:
    """The transcript with every id its agent wrote (session and message uuids, request, message and tool-use
    ids) given the copy's number, as its file name is: a copy is then a session of its own to xshare and to
    ccusage, which both count a call once however many files hold it (a backup is not a second session)."""
    mark = f"-c{copy}".encode()
    data = _UUID.sub(lambda found: found.group() + mark, data)
    return _API_ID.sub(lambda found: found.group() + mark[1:], data)


def marked(data: bytes, copy: int) -> bytes:
    """The transcript with `copy <n> ` at the start of every JSON string under a "text" or "content" key:
    still valid JSON, every text new."""
    mark = f"copy {copy} ".encode()
    for key in (b'"text":"', b'"content":"', b'"text": "', b'"content": "'):
        data = data.replace(key, key + mark)
    return data


def distinct_texts(roots: list[Path]) -> list[str]:
    """Every distinct text xshare counts in these Claude Code roots, found by the reader itself."""
    from xshare.agents.claude_code import transcript as claude

    texts: dict[tuple[int, int], str] = {}

    def record(text: str) -> int:
        texts.setdefault((hash(text), len(text)), text)
        return 0

    for file in claude.discover([root / "projects" for root in roots]):
        claude.ClaudeTranscript(file, Counted(record, "record")).catch_up()
    return list(texts.values())


# a counter loaded as a first report loads it, in a fresh process: fastokens (argv "fast", its tables finished
# on a first text) or tiktoken; prints the CPU seconds of the load alone
_LOAD_CPU = (
    "import sys, time\n"
    "from xshare.measure import tokens\n"
    "counter = tokens.Counter(tokens.choose(remember=False))\n"
    "fast = sys.argv[1] == 'fast'\n"
    "started = time.process_time()\n"
    "counter.load(fast=fast)\n"
    "assert counter.fast == fast and counter.count('hello world') == 2\n"
    "print(time.process_time() - started)\n"
)


def load_cpu(kind: str) -> float:
    """CPU seconds of loading a counter ("fast": fastokens, else tiktoken) in a fresh process and state folder,
    as a first report loads it (no parsed vocabulary kept yet)."""
    with tempfile.TemporaryDirectory() as home:
        done = subprocess.run([sys.executable, "-c", _LOAD_CPU, kind], env={**os.environ, "XSHARE_HOME": home},
                              capture_output=True, text=True, check=True)
    return float(done.stdout)


def parse_every_line(paths: Iterable[Path]) -> int:
    """Every line of these files parsed by orjson, each a view of the file's bytes as the reader parses it (no
    copy); how many parsed (blank and malformed lines are skipped)."""
    from xshare.state.store import loads

    parsed = 0
    for path in paths:
        data = path.read_bytes()
        view, start, end = memoryview(data), 0, data.find(b"\n")
        while end != -1:
            if end > start:
                try:
                    loads(view[start:end])
                    parsed += 1
                except ValueError:
                    pass
            start, end = end + 1, data.find(b"\n", end + 1)
    return parsed


def spread(values: list[float]) -> str:
    return f"median {statistics.median(values):.2f} s (min {min(values):.2f}, max {max(values):.2f})"


def compile_package() -> None:
    """Byte-compile xshare as an install would: with PYTHONDONTWRITEBYTECODE set, a module edited since its
    last compile would otherwise be compiled again by every process timed (~15 ms each)."""
    compileall.compile_dir(REPO / "xshare", quiet=1)


def process_tree(command: list[str], env: dict) -> tuple[float, float, int, int, str]:
    """One command run to its end: wall seconds, CPU seconds of it and all it started, the peak MB of any
    one of those processes, its exit code and its stderr (stdout is discarded)."""
    done = subprocess.run([sys.executable, "-c", _MEASURED, *command], env=env, capture_output=True, text=True)
    wall, cpu, peak_kb, code = done.stdout.split()
    return float(wall), float(cpu), int(peak_kb) // 1024, int(code), done.stderr
