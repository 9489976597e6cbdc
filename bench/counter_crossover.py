"""Where the optional fast counter (fastokens, xshare[fast]) pays for its longer load over tiktoken.

Measured on the distinct texts xshare counts in a corpus (default ../shared/corpus/claude):
  - each counter's load: a fresh process importing xshare, loading the counter and counting one text
    (median of --runs, after one run that fills xshare's own vocabulary caches, as any second run finds them);
  - each counter's throughput, one thread, in MB/s of text, and whether every count is equal;
  - the crossover: the MB of unknown text at which fastokens' extra load is paid back, in CPU (and in wall
    time on N cores, where the load is paid once before the workers fork and the counting is shared),
    beside xshare's threshold (xshare/measure/tokens.py FAST_MIN_TEXT_BYTES).

    python bench/counter_crossover.py [--corpus DIR] [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import DEFAULT_CORPUS, DEFAULT_VOCAB, distinct_texts, roots_of  # noqa: E402

_LOAD = (
    "import sys, time\n"
    "started = time.perf_counter()\n"
    "from xshare.measure import tokens\n"
    "counter = tokens.Counter(tokens.choose(remember=False))\n"
    "counter.load(fast=sys.argv[1] == 'fast')\n"
    "assert counter.fast == (sys.argv[1] == 'fast') and counter.count('hello world') == 2\n"
    "print(time.perf_counter() - started)\n"
)


@dataclass
class Crossover:
    texts: int
    text_bytes: int
    load: dict[str, float]  # seconds, fresh process
    rate: dict[str, float]  # MB/s of text, one thread
    differing: int  # texts whose counts differ (must be 0)

    def bytes_at(self, cores: int = 1) -> float:
        """Text bytes above which fastokens is faster (CPU with cores=1; wall on `cores` workers)."""
        saved_per_mb = 1 / self.rate["tiktoken"] - 1 / self.rate["fast"]
        extra = self.load["fast"] - self.load["tiktoken"]
        return float("inf") if saved_per_mb <= 0 else cores * extra / saved_per_mb * 1e6


def load_seconds(kind: str, runs: int, home: str) -> float:
    env = {**os.environ, "XSHARE_HOME": home}
    command = [sys.executable, "-c", _LOAD, kind]
    subprocess.run(command, env=env, check=True, capture_output=True)  # fills the ranks and vocab caches
    return statistics.median(float(subprocess.run(command, env=env, check=True, capture_output=True,
                                                  text=True).stdout) for _ in range(runs))


def measure(texts: list[str], runs: int = 3) -> Crossover:
    from xshare.measure import tokens

    size = sum(len(text.encode("utf-8", "surrogatepass")) for text in texts)
    counts, rate = {}, {}
    for kind in ("tiktoken", "fast"):
        counter = tokens.Counter(tokens.choose(remember=False))
        counter.load(fast=kind == "fast")
        started = time.perf_counter()
        counts[kind] = [counter.count(text) for text in texts]
        rate[kind] = size / 1e6 / (time.perf_counter() - started)
    with tempfile.TemporaryDirectory() as home:
        load = {kind: load_seconds(kind, runs, home) for kind in ("tiktoken", "fast")}
    differing = sum(a != b for a, b in zip(counts["tiktoken"], counts["fast"], strict=True))
    return Crossover(len(texts), size, load, rate, differing)


def describe(result: Crossover, cores: int) -> list[str]:
    from xshare.agents.common import counting as counter
    from xshare.measure import tokens

    return [
        f"counter tiktoken: load {result.load['tiktoken']:.2f} s, {result.rate['tiktoken']:.1f} MB/s of text; "
        f"fastokens: load {result.load['fast']:.2f} s, {result.rate['fast']:.1f} MB/s "
        f"({result.rate['fast'] / result.rate['tiktoken']:.1f}x); {result.texts:,} texts, "
        f"{result.text_bytes / 1e6:.1f} MB, {result.differing} counts differ (must be 0)",
        f"crossover fastokens pays from {result.bytes_at() / 1e6:.0f} MB of unknown text in CPU, "
        f"{result.bytes_at(cores) / 1e6:.0f} MB in wall time on {cores} cores; xshare uses it from "
        f"{tokens.FAST_MIN_TEXT_BYTES / 1e6:.0f} MB of text (about "
        f"{tokens.FAST_MIN_TEXT_BYTES / counter.TEXT_SHARE / 1e6:.0f} MB of transcripts) in a cold report",
    ]


def per_worker(result: Crossover, share: float, history_bytes: int, cores: int) -> list[str]:
    """The crossover where xshare's rule decides it, per worker (on N workers the load is paid once before they
    fork and the saving is shared by N, so fastokens pays once each worker's text passes the CPU crossover), as
    MB of distinct text and of transcripts at `share` (distinct text per byte of transcripts), against xshare's
    constants; and which counter the rule picks for a history of `history_bytes`, and which pays there."""
    from xshare.agents.common import counting
    from xshare.measure import tokens

    text, code_text, code_share = result.bytes_at(), tokens.FAST_MIN_TEXT_BYTES, counting.TEXT_SHARE
    expected, needed = history_bytes * code_share, code_text * max(cores, 1)
    return [
        f"crossover per worker: fastokens pays from {text / 1e6:.0f} MB of distinct text = {text / share / 1e6:.0f} "
        f"MB of transcripts (at the {share:.3f} measured); xshare: {code_text / 1e6:.0f} MB of text "
        f"(FAST_MIN_TEXT_BYTES) = {code_text / code_share / 1e6:.0f} MB of transcripts (/ TEXT_SHARE {code_share})",
        "crossover " + "; ".join((agreement("text per worker, FAST_MIN_TEXT_BYTES", code_text, text),
                                  agreement("transcripts per worker, FAST_MIN_TEXT_BYTES / TEXT_SHARE",
                                            code_text / code_share, text / share),
                                  agreement("distinct text per byte, TEXT_SHARE", code_share, share))),
        f"crossover on this {history_bytes / 1e9:.2f} GB history on {cores} workers xshare's rule picks "
        f"{'fastokens' if expected >= needed else 'tiktoken'} ({expected / 1e6:.0f} MB of text expected, "
        f"{needed / 1e6:.0f} MB needed); as measured, fastokens "
        f"{'pays' if history_bytes * share >= text * max(cores, 1) else 'does not pay'} here",
    ]


def agreement(what: str, in_code: float, measured: float) -> str:
    """Whether xshare's constant and the measured value agree within a factor 1.5 (the loads drift that much
    from run to run on a shared machine)."""
    ratio = in_code / measured if measured else float("inf")
    verdict = "agree" if 1 / 1.5 <= ratio <= 1.5 else "DISAGREE"
    return f"{what}: {verdict} (xshare's {ratio:.2f}x the measured)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if "XSHARE_VOCAB" not in os.environ and DEFAULT_VOCAB.is_file():
        os.environ["XSHARE_VOCAB"] = str(DEFAULT_VOCAB)
    from xshare.agents.common import counting as counter
    from xshare.measure import tokens

    if not tokens.fast_installed():
        sys.exit("fastokens is not installed (pip install 'xshare[fast]')")
    for line in describe(measure(distinct_texts(roots_of(args.corpus)), args.runs), counter.cores()):
        print(line)


if __name__ == "__main__":
    main()
