"""What each measuring process keeps: its token counter, made once per process (this one, or a pool's
worker, which inherits or rebuilds it), and when more processes pay for themselves."""

from __future__ import annotations

import multiprocessing
import os
import sys
from typing import Protocol

from xshare.measure import tokens as tokenizers

# below this much to read, starting worker processes costs more than it saves
PARALLEL_MIN_BYTES = 4 << 20
# distinct text to count per byte of transcripts: 22.9 MB in the corpus's 121.7 MB (bench/counter_crossover.py);
# the text is ~0.47 of the bytes, but much of it is re-sent, and each distinct text is counted once
TEXT_SHARE = 0.19


class TokenCounter(Protocol):
    """What a reader counts with, given by its caller: a text's tokens, and the tokenizer's name its rows
    say (measure.tokens.Counter; the live path's lazy one, live/session_state.py)."""

    @property
    def name(self) -> str: ...

    @property
    def fallbacks(self) -> int:
        """Texts the tokenizer failed on, estimated as characters / 4."""

    def count(self, text: str) -> int: ...

    def flush(self) -> None:
        """What it counted, for the other processes and later runs."""


_counter: tokenizers.Counter | None = None
_most_workers: int | None = None  # the background pass measures with one process (sessions/prefill.py)


def use(choice: tokenizers.TokenizerChoice, fast: bool = False) -> tokenizers.Counter:
    """This process's counter for `choice`: made on first use, or anew when the choice differs (a pool's
    initializer too; a spawned worker of a `fast` report loads fastokens at once, a forked one has it)."""
    global _counter
    if _counter is None or _counter.choice != choice:
        _counter = tokenizers.Counter(choice)
        if fast:
            _counter.load(fast=True)
    return _counter


def fast() -> bool:
    """Whether this process counts with fastokens (what a pool's spawned workers should load too)."""
    return _counter is not None and _counter.fast


def made() -> tokenizers.Counter:
    """This process's counter where one must have been made (by `use`, or a pool's initializer)."""
    assert _counter is not None, "counting.use() first"
    return _counter


def current() -> tokenizers.Counter | None:
    """This process's counter, None before any `use`; its choice may have changed on load (an unusable
    vocabulary falls back to the estimate)."""
    return _counter


def flush() -> None:
    """What this process counted, for the other processes and for later runs."""
    if _counter is not None:
        _counter.flush()


def load_if_counting(to_read: int = 0, workers: int = 1) -> None:
    """Before forking workers: with no count store to read from (or an empty one), every text will be
    counted, so the tokenizer is loaded once here and the workers inherit it; with one, a worker loads
    it only on its first unknown text, and a report whose texts are all known never loads it. When the
    `to_read` bytes of records hold enough text to pay for loading it, fastokens counts (if installed): its
    load is paid once, before the workers fork, and what it saves is shared by them, hence `workers` times.
    $XSHARE_COUNTER=tiktoken or fastokens overrides that choice (benchmarks; ruling out the extra)."""
    made_here = made()
    if made_here.store is None or not len(made_here.store):
        wanted = os.environ.get("XSHARE_COUNTER", "")
        fast = wanted == "fastokens" or (
            wanted != "tiktoken" and to_read * TEXT_SHARE >= tokenizers.FAST_MIN_TEXT_BYTES * max(workers, 1))
        made_here.load(fast=fast)


def cores() -> int:
    """The cores this process may run on (taskset, cgroup cpusets, `nice` containers), not the machine's:
    more workers than that only take turns."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # macOS and Windows have no affinity call
        return os.cpu_count() or 1


def pool_context():
    """fork where it is safe and cheap (Linux: the loaded tokenizer is inherited), else spawn."""
    return multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")


def limit_workers(most: int | None) -> None:
    """At most this many measuring processes from now on in this process (None: one per core)."""
    global _most_workers
    _most_workers = most


def workers(asked: int | None = None) -> int:
    """How many processes measure: as many as asked, else one per core this process may use (`cores`);
    never more than the limit."""
    wanted = asked or cores()
    return min(wanted, _most_workers) if _most_workers else wanted
