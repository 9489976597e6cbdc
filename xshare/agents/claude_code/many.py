"""Claude Code's sessions measured: every transcript, re-reading only those that changed, spread over the
machine's cores; one session in detail (`xshare session`, its page); a session found by path or id.

The cache keeps each transcript's row under its path, size and modification time; a different
tokenizer or method version makes every entry stale. Files to read are spread over the machine's
cores, largest first; each worker runs the same incremental reader the live hook runs.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

from xshare.agents.claude_code import copies as claude_copies
from xshare.agents.claude_code import files as claude
from xshare.agents.claude_code import outcome_cache, resumes, rows_cache
from xshare.agents.claude_code.copies import CallTimes
from xshare.agents.claude_code.files import TranscriptFile
from xshare.agents.claude_code.unrecorded import complete_packed, complete_with_unrecorded
from xshare.agents.common import counting, progress
from xshare.agents.common.counting import LazyCounter, TokenCounter
from xshare.agents.common.measured import Measured
from xshare.agents.common.packed import PackedRows
from xshare.measure import tokens as tokenizers
from xshare.measure.ids import key_path, normal_id, path_key
from xshare.measure.row import SessionRow
from xshare.state.store import dumps, loads

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing; checkers see True
if TYPE_CHECKING:
    from xshare.agents.claude_code.transcript import ClaudeTranscript

COPY_FILES = "Claude Code transcripts that copy another file's session (counted once, as that file)"
_IN_FLIGHT = 4  # batches per worker submitted ahead of the results: workers stay busy, few futures live
# sessions travel to a worker together up to either (a large one alone): each batch costs the parent about a
# millisecond to send and collect (1 MB batches: 663 on the 1.2 GB yardstick, 0.5 s of its CPU; 16 MB: 109)
_BATCH_FILES, _BATCH_BYTES = 32, 16 << 20
_BATCHES_PER_WORKER = 8  # at least: a batch is small beside the whole, so the last ones even the workers out
# a file's row, problems, calls' times and the calls it read as another file's, as a worker sends them
Packed = tuple[bytes, dict | None, bytes, tuple[int, ...]]
_STOPPING = 30.0  # seconds a worker has to stop after Ctrl-C (it stops within a text or two)


def read_file(file: TranscriptFile, current: TokenCounter, copied=(), detail: bool = False,
              earlier: claude_copies.EarlierCalls | None = None) -> ClaudeTranscript:
    """One transcript read start to end with the caller's counter, the calls in `copied` read as another
    file's, and those that a file read before (`earlier`) holds earlier."""
    from xshare.agents.claude_code.transcript import ClaudeTranscript  # the reader: not for a report that reads none

    transcript = ClaudeTranscript(file, current, detail, copied)
    if earlier is not None:
        transcript.copies.after(earlier, file.source, path_key(file.path))
    fallbacks = current.fallbacks
    transcript.catch_up()
    if current.fallbacks > fallbacks:  # texts tiktoken failed on (a Rust panic): estimated, and said so
        transcript.problems["texts tiktoken could not count, estimated as characters / 4"] += (
            current.fallbacks - fallbacks)
    return transcript


def measure_file(file: TranscriptFile, current: TokenCounter, copied=()) -> tuple[SessionRow, dict, CallTimes]:
    """One transcript: its row (even with no API call), its problems, and its own calls' start times
    (which other files may hold copies of: see agents/claude_code/copies.py), counted by `current`."""
    transcript = read_file(file, current, copied)
    return transcript.row(), dict(transcript.problems), transcript.copies.times


def _stat(file: TranscriptFile) -> tuple[int, int] | None:
    if file.found is not None:
        return file.found  # discovery's, a moment ago
    try:
        stat = file.path.stat()
    except OSError:
        return None
    return stat.st_size, stat.st_mtime_ns


