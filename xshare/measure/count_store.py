"""Token counts remembered across processes and runs, by a digest of the text: a count depends only on
the text, the tokenizer and the counting rule, so once any xshare process has counted a text (a report
worker, the hook's worker, `xshare session`), every later one reads the count instead of tokenizing again.

The store holds digests and counts only, never text: per text the first 8 bytes of the sha256 of its UTF-8
bytes (lone surrogates kept, "surrogatepass") and one 8-byte value, the text's length in bytes (checked
on lookup, so a digest collision also needs an equal length) and its count. One file per tokenizer and
counting-rule version (the caller names it), under xshare's state folder.

The file is a sequence of blocks, each written by one os.write on an O_APPEND descriptor, so processes
appending at once never interleave: magic, entry count, CRC-32 of the rest, the sorted digests, then the
values. A reader keeps the blocks before the first damaged one (a torn or garbage block: every entry is
checked by its block's CRC, so a wrong count is never read) and rewrites the file compactly (temporary
file + rename) when it found damage, when it has grown to twice its distinct entries, or when too much of
it lies outside its largest, sorted block. Losing entries is harmless: they are counted again.

Lookups bisect the largest block's sorted arrays (loading them is a memory copy, cheap for the hook's few
lookups) and switch to a dict once a process looks up many texts (a report). The file is capped at
MAX_BYTES (2M texts, several times what a year of heavy use holds): an append that would pass it starts
the file over with that append only, and the texts it forgot are counted again and remembered anew.
"""

from __future__ import annotations

import bisect
import contextlib
import errno
import functools
import hashlib
import os
import stat as stat_module
import struct
import sys
import threading
import zlib
from array import array
from collections.abc import Callable, Iterable
from pathlib import Path

from xshare.state.private import open_private
from xshare.state.store import atomic_write, locked, open_regular

MAGIC = b"xsc1"  # bump with any change to the layout or the digest
_HEADER = struct.Struct("<4sII")  # magic, entries, crc32 of the entry count and the payload
MAX_BYTES = 32 << 20
_LENGTH_LIMIT = 1 << 32  # byte length and count share one 64-bit value
_COMPACT_MIN_ENTRIES = 4096  # below this a scattered file costs nothing worth a rewrite


def digest(data: bytes) -> int:
    return int.from_bytes(hashlib.sha256(data).digest()[:8], "little")


def encode_block(entries: Iterable[tuple[int, int]]) -> bytes:
    """One block of (digest, value) entries, sorted by digest."""
    ordered = sorted(entries)
    keys = array("Q", [key for key, _ in ordered])
    values = array("Q", [value for _, value in ordered])
    if sys.byteorder != "little":
        keys.byteswap()
        values.byteswap()
    count = struct.pack("<I", len(ordered))
    payload = keys.tobytes() + values.tobytes()
    return _HEADER.pack(MAGIC, len(ordered), zlib.crc32(payload, zlib.crc32(count))) + payload


def decode_blocks(data: bytes) -> tuple[list[tuple[array, array]], int, bool]:
    """The intact blocks from the start, the bytes they span, and whether what follows them is
    garbage (True) rather than nothing or one torn block at the end (an append in progress, a full disk)."""
    blocks: list[tuple[array, array]] = []
    at = 0
    while at < len(data):
        if len(data) - at < _HEADER.size:
            return blocks, at, False
        magic, entries, crc = _HEADER.unpack_from(data, at)
        end = at + _HEADER.size + 16 * entries
        if magic != MAGIC:
            return blocks, at, True
        if end > len(data):
            return blocks, at, False
        payload = data[at + _HEADER.size:end]
        if zlib.crc32(payload, zlib.crc32(struct.pack("<I", entries))) != crc:
            return blocks, at, True
        keys, values = array("Q"), array("Q")
        keys.frombytes(payload[:8 * entries])
        values.frombytes(payload[8 * entries:])
        if sys.byteorder != "little":
            keys.byteswap()
            values.byteswap()
        blocks.append((keys, values))
        at = end
    return blocks, at, False


def _one_thread_at_a_time(method):
    """The hook's worker serves sessions on threads that share one store (loaded once): its arrays
    and pending counts change under a lookup, so a store's methods never overlap (~0.1 us a call)."""

    @functools.wraps(method)
    def guarded(self, *args):
        with self._guard:
            return method(self, *args)

    return guarded


def _stderr(message: str) -> None:
    print(f"xshare: {message}", file=sys.stderr)


