"""What each measuring process keeps: its token counter, made once per process (this one, or a pool's
worker, which inherits or rebuilds it), and when more processes pay for themselves."""

from __future__ import annotations

import multiprocessing
import os
import sys

from xshare.measure import tokens as tokenizers

# below this much to read, starting worker processes costs more than it saves
PARALLEL_MIN_BYTES = 4 << 20
_counter: tokenizers.Counter | None = None
_most_workers: int | None = None  # the background pass measures with one process (sessions/prefill.py)


def use(choice: tokenizers.TokenizerChoice) -> tokenizers.Counter:
    """This process's counter for `choice`: made on first use, or anew when the choice differs (a pool's
    initializer too)."""
    global _counter
    if _counter is None or _counter.choice != choice:
        _counter = tokenizers.Counter(choice)
    return _counter


def current() -> tokenizers.Counter | None:
    """This process's counter, None before any `use`; its choice may have changed on load (an unusable
    vocabulary falls back to the estimate)."""
    return _counter


def flush() -> None:
    """What this process counted, for the other processes and for later runs."""
    if _counter is not None:
        _counter.flush()


def load_if_counting() -> None:
    """Before forking workers: with no count store to read from (or an empty one), every text will be
    counted, so the tokenizer is loaded once here and the workers inherit it; with one, a worker loads
    it only on its first unknown text, and a report whose texts are all known never loads it."""
    if _counter.store is None or not len(_counter.store):
        _counter.load()


def pool_context():
    """fork where it is safe and cheap (Linux: the loaded tokenizer is inherited), else spawn."""
    return multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")


def limit_workers(most: int | None) -> None:
    """At most this many measuring processes from now on in this process (None: one per core)."""
    global _most_workers
    _most_workers = most


def workers(asked: int | None = None) -> int:
    """How many processes measure: as many as asked, else one per core; never more than the limit."""
    wanted = asked or os.cpu_count() or 1
    return min(wanted, _most_workers) if _most_workers else wanted
