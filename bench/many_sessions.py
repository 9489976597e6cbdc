"""Memory and time of `xshare report` over many small sessions (issue 18): peak RSS must stay under the goal
whatever the number of sessions.

Writes N small invented Claude Code transcripts (default 100,000; a few calls each, a few KB) into a temporary
folder (never ../shared/corpus), then times in fresh processes, each with the peak resident memory of its
largest process:
  - a cold report (every transcript read; the history of N sessions is written as it goes),
  - a warm report (nothing changed: the rows cache and the history answer),
  - a report whose transcripts are gone (deleted): the history of N sessions alone.
Extra flags for each report (e.g. `--json`, `--by week`, `--rows FILE`) go after `--`.

    nice python bench/many_sessions.py [--sessions N] [--keep DIR] [-- REPORT FLAGS]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import process_tree  # noqa: E402

GOAL_MB = 400
TOOLS = (("Read", "file_path"), ("Grep", "pattern"), ("Bash", "command"), ("Edit", "file_path"))
WORDS = "alpha beta gamma delta parse token share session report ledger count window cache row".split()


def _body(rng: random.Random, lines: int) -> str:
    return "\n".join(f"{n:4d}  def {rng.choice(WORDS)}_{rng.randrange(99)}(): return {rng.randrange(10 ** 6)}"
                     for n in range(1, lines + 1))


def _session_lines(number: int, bodies: list[str]) -> list[dict]:
    """One invented session: a prompt, 2 to 6 calls with tools (results from a shared pool of bodies, as
    files a team reads again and again), a reply; its start spread over the two years to 2026-11-01 (for
    --by week)."""
    rng = random.Random(number)
    session = f"{hashlib.sha1(str(number).encode()).hexdigest()[:8]}-0000-4000-8000-{number:012d}"
    start = 1_733_011_200 + rng.randrange(700 * 86400)  # from 2024-12-01
    clock = iter(range(start, start + 10_000, 7))
    base = {"sessionId": session, "cwd": f"/home/dev/p{number % 40}", "version": "2.1.100", "entrypoint": "cli",
            "userType": "external", "isSidechain": False}

    def row(kind: str, message: dict, **extra: object) -> dict:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(next(clock)))
        return {**base, "type": kind, "uuid": f"{session}-{len(rows)}", "timestamp": stamp, "message": message,
                **extra}

    rows: list[dict] = []
    rows.append(row("user", {"role": "user", "content": f"task {number}: look at {rng.choice(WORDS)} and fix it"}))
    context = 3000
    calls = rng.randrange(2, 7)
    for call in range(calls + 1):
        context += rng.randrange(200, 900)
        usage = {"input_tokens": 3, "cache_read_input_tokens": context - 500, "cache_creation_input_tokens": 497,
                 "output_tokens": 40}
        if call == calls:
            content = [{"type": "text", "text": f"Done with task {number}."}]
        else:
            tool, field = rng.choice(TOOLS)
            arg = f"src/{rng.choice(WORDS)}.py" if field == "file_path" else f"git log -{rng.randrange(9)}"
            content = [{"type": "tool_use", "id": f"toolu_{number}_{call}", "name": tool, "input": {field: arg}}]
        message = {"id": f"msg_{number}_{call}", "type": "message", "role": "assistant",
                   "model": "claude-sonnet-4-5", "content": content, "stop_reason": None, "usage": usage}
        rows.append(row("assistant", message, requestId=f"req_{number}_{call}"))
        if call < calls:
            result = {"type": "tool_result", "tool_use_id": f"toolu_{number}_{call}", "content": rng.choice(bodies)}
            rows.append(row("user", {"role": "user", "content": [result]}))
    return rows


def build(projects: Path, sessions: int) -> int:
    """The transcripts, in 40 project folders; returns their bytes."""
    pool = random.Random(0)
    bodies = [_body(pool, pool.randrange(5, 40)) for _ in range(300)]
    total = 0
    for number in range(sessions):
        rows = _session_lines(number, bodies)
        path = projects / f"-home-dev-p{number % 40}" / f"{rows[0]['sessionId']}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        data = "".join(json.dumps(line) + "\n" for line in rows).encode()
        path.write_bytes(data)
        total += len(data)
    return total


def run(env: dict, flags: list[str]) -> tuple[float, float]:
    """Seconds and peak MB of one `xshare report --all` in a fresh process."""
    seconds, _, peak, code, stderr = process_tree([sys.executable, "-m", "xshare", "report", "--all", *flags], env)
    if code != 0:
        sys.exit(f"xshare report failed: {stderr[-2000:]}")
    return seconds, peak


def show(what: str, seconds: float, peak: float) -> None:
    verdict = "met" if peak < GOAL_MB else "MISSED"
    print(f"{what:<40} {seconds:7.1f} s   peak {peak:6.0f} MB   (goal < {GOAL_MB} MB: {verdict})", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument("--keep", metavar="DIR", help="build here and leave it (default: a temporary folder)")
    parser.add_argument("flags", nargs="*", help="report flags, after --")
    args = parser.parse_args()
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="xshare-many-"))
    try:
        home, config = folder / "home", folder / "claude"
        home.mkdir(parents=True, exist_ok=True)
        # an empty user home: no other agent's sessions and no Claude default root but this one
        env = {key: value for key, value in os.environ.items()
               if key not in ("HERMES_HOME", "CODEX_HOME", "GEMINI_CLI_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME",
                              "OPENCLAW_STATE_DIR", "OPENCLAW_HOME", "XDG_STATE_HOME")}
        env.update(HOME=str(home), XSHARE_HOME=str(folder / "xshare"), CLAUDE_CONFIG_DIR=str(config),
                   PYTHONPATH=str(REPO), XSHARE_WORKER="0")
        started = time.perf_counter()
        size = build(config / "projects", args.sessions)
        print(f"{args.sessions:,} transcripts, {size / 1e6:,.0f} MB, written in {time.perf_counter() - started:.1f} s"
              f"; report flags: {' '.join(args.flags) or '(none)'}", flush=True)
        show("cold report (history written)", *run(env, args.flags))
        show("warm report (nothing changed)", *run(env, args.flags))
        shutil.rmtree(config / "projects")
        (config / "projects").mkdir()
        history = folder / "xshare" / "history" / "sessions.jsonl"
        print(f"transcripts deleted; history {history.stat().st_size / 1e6:,.0f} MB", flush=True)
        show("transcripts gone (history only)", *run(env, args.flags))
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
