"""How fast `xshare report` reads Claude Code transcripts, against the tokenizer's own limit.

Measured in one run, on one corpus (default ../shared/corpus/claude, every root):
  - the limit: tiktoken's o200k_base encode_ordinary, one thread, over exactly the distinct texts
    xshare counts in that corpus, expressed as MB/s of transcript JSONL;
  - a cold report with tiktoken (no cache, all cores) and with --estimate, as MB/s of JSONL;
  - a warm re-run (everything cached) and the peak resident memory of any one process.
Goals (issue 2): cold >= 0.7 x the limit, --estimate >= 100 MB/s, warm < 1 s, peak < 400 MB.

    python bench/report_speed.py [--corpus DIR] [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus" / "claude"
DEFAULT_VOCAB = REPO.parent / "shared" / "vocab" / "o200k_base.tiktoken"

# Runs one command and prints the peak RSS (KB) over it and every process it started.
_PEAK = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, code)\n"
)


def roots_of(corpus: Path) -> list[Path]:
    if (corpus / "projects").is_dir():
        return [corpus]
    return sorted(path for path in corpus.iterdir() if (path / "projects").is_dir())


def jsonl_bytes(roots: list[Path]) -> int:
    return sum(path.stat().st_size for root in roots for path in (root / "projects").rglob("*.jsonl"))


def tokenizer_limit(roots: list[Path]) -> tuple[float, int, int]:
    """Seconds tiktoken alone needs for the distinct texts xshare counts (and their count and bytes)."""
    from xshare import tokens
    from xshare.sources import claude

    texts: dict[tuple[int, int], str] = {}

    def record(text: str) -> int:
        texts.setdefault((hash(text), len(text)), text)
        return 0

    for file in claude.discover([root / "projects" for root in roots]):
        claude.ClaudeTranscript(file, record, "record").catch_up()
    counter = tokens.Counter(tokens.choose())
    if counter.name != tokens.O200K:
        sys.exit(f"no o200k_base vocabulary ({counter.choice.note}); set XSHARE_VOCAB")
    encode = counter._count  # tiktoken alone (its count of one text), no cache
    started = time.perf_counter()
    for text in texts.values():
        encode(text)
    elapsed = time.perf_counter() - started
    size = sum(len(text.encode("utf-8", "surrogatepass")) for text in texts.values())
    return elapsed, len(texts), size


def run_report(roots: list[Path], home: Path, *extra: str) -> tuple[float, int]:
    """Wall seconds and peak RSS (MB) of one `xshare report` process tree."""
    command = [sys.executable, "-m", "xshare", "report", "--all", "--json", *extra]
    for root in roots:
        command += ["--claude-root", str(root)]
    env = {**os.environ, "XSHARE_HOME": str(home)}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _PEAK, *command], env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    peak_kb, code = done.stdout.split()
    if code != "0":
        sys.exit(f"report failed ({code}): {done.stderr[-2000:]}")
    return elapsed, int(peak_kb) // 1024


def timed(runs: int, roots: list[Path], *extra: str, warm: bool = False) -> tuple[list[float], int]:
    seconds, peak = [], 0
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as home:
            if warm:
                run_report(roots, Path(home), *extra)
            elapsed, used = run_report(roots, Path(home), *extra)
            seconds.append(elapsed)
            peak = max(peak, used)
    return seconds, peak


def spread(values: list[float]) -> str:
    return f"median {statistics.median(values):.2f} s (min {min(values):.2f}, max {max(values):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if not args.corpus.is_dir():
        sys.exit(f"no corpus at {args.corpus}")
    if "XSHARE_VOCAB" not in os.environ and DEFAULT_VOCAB.is_file():
        os.environ["XSHARE_VOCAB"] = str(DEFAULT_VOCAB)
    roots = roots_of(args.corpus)
    size_mb = jsonl_bytes(roots) / 1e6
    print(f"corpus: {len(roots)} roots, {size_mb:.1f} MB of JSONL; {os.cpu_count()} cores; runs: {args.runs}")

    limit_s, texts, text_bytes = tokenizer_limit(roots)
    limit = size_mb / limit_s
    print(f"limit   tiktoken alone, 1 thread: {texts:,} distinct texts, {text_bytes / 1e6:.1f} MB, "
          f"{limit_s:.2f} s = {limit:.1f} MB/s of JSONL")

    cold, cold_peak = timed(args.runs, roots, "--no-cache")
    cold_rate = size_mb / statistics.median(cold)
    print(f"cold    o200k_base: {spread(cold)} = {cold_rate:.1f} MB/s = {cold_rate / limit:.2f} x the limit "
          f"(goal >= 0.70); peak {cold_peak} MB")

    estimate, estimate_peak = timed(args.runs, roots, "--no-cache", "--estimate")
    estimate_rate = size_mb / statistics.median(estimate)
    print(f"cold    --estimate: {spread(estimate)} = {estimate_rate:.0f} MB/s (goal >= 100); peak {estimate_peak} MB")

    warm, warm_peak = timed(args.runs, roots, warm=True)
    print(f"warm    cached re-run: {spread(warm)} (goal < 1 s); peak {warm_peak} MB")
    peak = max(cold_peak, estimate_peak, warm_peak)
    print(f"memory  peak resident of any one process: {peak} MB (goal < 400 MB)")


if __name__ == "__main__":
    main()
