"""Token counters and measuring processes: the counter a request carries (`LazyCounter`, made by the command
as `Looking.counter` and passed to every adapter's `measure` and `read`), and when more processes pay for
themselves.

A pool's worker is the one place a counter is kept per process: a job travels to it as plain data, so its
initializer (`use`) makes the worker's own (or keeps the one a forked worker inherits from the parent, which
`share_with_workers` hands over with its tokenizer loaded), and its jobs count with `made()`."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import weakref
from collections.abc import Iterator
from typing import Protocol

from xshare.agents.common import progress
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


class LazyCounter:
    """One request's token counter (a command's `Looking.counter`): the tokenizer (and the vocabulary's check,
    which imports tiktoken) is made on the first text counted or the first name asked, so a report whose rows
    are all cached never makes it. Its `choice` is then the one made: an unusable vocabulary turns it into the
    estimate, and every later agent of the request counts with that."""

    def __init__(self, choice: tokenizers.TokenizerChoice) -> None:
        self._asked = choice
        self._made: tokenizers.Counter | None = None

    @property
    def choice(self) -> tokenizers.TokenizerChoice:
        """The tokenizer counting now: the one asked for until it is made, then the one made."""
        return self._made.choice if self._made is not None else self._asked

    def made(self) -> tokenizers.Counter:
        """The counter itself, made now if it was not (readers count with it: no call in between)."""
        if self._made is None:
            self._made = tokenizers.Counter(self._asked)
        return self._made

    def is_made(self) -> bool:
        return self._made is not None

    @property
    def name(self) -> str:
        return self.made().name

    @property
    def fallbacks(self) -> int:
        return self._made.fallbacks if self._made is not None else 0

    def count(self, text: str) -> int:
        return self.made().count(text)

    def flush(self) -> None:
        if self._made is not None:
            self._made.flush()


_counter: tokenizers.Counter | None = None  # a pool worker's (see the module's docstring)
_loaded: weakref.WeakSet[tokenizers.Counter] = weakref.WeakSet()  # counters load_if_counting has loaded
_most_workers: int | None = None  # the background pass measures with one process (sessions/prefill.py)


def share_with_workers(counter: tokenizers.Counter) -> None:
    """Before a pool starts: its forked workers inherit `counter` (its tokenizer loaded once, here), and
    `use` keeps it for them."""
    global _counter
    _counter = counter


def use(choice: tokenizers.TokenizerChoice, fast: bool = False) -> tokenizers.Counter:
    """A pool worker's counter for `choice` (the pool's initializer): the one it inherited when its choice is
    that, else made (a spawned worker of a `fast` report loads fastokens at once, a forked one has it)."""
    global _counter
    if _counter is None or _counter.choice != choice:
        _counter = tokenizers.Counter(choice)
        if fast:
            _counter.load(fast=True)
    return _counter


def start_worker(choice: tokenizers.TokenizerChoice, fast: bool = False) -> tokenizers.Counter:
    """A measuring pool's initializer: `use`, and Ctrl-C ignored between jobs, so it stops a job
    (`interruptible`), never a worker waiting for one (which would die with a traceback)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    return use(choice, fast)


def _stop_once(signum, frame) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent passes Ctrl-C on too: one stop is enough
    raise KeyboardInterrupt


@contextlib.contextmanager
def interruptible(current: tokenizers.Counter) -> Iterator[None]:
    """A pool worker's job: Ctrl-C (the terminal's, or the parent's passed on) stops it, and what it counted
    is kept in the count store either way."""
    signal.signal(signal.SIGINT, _stop_once)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        current.flush()