def measure_claude(
    files: list[TranscriptFile],
    counter: LazyCounter,
    since: datetime | None = None,
    use_cache: bool = True,
    workers: int | None = None,
) -> Measured:
    """Rows for these transcripts; files last written before `since` cannot hold a session in it. The
    rows are kept packed (xshare.agents.common.packed), the cache's as the bytes it holds, so no report over many
    sessions holds all their dicts. Counted with `counter` here, and in a pool's workers with their own."""
    choice = counter.choice
    result = Measured(tokenizer=choice)
    oldest_ns = int((since.timestamp() - 86400) * 1e9) if since else None
    wanted: list[tuple[TranscriptFile, tuple[int, int]]] = []
    for file in files:
        stat = _stat(file)
        if stat is None:
            result.problems["transcripts that vanished or could not be read"] += 1
        elif oldest_ns is None or stat[1] >= oldest_ns:
            wanted.append((file, stat))
    stamp = rows_cache.files_stamp((path_key(file.path), stat) for file, stat in wanted) if use_cache else None
    kept = outcome_cache.recall(choice.name, stamp) if stamp else None
    if kept is not None:  # the files of the last report, none changed: what it came to, whole
        _take(result, kept)
        return result
    progress.doing("reading the rows cache")
    cached = rows_cache.load(choice.name, {path_key(file.path) for file, _ in wanted}) if use_cache else {}
    fresh: dict[str, rows_cache.Entry] = {}
    todo: list[tuple[TranscriptFile, tuple[int, int]]] = []
    for file, stat in wanted:
        entry = cached.get(path_key(file.path))
        if entry and entry.size == stat[0] and entry.mtime_ns == stat[1]:
            fresh[path_key(file.path)] = entry
        else:
            todo.append((file, stat))
    del cached, wanted
    todo.sort(key=lambda item: -item[1][0])
    measured: dict[int, Packed] = {}  # by index in todo, as the workers finish
    try:
        _run(todo, counter, workers, measured.__setitem__)
        _into(fresh, todo, measured)
        outcome = _settle(result, fresh, files, counter, workers, measured=bool(todo), use_cache=use_cache)
        if stamp:
            outcome_cache.keep(result.tokenizer.name, stamp, outcome)
    except KeyboardInterrupt:
        _into(fresh, todo, measured)
        raise _interrupted(fresh, todo, counter, use_cache) from None
    return result


def _into(fresh: dict[str, rows_cache.Entry], todo: list, measured: dict[int, Packed]) -> None:
    """The rows measured, moved into `fresh` in the order of `todo` (whichever worker finished first), so the
    rows and the cache come out the same on every run."""
    for index in sorted(measured):
        (file, stat), (row, problems, times, copied) = todo[index], measured[index]
        fresh[path_key(file.path)] = rows_cache.Entry(stat[0], stat[1], problems, row, times, copied)
    measured.clear()


def _take(result: Measured, kept: outcome_cache.Outcome) -> None:
    result.rows = PackedRows(kept.rows, kept.places)
    result.copied, result.copy_files = kept.copied, kept.copy_files
    result.problems.update(kept.problems)


def _settle(result: Measured, fresh: dict[str, rows_cache.Entry], files: list[TranscriptFile], counter: LazyCounter,
            workers: int | None, measured: bool, use_cache: bool) -> outcome_cache.Outcome:
    """The rows measured or cached, each call billed once (their copies settled), into `result`; cached
    when any was `measured` or the copies were settled again. What it came to, for the outcome cache."""
    stamp = rows_cache.settled_stamp(fresh) if use_cache else None
    # the same files as at the last settling, none changed: their `copied` stand (a tenth of a warm report)
    unsettled = measured or stamp is None or stamp != rows_cache.settled(result.tokenizer.name)
    if unsettled:
        _settle_copies(fresh, files, counter, workers)
    result.copied = {key: frozenset(entry.copied) for key, entry in fresh.items() if entry.copied}
    result.copy_files = frozenset(key for key, entry in fresh.items()
                                  if entry.copied and claude_copies.copies_a_session(_times(entry), entry.copied))
    problems: Counter = Counter()
    if result.copy_files:  # a backup beside its session, or in a second root: the session is counted once
        problems[COPY_FILES] += len(result.copy_files)
    for entry in fresh.values():
        if entry.problems:
            problems.update(entry.problems)
    result.problems.update(problems)
    # in the files' order, whichever were read now and whichever came from the cache: a report says the same
    # (its rows file, the session list's ties) however much it found remembered
    keys = [key for key in (path_key(file.path) for file in files) if key in fresh and key not in result.copy_files]
    result.rows = PackedRows(complete_packed([fresh[key].row for key in keys]))
    if measured:
        result.tokenizer = counter.choice  # the vocabulary may have proved unusable on load
    if use_cache and unsettled:
        progress.doing("saving the rows cache")
        with counting.shielded():  # Ctrl-C now would lose every row just measured: it waits for the save
            rows_cache.save(result.tokenizer.name, fresh, stamp)
    return outcome_cache.Outcome(result.rows.items, result.copied, result.copy_files, problems)


