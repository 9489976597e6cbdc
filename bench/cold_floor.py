"""What a cold exact report's CPU rests on (issue 34): the parts no change to xshare's own Python code removes,
each measured alone on one history, and what is left for that code.

  - load: fastokens' tables built as a first report builds them (once, before the workers fork), in a fresh
    process;
  - count: every distinct text xshare counts (found by its own reader), counted by fastokens alone, one after
    another on one thread;
  - parse: every line of every transcript read, split and parsed by orjson, one thread.

A cold report's CPU less these three is xshare's own work: the reader and the ledger in Python, the pool.

    python bench/cold_floor.py [--corpus DIR] [--big-gb N]   (default: the corpus itself)

bench/report_speed.py runs `floor` on its yardstick, beside the cold report and ccusage.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (  # noqa: E402
    DEFAULT_CORPUS,
    DEFAULT_VOCAB,
    build_big,
    distinct_texts,
    load_cpu,
    parse_every_line,
    roots_of,
)


@dataclass
class Floor:
    load: float  # CPU seconds
    count: float
    parse: float
    texts: int
    text_bytes: int

    @property
    def total(self) -> float:
        return self.load + self.count + self.parse


def count_cpu(texts: list[str]) -> float:
    """CPU seconds of fastokens counting these texts one after another (xshare's own call: its parts for a
    long text, no cache of counts)."""
    from xshare.measure import tokens

    counter = tokens.Counter(tokens.choose(remember=False))
    counter.load(fast=True)
    exact = counter._exact  # the count of one text, with no cache in front of it
    started = time.process_time()
    for text in texts:
        exact(text)
    return time.process_time() - started


def parse_cpu(roots: list[Path]) -> float:
    """CPU seconds of reading every transcript and parsing each of its lines with orjson, one thread."""
    started = time.process_time()
    parse_every_line(path for root in roots for path in (root / "projects").rglob("*.jsonl"))
    return time.process_time() - started


def floor(roots: list[Path]) -> Floor:
    texts = distinct_texts(roots)
    counted = count_cpu(texts)
    text_bytes = sum(len(text.encode("utf-8", "surrogatepass")) for text in texts)
    return Floor(load_cpu("fast"), counted, parse_cpu(roots), len(texts), text_bytes)


def describe(found: Floor, cold_cpu: float | None = None, theirs_cpu: float | None = None,
             bound: float = 3.0) -> list[str]:
    """The floor in words; with a cold report's CPU and ccusage's, what is left for xshare's own work and what
    the goal (`bound` times ccusage's CPU) leaves it."""
    lines = [f"floor   fastokens' load {found.load:.2f} s CPU, counting the {found.texts:,} distinct texts "
             f"({found.text_bytes / 1e6:.0f} MB) {found.count:.2f} s, parsing every line {found.parse:.2f} s: "
             f"{found.total:.2f} s no change to xshare's own code removes"]
    if cold_cpu is None or not theirs_cpu:
        return lines
    own = cold_cpu - found.total
    room = bound * theirs_cpu - found.total
    if own <= 0:  # measured alone, minutes apart: the machine's speed moved between them
        return [*lines, f"floor   xshare's own work: unknown (the floor, {found.total:.2f} s, came out above the "
                        f"cold report's {cold_cpu:.2f} s; the machine's speed changed between them: run again)"]
    if room <= 0:
        needed = f"the floor alone is over the goal ({bound:g}x)"
    elif own <= room:
        needed = f"the goal ({bound:g}x) leaves it {room:.2f} s: within it"
    else:
        needed = f"the goal ({bound:g}x) leaves it {room:.2f} s: {1 - room / own:.0%} less than now"
    lines.append(f"floor   / ccusage's CPU: the floor {found.total / theirs_cpu:.2f}x; xshare's own work (the cold "
                 f"report's {cold_cpu:.2f} s less the floor) {own:.2f} s = {own / theirs_cpu:.2f}x; {needed}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--big-gb", type=float, default=0, help="a history this big, as report_speed.py builds")
    args = parser.parse_args()
    if "XSHARE_VOCAB" not in os.environ and DEFAULT_VOCAB.is_file():
        os.environ["XSHARE_VOCAB"] = str(DEFAULT_VOCAB)
    roots = roots_of(args.corpus)
    with tempfile.TemporaryDirectory(prefix="xshare-big-") as folder:
        if args.big_gb > 0:
            roots = build_big(roots, Path(folder), args.big_gb, distinct=True)
        for line in describe(floor(roots)):
            print(line)


if __name__ == "__main__":
    main()
