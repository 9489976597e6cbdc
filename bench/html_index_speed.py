"""How `xshare html --index` scales with sessions: its cost must follow what changed, not the history.

Builds --sessions (default 10,000) invented sessions (the demo corpus's transcripts copied under new
session ids, never ../shared/corpus), then times in fresh processes: the first index (every page
written), a re-run with nothing changed, and a re-run after --changed transcripts grew by a line.
Goal (issue 11): the re-runs cost a small fraction of the first, and grow with --changed.

    python bench/html_index_speed.py [--sessions N] [--changed N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_VOCAB = REPO.parent / "shared" / "vocab" / "o200k_base.tiktoken"
sys.path.insert(0, str(REPO))


def build(root: Path, sessions: int) -> list[Path]:
    from xshare.demo import write_demo_corpus

    demo = write_demo_corpus(root / "demo")
    sources = [path for path in demo.rglob("*.jsonl") if not path.name.startswith("agent-")]
    made = []
    for number in range(sessions):
        out = root / "history" / "projects" / f"-home-dev-p{number % 40}" / f"{uuid.UUID(int=number)}.jsonl"
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(sources[number % len(sources)], out)
        made.append(out)
    return made


def index(root: Path, env: dict) -> float:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "xshare", "html", "--index", "--claude-root", str(root)],
                          env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"xshare html --index failed: {done.stderr[-2000:]}")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--changed", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="xshare-index-bench-") as folder:
        root = Path(folder)
        env = {**os.environ, "XSHARE_HOME": str(root / "home"), "PYTHONPATH": str(REPO)}
        if DEFAULT_VOCAB.is_file():
            env.setdefault("XSHARE_VOCAB", str(DEFAULT_VOCAB))
        started = time.perf_counter()
        made = build(root, args.sessions)
        print(f"history: {len(made):,} sessions built in {time.perf_counter() - started:.1f} s")
        first = index(root / "history", env)
        print(f"index   first (every page written): {first:.1f} s")
        again = index(root / "history", env)
        print(f"index   nothing changed: {again:.2f} s = {again / first:.2f} x the first")
        for path in made[:: max(1, len(made) // args.changed)][: args.changed]:
            with path.open("ab") as handle:  # the last line again: a transcript that grew
                handle.write(path.read_bytes().splitlines(keepends=True)[-1])
        changed = index(root / "history", env)
        print(f"index   {args.changed} transcripts grew: {changed:.2f} s = {changed / first:.2f} x the first "
              "(goal: proportional to what changed)")


if __name__ == "__main__":
    main()