def _interrupted(fresh: dict[str, rows_cache.Entry], todo: list, counter: LazyCounter,
                 use_cache: bool) -> KeyboardInterrupt:
    """Ctrl-C: the rows of the files measured so far cached (their copies are settled by the next report,
    with the rest) and this process's counts kept; what to say about it."""
    done = sum(1 for file, _ in todo if path_key(file.path) in fresh)
    with contextlib.suppress(KeyboardInterrupt), counting.shielded():  # a second Ctrl-C does not cut it short
        counter.flush()
        if use_cache and done:
            progress.doing("keeping what was measured")
            rows_cache.save(counter.choice.name, fresh)
    kept = "and kept; the next report carries on" if use_cache else "(--no-cache: none kept)"
    return KeyboardInterrupt(f"interrupted: {done:,} of {len(todo):,} Claude Code transcripts measured {kept}")


def _settle_copies(fresh: dict[str, rows_cache.Entry], files: list[TranscriptFile],
                   counter: LazyCounter, workers: int | None = None) -> None:
    """Each call billed once across every file read, whatever folder or root holds it: a file holding calls
    another file holds earlier is read again with them as copies (agents/claude_code/copies.py). The calls' times
    are decoded a file at a time, never all at once."""
    progress.doing("settling copies (calls more than one file holds)")
    by_key = {path_key(file.path): file for file in files}
    names = list(fresh)
    lost = claude_copies.settle([(name, by_key[name].source) for name in names],
                                lambda index: _times(fresh[names[index]]))
    again = [(name, lost.get(name, frozenset())) for name in names
             if tuple(sorted(lost.get(name, ()))) != tuple(fresh[name].copied)]
    # read again over every core, as the first reading was (one file is a tenth of a big history's bytes)
    todo = [(by_key[key], (fresh[key].size, fresh[key].mtime_ns)) for key, _ in again]

    def keep(index: int, measured: Packed) -> None:
        (key, lost_here), (row, problems, _, _) = again[index], measured
        fresh[key] = fresh[key]._replace(problems=problems, row=row, copied=tuple(sorted(lost_here)))

    _run(todo, counter, workers, keep, [one for _, one in again], "reading again the files holding copies:")


def _packed(transcript: ClaudeTranscript, copied: frozenset[int]) -> Packed:
    """A worker's result as it travels and is kept: the row's JSON, its problems if any, its own calls' start
    times as JSON, packed (agents/claude_code/copies.py: 16 bytes a call, in base64), and the calls it read
    as another file's (`copied`, and those the files read before it hold earlier)."""
    problems, times = dict(transcript.problems), transcript.copies.times
    return (dumps(transcript.row()), problems or None, dumps(times.to_json()),
            tuple(sorted(copied.union(transcript.copies.settled))))


def _times(entry: rows_cache.Entry) -> CallTimes:
    return CallTimes.from_json(loads(entry.times))


def measure_group(files: list[TranscriptFile], copied: list[frozenset[int]]) -> list[Packed]:
    """A pool worker's batch, counted with the worker's own counter (made by the pool's initializer)."""
    current = counting.made()
    with counting.interruptible(current):  # what this worker counted is flushed, for the others and later runs
        return list(_in_order(files, copied, current))


def _in_order(files: list[TranscriptFile], copied: list[frozenset[int]], current: TokenCounter) -> Iterator[Packed]:
    """Each file read after the ones before it: the calls one of those holds earlier are read as its copies
    (agents/claude_code/resumes.py: a resume comes after the file it copies), not found by reading it again."""
    earlier = claude_copies.EarlierCalls()
    for file, lost in zip(files, copied, strict=True):
        transcript = read_file(file, current, lost, earlier=earlier)
        earlier.add(path_key(file.path), file.source, transcript.copies.times)
        yield _packed(transcript, lost)


Kept = Callable[[int, Packed], None]


