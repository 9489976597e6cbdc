"""How fast `xshare html` turns a ~10 MB transcript into its page, and how large a 1,000-call session's page is.

Goals (issue 5): a 10 MB transcript renders in under 2 s; the page of a 1,000-call session stays under 2 MB.
Transcripts are invented with xshare's TranscriptWriter (never ../shared/corpus). Every timing runs in a
fresh process, as `xshare html` does, so it includes importing xshare and loading the tokenizer; the
phases (start-up, reading and counting, analysis and HTML) are reported apart.

    python bench/html_speed.py [--mb 10] [--runs 3] [--estimate] [--vocab FILE]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_VOCAB = REPO.parent / "shared" / "vocab" / "o200k_base.tiktoken"
GOAL_SECONDS, GOAL_BYTES = 2.0, 2 * 1024 * 1024
WORDS = ("user", "order", "item", "cache", "token", "parse", "render", "index", "query", "store", "event",
         "handler", "config", "session", "result", "buffer", "stream", "client", "server", "record")


def code(rng: random.Random, lines: int) -> str:
    """Code-like text with varied identifiers, so the tokenizer's per-text cache cannot shortcut it."""
    out = []
    for _ in range(lines):
        a, b, c = rng.choice(WORDS), rng.choice(WORDS), rng.choice(WORDS)
        n = rng.randint(0, 99_999)
        out.append(f"    {a}_{b} = {c}.get_{a}({n}, key='{b}-{n}')  # {c} {b} {a}")
    return "\n".join(out)


def invent(path: Path, *, target_bytes: int | None = None, calls: int | None = None) -> tuple[Path, int]:
    """A session of reads, greps, shell and edits with prompts, idle gaps and compactions, grown until it
    reaches `target_bytes` of JSONL or `calls` API calls."""
    sys.path.insert(0, str(REPO))
    from xshare.demo import TranscriptWriter

    rng = random.Random(5)
    writer = TranscriptWriter(path.stem, "/home/dev/shop", start=datetime(2026, 11, 20, 9, tzinfo=timezone.utc),
                              model="claude-opus-4-6")
    size = n = counted = 0
    while (target_bytes is None or size < target_bytes) and (calls is None or n < calls):
        if n % 30 == 0:
            writer.user(f"Next: look at the {rng.choice(WORDS)} module and fix what the tests say")
        if n % 200 == 199:
            writer.compact("Summary of the earlier work:\n" + code(rng, 40))
        if n % 57 == 56:
            writer.idle(rng.choice((2, 8, 70)))
        kind = n % 5
        file = f"/home/dev/shop/{rng.choice(WORDS)}/{rng.choice(WORDS)}_{n}.py"
        if kind in (0, 1):
            tid = writer.use("Read", {"file_path": file})
            writer.read_result(tid, file, code(rng, rng.randint(20, 260)) + "\n")
        elif kind == 2:
            tid = writer.use("Grep", {"pattern": rng.choice(WORDS), "path": "/home/dev/shop", "output_mode": "content"})
            writer.grep_result(tid, {file: [(i, code(rng, 1)) for i in range(rng.randint(5, 60))]}, mode="content")
        elif kind == 3:
            tid = writer.use("Bash", {"command": f"pytest -q tests/test_{n}.py"})
            writer.bash_result(tid, code(rng, rng.randint(3, 40)))
        else:
            tid = writer.use("Bash", {"command": f"git log -p -3 -- {file}"})
            writer.bash_result(tid, code(rng, rng.randint(10, 120)))
        n += 1
        for row in writer.rows[counted:]:
            line = row if isinstance(row, str) else json.dumps(row, ensure_ascii=False, separators=(",", ":"))
            size += len(line.encode("utf-8")) + 1  # as TranscriptWriter.write() lays it out
        counted = len(writer.rows)
    return writer.write(path), n


def child(transcript: str, out: str, estimate: bool, vocab: str | None) -> None:
    """One fresh process: what `xshare html PATH -o OUT` does, timed by phase."""
    started = time.perf_counter()
    from collections import Counter

    from xshare.agents.claude_code.adapter import ADAPTER
    from xshare.agents.protocol import Found, Looking
    from xshare.html import write as html
    from xshare.html.session_page import render_session
    from xshare.measure import tokens

    choice = tokens.choose(estimate=estimate, vocab=vocab)
    asked = Found(ADAPTER.agent, {"id": Path(transcript).stem}, path=Path(transcript))
    imported = time.perf_counter()
    looking = Looking({}, choice)
    data = html.page_data(ADAPTER.detail(asked, looking, Counter()), ADAPTER, looking)
    measured = time.perf_counter()
    page = render_session(data).encode("utf-8")
    Path(out).write_bytes(page)
    done = time.perf_counter()
    print(json.dumps({"startup": imported - started, "measure": measured - imported, "render": done - measured,
                      "calls": data.row["api_calls"], "bytes": len(page), "tokenizer": data.row["tokenizer"]}))


def timed(transcript: Path, out: Path, args: argparse.Namespace) -> dict:
    command = [sys.executable, __file__, "--child", str(transcript), str(out)]
    command += ["--estimate"] if args.estimate else ["--vocab", args.vocab] if args.vocab else []
    began = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=True, cwd=REPO)
    result = json.loads(done.stdout)
    result["wall"] = time.perf_counter() - began
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=10.0, help="size of the invented transcript (default 10 MB)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--estimate", action="store_true", help="count characters / 4 instead of o200k_base")
    parser.add_argument("--vocab", default=str(DEFAULT_VOCAB) if DEFAULT_VOCAB.is_file() else None)
    parser.add_argument("--child", nargs=2, metavar=("TRANSCRIPT", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child, args.estimate, args.vocab)
        return 0
    ok = True
    with tempfile.TemporaryDirectory(prefix="xshare-html-bench-") as scratch:
        base = Path(scratch) / "projects" / "-home-dev-shop"
        big, calls = invent(base / "big-session.jsonl", target_bytes=int(args.mb * 1024 * 1024))
        mb = big.stat().st_size / 1024 / 1024
        runs = [timed(big, Path(scratch) / "big.html", args) for _ in range(args.runs)]
        wall = statistics.median(run["wall"] for run in runs)
        total = statistics.median(run["startup"] + run["measure"] + run["render"] for run in runs)
        first = runs[0]
        print(f"{mb:.1f} MB transcript, {calls:,} API calls, tokenizer {first['tokenizer']}, "
              f"{args.runs} run(s), median:")
        for phase in ("startup", "measure", "render"):
            print(f"  {phase:<8} {statistics.median(run[phase] for run in runs):6.2f} s")
        print(f"  in-process total {total:.2f} s; process wall (with Python start-up) {wall:.2f} s; "
              f"page {first['bytes'] / 1024:,.0f} KB")
        verdict = wall < GOAL_SECONDS
        ok &= verdict
        print(f"  goal: under {GOAL_SECONDS:g} s -> {'met' if verdict else 'NOT met'}")
        thousand, _ = invent(base / "thousand-calls.jsonl", calls=1_000)
        result = timed(thousand, Path(scratch) / "thousand.html", args)
        verdict = result["bytes"] < GOAL_BYTES
        ok &= verdict
        print(f"1,000-call session ({thousand.stat().st_size / 1024 / 1024:.1f} MB transcript): page "
              f"{result['bytes'] / 1024:,.0f} KB in {result['wall']:.2f} s; goal: under 2 MB -> "
              f"{'met' if verdict else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