class CountStore:
    """One store file, loaded on first use; `get` and `put` by the text's UTF-8 bytes."""

    def __init__(self, path: Path, warn: Callable[[str], None] = _stderr) -> None:
        self.path = path
        self.warn = warn  # said once per process at most, and only when counts were lost or not kept
        self._loaded = False
        self._keys, self._values = array("Q"), array("Q")  # the largest block: sorted
        self._more: dict[int, int] = {}  # every other block, and what this process counted
        self._pending: dict[int, int] = {}
        self._lookups = 0
        self._read_at: tuple[int, int] | None = None  # (inode, bytes read)
        self._writable = True
        self.hits = 0
        self._guard = threading.RLock()

    @_one_thread_at_a_time
    def __len__(self) -> int:
        self._load()
        return len(self._keys) + len(self._more)

    @_one_thread_at_a_time
    def get(self, data: bytes) -> int | None:
        self._load()
        key = digest(data)
        value = self._more.get(key)
        if value is None and self._keys:
            self._lookups += 1
            if self._lookups > len(self._keys) // 8:  # a report: a dict pays for itself
                self._more = dict(zip(self._keys, self._values, strict=True)) | self._more
                self._keys, self._values = array("Q"), array("Q")
                value = self._more.get(key)
            else:
                at = bisect.bisect_left(self._keys, key)
                if at < len(self._keys) and self._keys[at] == key:
                    value = self._values[at]
        if value is None or value >> 32 != len(data) or value & 0xFFFFFFFF > len(data):
            return None  # unknown, a digest collision, or a count no text of that length can have
        self.hits += 1
        return value & 0xFFFFFFFF

    @_one_thread_at_a_time
    def put(self, data: bytes, count: int) -> None:
        """Remember a count (kept in memory until `flush`)."""
        if len(data) < _LENGTH_LIMIT and count <= len(data):
            key, value = digest(data), len(data) << 32 | count
            self._more[key] = value
            if self._writable:
                self._pending[key] = value

    @_one_thread_at_a_time
    def flush(self) -> None:
        """Append what this process counted since the last flush, as one block; never raises."""
        self._load()  # what is at the path decides whether it may be written
        if not self._pending or not self._writable:
            self._pending = {}
            return
        block, self._pending = encode_block(self._pending.items()), {}
        try:
            # private (0600, in 0700 folders); O_BINARY: Windows would otherwise translate newline bytes;
            # O_NONBLOCK: a FIFO in the store's place must not hang the open (it is then refused below)
            fd = open_private(self.path, os.O_WRONLY | os.O_APPEND | getattr(os, "O_NONBLOCK", 0))
            try:
                found = os.fstat(fd)
                if not stat_module.S_ISREG(found.st_mode):
                    raise OSError(errno.EINVAL, "not a regular file")
                if found.st_size + len(block) > MAX_BYTES:
                    self._replace(block)  # the cap: start over with this block
                elif os.write(fd, block) != len(block):
                    raise OSError(28, "short write (disk full?)")
            finally:
                os.close(fd)
        except OSError as error:
            self._writable = False
            self.warn(f"could not keep token counts in {self.path.name} ({error.strerror or error}); "
                      "they are counted again next time")

    @_one_thread_at_a_time
    def refresh(self) -> None:
        """Take in what other processes appended since this one loaded (a long-lived worker)."""
        if not self._loaded or self._read_at is None:
            return
        try:
            stat = os.stat(self.path)
        except OSError:
            return
        inode, read = self._read_at
        if stat.st_ino != inode or stat.st_size < read:
            self._loaded = False  # replaced (compacted, started over): load it again
            self._keys, self._values, self._more = array("Q"), array("Q"), dict(self._pending)
            self._load()
        elif stat.st_size > read:
            with contextlib.suppress(OSError):
                with open_regular(self.path) as handle:
                    handle.seek(read)
                    blocks, used, _ = decode_blocks(handle.read())
                for keys, values in blocks:
                    self._more.update(zip(keys, values, strict=True))
                self._read_at = (inode, read + used)

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        if os.path.islink(self.path):  # the store is xshare's file: a link in its place may aim at the user's
            self._writable = False
            self.warn(f"the token count store {self.path.name} is a link; left alone, counts are not kept")
            return
        try:
            with open_regular(self.path) as handle:
                inode, data = os.fstat(handle.fileno()).st_ino, handle.read()
        except OSError as error:  # none yet, or unreadable: count everything
            if os.path.exists(self.path) and not os.path.isfile(self.path):
                self._writable = False  # a FIFO, device or folder: never read, never written
                self.warn(f"the token count store {self.path.name} is not a regular file; counts are not kept "
                          f"({error.strerror or error})")
            return
        blocks, used, garbage = decode_blocks(data)
        self._read_at = (inode, used)
        if blocks:
            largest = max(range(len(blocks)), key=lambda index: len(blocks[index][0]))
            self._keys, self._values = blocks[largest]
            for index, (keys, values) in enumerate(blocks):
                if index != largest:
                    self._more.update(zip(keys, values, strict=True))
        if garbage:
            self.warn(f"the token count store {self.path.name} was damaged after byte {used:,}; "
                      "the counts before it are kept, the rest are counted again")
        if used < len(data) or self._scattered(used):
            self._compact()

    def _scattered(self, used: int) -> bool:
        distinct = len(self._keys) + len(self._more)
        if distinct < _COMPACT_MIN_ENTRIES:
            return False
        return used > 2 * 16 * distinct or len(self._more) > distinct // 4

    def _compact(self) -> None:
        """Rewrite the file as one sorted block of what it holds (one process at a time; a busy lock
        means another is doing it). Appends racing with the rename are lost, which only costs a recount."""
        try:
            with locked(self.path.with_name(self.path.name + ".lock"), blocking=False) as mine:
                if not mine:
                    return
                entries = dict(zip(self._keys, self._values, strict=True)) | self._more
                self._replace(encode_block(entries.items()))
                self._keys, self._values = array("Q"), array("Q")
                self._more = entries
        except OSError as error:
            self._writable = False
            self.warn(f"could not rewrite the token count store ({error.strerror or error})")

    def _replace(self, block: bytes) -> None:
        atomic_write(self.path, block)
        with contextlib.suppress(OSError):
            self._read_at = (os.stat(self.path).st_ino, len(block))


_opened: dict[Path, CountStore] = {}


def shared(path: Path, warn: Callable[[str], None] = _stderr) -> CountStore:
    """This process's store for `path` (one per process, so a warm worker keeps it loaded), brought up
    to date with what others appended since."""
    store = _opened.get(path)
    if store is None:
        store = _opened.setdefault(path, CountStore(path, warn))  # two threads at once: one store wins
    else:
        store.warn = warn
        store.refresh()
    return store