def _run(todo: list, counter: LazyCounter, workers: int | None, keep: Kept,
         copied: list[frozenset[int]] | None = None, words: str = "measuring") -> None:
    """Each file's row given to `keep` with its index in `todo` as it is measured, its `copied` calls (if
    given) read as another file's. A session's subagent and compaction files replay its texts, and a resume
    copies the file it resumes, so a family goes to the same worker (whose count cache then tokenizes each
    shared text once), in the order agents/claude_code/resumes.py gives. Ctrl-C: the rows measured before it
    are kept, the workers stopped, then KeyboardInterrupt."""
    if not todo:
        return
    copied = copied or [frozenset()] * len(todo)
    current = counter.made()
    total = sum(stat[0] for _, stat in todo)
    counting.load_if_counting(current, total, workers or counting.cores())
    progress.measuring(len(todo), total, words)
    workers = counting.workers(workers)
    ordered = resumes.families([file for file, _ in todo], [stat[0] for _, stat in todo])
    if workers < 2 or len(todo) < 2 or total < counting.PARALLEL_MIN_BYTES:
        for indexes in ordered:
            family = _in_order([todo[i][0] for i in indexes], [copied[i] for i in indexes], current)
            for index, one in zip(indexes, family, strict=True):
                keep(index, one)
                progress.advance(1, todo[index][1][0])
        current.flush()
        return
    _run_pool(todo, ordered, copied, current, workers, keep)


