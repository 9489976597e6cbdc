"""How fast `xshare report` reads each other agent's sessions (Codex CLI, Gemini CLI, OpenCode, OpenClaw),
against the tokenizer's own limit, with the report's goals (issue 2) per agent.

For each agent's sample homes (default ../shared/corpus/<agent>/*):
  - the limit: tiktoken's o200k_base, one thread, over exactly the distinct texts its adapter counts,
    as MB/s of the agent's files;
  - a cold report with tiktoken (no cache, all cores) and with --estimate, as MB/s;
  - a warm re-run (cached) and the peak resident memory of any one process.
Goals: cold >= 0.7 x the limit, --estimate >= 100 MB/s, warm < 1 s, peak < 400 MB. On samples this
small, the fixed costs (process start-up and loading the vocabulary, about 0.4 s together; the warm line
shows the start-up alone) weigh on the cold figures: the limit line says how much work there is.

    python bench/agents_speed.py [--corpus DIR] [--runs N] [--agent NAME]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import DEFAULT_VOCAB, Counted, process_tree  # noqa: E402

SEED = Path(tempfile.mkdtemp(prefix="xshare-bench-seed-"))  # holds the parsed vocabulary, built once
def tokenizer_limit(adapter, files: list[Path]) -> tuple[float, int, int]:
    """Seconds tiktoken alone needs for the distinct texts the adapter counts (their count and bytes)."""
    from xshare.measure import tokens

    texts: dict[tuple[int, int], str] = {}

    def record(text: str) -> int:
        texts.setdefault((hash(text), len(text)), text)
        return 0

    for path in files:
        adapter.read(path, Counted(record, "record"), Counter())
    counter = tokens.Counter(tokens.choose())
    if counter.name != tokens.O200K:
        sys.exit(f"no o200k_base vocabulary ({counter.choice.note}); set XSHARE_VOCAB")
    started = time.perf_counter()
    for text in texts.values():
        counter._count(text)  # tiktoken alone, no cache
    elapsed = time.perf_counter() - started
    return elapsed, len(texts), sum(len(text.encode("utf-8", "surrogatepass")) for text in texts.values())


def run_report(flags: list[str], home: Path, *extra: str) -> tuple[float, int]:
    """Wall seconds and peak RSS (MB) of one `xshare report` process tree over only these flags' homes."""
    command = [sys.executable, "-m", "xshare", "report", "--all", "--json", *flags, *extra,
               "--claude-root", str(home / "no-claude"), "--hermes-db", str(home / "no-hermes.db")]
    env = {**os.environ, "XSHARE_HOME": str(home), "PYTHONPATH": str(REPO)}
    elapsed, _, peak, code, stderr = process_tree(command, env)
    if code != 0:
        sys.exit(f"report failed ({code}): {stderr[-2000:]}")
    return elapsed, peak


def timed(runs: int, flags: list[str], *extra: str, warm: bool = False) -> tuple[list[float], int]:
    """Each run in a fresh xshare home holding only the parsed vocabulary (a one-off 0.5 s per machine,
    which would otherwise swamp samples this small)."""
    seconds, peak = [], 0
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as home:
            shutil.copytree(SEED / "vocab", Path(home) / "vocab")
            if warm:
                run_report(flags, Path(home), *extra)
            elapsed, used = run_report(flags, Path(home), *extra)
            seconds.append(elapsed)
            peak = max(peak, used)
    return seconds, peak


def spread(values: list[float]) -> str:
    return f"median {statistics.median(values):.2f} s (min {min(values):.2f}, max {max(values):.2f})"


def bench(adapter, homes: list[Path], runs: int) -> None:
    from xshare.sessions.registry import REGISTRY

    ADAPTERS = [adapter.reader for adapter in REGISTRY if hasattr(adapter, "reader")]  # the four reader modules

    files = adapter.discover(homes)
    size_mb = sum(path.stat().st_size for path in files) / 1e6
    flags = [f"--{adapter.FLAG.replace('_', '-')}={home}" for home in homes]
    for other in ADAPTERS:  # only this agent: the others look in an empty place
        if other is not adapter:
            flags.append(f"--{other.FLAG.replace('_', '-')}=/nonexistent")
    print(f"\n{adapter.NAME}: {len(homes)} homes, {len(files)} files, {size_mb:.1f} MB")
    limit_s, texts, text_bytes = tokenizer_limit(adapter, files)
    limit = size_mb / limit_s if limit_s else float("inf")
    print(f"  limit   tiktoken alone, 1 thread: {texts:,} distinct texts, {text_bytes / 1e6:.1f} MB, "
          f"{limit_s:.2f} s = {limit:.1f} MB/s")
    cold, cold_peak = timed(runs, flags, "--no-cache")
    rate = size_mb / statistics.median(cold)
    print(f"  cold    o200k_base: {spread(cold)} = {rate:.1f} MB/s = {rate / limit:.2f} x the limit "
          f"(goal >= 0.70); peak {cold_peak} MB")
    estimate, estimate_peak = timed(runs, flags, "--no-cache", "--estimate")
    print(f"  cold    --estimate: {spread(estimate)} = {size_mb / statistics.median(estimate):.0f} MB/s "
          f"(goal >= 100); peak {estimate_peak} MB")
    warm, warm_peak = timed(runs, flags, warm=True)
    print(f"  warm    cached re-run: {spread(warm)} (goal < 1 s); peak {warm_peak} MB")


def main() -> None:
    from xshare.sessions.registry import REGISTRY

    ADAPTERS = [adapter.reader for adapter in REGISTRY if hasattr(adapter, "reader")]  # the four reader modules

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--agent", choices=[adapter.AGENT for adapter in ADAPTERS])
    args = parser.parse_args()
    if "XSHARE_VOCAB" not in os.environ and DEFAULT_VOCAB.is_file():
        os.environ["XSHARE_VOCAB"] = str(DEFAULT_VOCAB)
    print(f"{os.cpu_count()} cores; runs: {args.runs}")
    os.environ["XSHARE_HOME"] = str(SEED)
    from xshare.measure import tokens

    tokens.Counter(tokens.choose()).count("seed")  # parses the vocabulary into SEED/vocab once
    for adapter in ADAPTERS:
        folder = args.corpus / adapter.AGENT
        if (args.agent and adapter.AGENT != args.agent) or not folder.is_dir():
            continue
        bench(adapter, sorted(path for path in folder.iterdir() if path.is_dir()), args.runs)


if __name__ == "__main__":
    main()