@contextlib.contextmanager
def shielded() -> Iterator[None]:
    """Ctrl-C held off while what was measured is kept (it would cut a save short), and raised after it.
    Only the main thread receives signals, so elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        raise KeyboardInterrupt


def stop_workers() -> None:
    """Ctrl-C passed on to this process's workers (a `kill -INT` reaches only the parent); a worker already
    stopping ignores it."""
    multiprocessing = sys.modules.get("multiprocessing")  # not imported: no pool was made, nothing to stop
    for child in multiprocessing.active_children() if multiprocessing else ():
        with contextlib.suppress(OSError, TypeError):
            os.kill(child.pid, signal.SIGINT)


def made() -> tokenizers.Counter:
    """A pool worker's counter, made by the pool's initializer (`use`)."""
    assert _counter is not None, "counting.use() first"
    return _counter


def load_if_counting(made_here: tokenizers.Counter, to_read: int = 0, workers: int = 1) -> None:
    """Before forking workers: with no count store to read from (or an empty one), every text will be
    counted, so the tokenizer is loaded once here and the workers inherit it; with one, a worker loads
    it only on its first unknown text, and a report whose texts are all known never loads it. When the
    `to_read` bytes of records hold enough text to pay for loading it, fastokens counts (if installed): its
    load is paid once, before the workers fork, and what it saves is shared by them, hence `workers` times.
    $XSHARE_COUNTER=tiktoken or fastokens overrides that choice (benchmarks; ruling out fastokens). The
    choice and why are kept on `made_here` for the report (`how_counted`)."""
    known = len(made_here.store) if made_here.store is not None else 0
    if known:
        if made_here.known_before is None:  # the first agent's: later ones see the same, unrefreshed store
            made_here.known_before = known
        return
    wanted = os.environ.get("XSHARE_COUNTER", "")
    pays_from = int(tokenizers.FAST_MIN_TEXT_BYTES * max(workers, 1) / TEXT_SHARE)
    if wanted in (tokenizers.FASTOKENS, tokenizers.TIKTOKEN):
        fast, why = wanted == tokenizers.FASTOKENS, f"XSHARE_COUNTER={wanted}"
    elif to_read >= pays_from:
        fast, why = True, f"loaded because {_size(to_read)} of records was to be counted from nothing"
    else:
        fast, why = False, (f"fewer texts than fastokens' load pays for: {_size(to_read)} of records to count "
                            f"from nothing, it pays from {_size(pays_from)}")
    if made_here not in _loaded:  # a second pass (the files read again) finds it loaded: nothing to say
        progress.doing("loading the tokenizer", blocking=True)
    made_here.load(fast=fast, why=why)
    _loaded.add(made_here)


def how_counted(counter: LazyCounter) -> tuple[str | None, str]:
    """Which counter counted this request's new texts (fastokens, tiktoken, or None: none was loaded) and
    why, in plain words, for the report's Tokenizer line. A worker that loaded tiktoken on a text no run had
    counted is seen in the count store it added to; the figures are the same whichever counted."""
    if counter.choice.name != tokenizers.O200K:
        return None, ""  # an estimate: the Tokenizer line already says why
    made = counter.made() if counter.is_made() else None
    if made is not None and made.loaded is not None:
        if made.loaded == tokenizers.FASTOKENS:
            return made.loaded, f"exact, the same counts as tiktoken; {made.why}"
        if made.why:
            return made.loaded, made.why
    added = _added_to_store(made) if made is not None else 0
    if made is not None and (made.loaded is not None or added):
        remembered = made.known_before or (made.store is not None and len(made.store) > added)
        return tokenizers.TIKTOKEN, ("the texts no earlier run had counted; fastokens loads only when counting "
                                     "from nothing" if remembered else "fewer texts than fastokens' load pays for")
    return None, "every count remembered from earlier runs: no tokenizer loaded"


def _added_to_store(made: tokenizers.Counter) -> int:
    """Counts the store gained since the report began (its workers', and the hook's meanwhile)."""
    if made.store is None or made.known_before is None:
        return 0
    made.store.refresh()
    return max(len(made.store) - made.known_before, 0)


def _size(count: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} bytes"


def cores() -> int:
    """The cores this process may run on (taskset, cgroup cpusets, `nice` containers), not the machine's:
    more workers than that only take turns."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # macOS and Windows have no affinity call
        return os.cpu_count() or 1


def pool_context():
    """fork where it is safe and cheap (Linux: the loaded tokenizer is inherited), else spawn."""
    import multiprocessing  # with its own imports, a tenth of a report's start-up: only for a pool

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