def _run_pool(todo: list, ordered: list[list[int]], copied: list[frozenset[int]], current: tokenizers.Counter,
              workers: int, keep: Kept) -> None:
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait  # only for a pool (see counting.py)

    most_bytes = min(_BATCH_BYTES, sum(stat[0] for _, stat in todo) // (workers * _BATCHES_PER_WORKER))
    pending: dict = {}

    def collect(done: set, stopping: bool = False) -> None:
        for batch in done:
            indexes = pending.pop(batch)  # a done batch's future (and its rows) is not kept past here
            if batch.cancelled() or (stopping and batch.exception() is not None):
                continue  # stopped by Ctrl-C: its counts are in the store, its rows measured by the next report
            for index, one in zip(indexes, batch.result(), strict=True):
                keep(index, one)
            progress.advance(len(indexes), sum(todo[i][1][0] for i in indexes))

    counting.share_with_workers(current)
    with ProcessPoolExecutor(workers, mp_context=counting.pool_context(), initializer=counting.start_worker,
                             initargs=(current.choice, current.fast)) as pool:
        try:
            for indexes in _batches(ordered, todo, most_bytes):
                batch = pool.submit(measure_group, [todo[i][0] for i in indexes], [copied[i] for i in indexes])
                pending[batch] = indexes
                if len(pending) >= workers * _IN_FLIGHT:  # a few batches ahead, not one future per session at once
                    collect(wait(pending, return_when=FIRST_COMPLETED).done)
            while pending:
                collect(wait(pending, return_when=FIRST_COMPLETED).done)
        except KeyboardInterrupt:
            with counting.shielded():
                for batch in pending:
                    batch.cancel()  # those not started
                counting.stop_workers()
                collect(wait(pending, timeout=_STOPPING).done, stopping=True)  # batches that ended first: kept
            raise


def _batches(ordered: list[list[int]], todo: list, most_bytes: int) -> Iterator[list[int]]:
    """Sessions (a family never split) in batches of up to _BATCH_FILES files or `most_bytes`, largest first: a
    large session alone, small ones together, so a hundred thousand small sessions are not as many futures and
    messages."""
    batch: list[int] = []
    size = 0
    for indexes in ordered:
        batch += indexes
        size += sum(todo[i][1][0] for i in indexes)
        if len(batch) >= _BATCH_FILES or size >= most_bytes:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def find_sessions(wanted: str, claude_roots: list[str] | None = None) -> list[TranscriptFile]:
    """A transcript by path, or the transcripts of a session id (file stem, or <session>/<agent file stem>):
    a backup of one may lie beside it or in another root."""
    path = Path(wanted).expanduser()
    if path.suffix == ".jsonl" and path.is_file():
        return [claude.describe(path.resolve())]
    roots = [claude.resolve_root(root) for root in claude_roots] if claude_roots else claude.default_roots()
    wanted = normal_id(wanted)  # as rows print it, or as the shell passed a file name's bytes
    return [file for file in claude.discover(roots) if file.session_id == wanted]


def measure_one(file: TranscriptFile, counter: LazyCounter,
                roots: list[Path] | None = None) -> tuple[SessionRow, dict]:
    """One session's row, with the calls Claude Code billed but wrote into none of its family's files (the
    calls a file under `roots` holds earlier left out, as a report over them does)."""
    _, row, problems = measure_session(file, counter, roots=roots)
    return row, problems


def measure_session(file: TranscriptFile, counter: LazyCounter, detail: bool = False,
                    copied: frozenset[int] | None = None,
                    roots: list[Path] | None = None) -> tuple[ClaudeTranscript, SessionRow, dict]:
    """One session as `xshare session` and its page show it: the reader (with its per-call log when
    `detail`), its row as the report has it, and its problems. The row leaves out calls an earlier file
    holds (`copied`, else worked out from the files beside it and under `roots`) and adds the calls Claude
    Code billed but wrote into none of its family's files."""
    current = counter.made()
    transcript = read_file(file, current, detail=detail)
    lost = copied if copied is not None else copied_here(file, transcript.copies.times, current, roots)
    if lost:
        transcript = read_file(file, current, lost, detail)
    row = transcript.row()
    if row.get("cost_state"):
        family = [measure_file(member, current)[0] for member in claude.family_files(file)]
        row = complete_with_unrecorded(row, family)
    current.flush()
    return transcript, row, dict(transcript.problems)


def copied_here(file: TranscriptFile, times: CallTimes, current: tokenizers.Counter,
                roots: list[Path] | None = None) -> frozenset[int]:
    """The calls of this file that an earlier transcript holds too, of its project folder or under `roots`,
    as the report decides it (agents/claude_code/copies.py)."""
    return frozenset(billed_elsewhere(file, times, current, roots))


def billed_elsewhere(file: TranscriptFile, times: CallTimes, current: tokenizers.Counter,
                     roots: list[Path] | None = None) -> dict[int, str]:
    """The calls (their keys' digests) of this file that another transcript of its project folder or under
    `roots` bills, and which (its path key), as the report decides it: from the report's cache where it is
    current, else from the files whose ids meet this file's (a scan, not a read, of the others). Only the
    calls another file holds too are kept, of this file's and of the others', so a view of one session holds
    neither every session's calls nor a dict of its own (a million calls, alone in their folder: none)."""
    project = claude_copies.project_folder(file.path)
    if not len(times) or project is None:
        return {}
    mine = path_key(file.path)
    paths = {path_key(path): path for path in claude_copies.transcripts_in(project)}
    paths.update((path_key(other.path), other.path) for other in claude.discover(roots or []))
    paths.pop(mine, None)
    cached = rows_cache.load(current.choice.name, set(paths))
    held: dict[str, tuple[str, dict[int, str | None]]] = {}
    ids = None
    for key, path in paths.items():
        other, entry = claude.describe(path), cached.get(key)
        stat = _stat(other)
        if entry and stat and (entry.size, entry.mtime_ns) == stat:
            theirs = _times(entry)
        else:
            ids = ids or claude_copies.scan_ids(file.path)
            if not claude_copies.may_share(ids, claude_copies.scan_ids(path)):
                continue
            theirs = measure_file(other, current)[2]
        shared = {call: time for call, time in theirs.items() if times.has(call)}
        if shared:
            held[key] = (other.source, shared)
    if not held:
        return {}
    wanted = {call for _, shared in held.values() for call in shared}
    held[mine] = (file.source, {call: time for call, time in times.items() if call in wanted})
    return {call: biller for call, biller in claude_copies.billing_files(held).items() if biller != mine}


def copy_source(file: TranscriptFile, counter: LazyCounter,
                roots: list[Path] | None = None) -> TranscriptFile | None:
    """The transcript whose session this file only copies (a backup beside it or in another root: every call
    of this file billed there, none of its own), the one billing most of its calls; None for a session."""
    choice, current = counter.choice, counter.made()  # its cache entry under the choice asked for
    entry = rows_cache.load(choice.name, {path_key(file.path)}).get(path_key(file.path))
    stat = _stat(file)
    times = _times(entry) if entry and stat and (entry.size, entry.mtime_ns) == stat else measure_file(file, current)[2]
    elsewhere = billed_elsewhere(file, times, current, roots)
    if not claude_copies.copies_a_session(times, elsewhere.keys()):
        return None
    source = Counter(elsewhere.values()).most_common(1)[0][0]
    return claude.describe(key_path(source))
