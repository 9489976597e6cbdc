"""A session's ids (row uuids, call keys, tool ids) held as 64-bit digests in sorted arrays: about 8 bytes a
key plus its values packed, however long the session (issue 29: a transcript of 10M rows held each row's
uuid as a string in a set, about 100 bytes a row, and each call's key, usage and time in dicts).

A key is named by the first 8 bytes of the blake2b digest of its UTF-8 bytes (`digest`), the same in every
process, so a saved state resumes in another. Two keys share a digest with probability 2**-64; among n keys
some pair does with probability under n*n / 2**65 (3e-6 for the 10M rows of a 2 GB transcript). A collision
makes one row read as a repeat of another, or one call as a later row of another: that row's figures,
never a crash.

The digests are sorted into 2**bits buckets by their top bits, each an array("Q") with its values beside it
in one array of `width` numbers a key; when the buckets hold _PER_BUCKET keys on average, their number
doubles (each bucket cut at its middle value: two slices, in C). An insert moves a bucket's few kilobytes and
a lookup bisects a few hundred digests, about a microsecond either way, most of it the digest.

That microsecond, three times a row, made reading ordinary sessions 7-17% slower in CPU, so a `KeyMap`
holds its keys as text in a plain dict up to PLAIN_KEYS (about 3 MB), and as digests only past it: only a
session longer than any ordinary one pays for them, once.
"""

from __future__ import annotations

import base64
import sys
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Sequence
from hashlib import blake2b

_PER_BUCKET = 512  # keys a bucket holds on average before the buckets double
# keys a KeyMap holds as text (about 100 bytes each, 3.5 MB a map at most) before it holds digests (8 bytes a
# key): an ordinary session never has as many rows, so it computes no digest
PLAIN_KEYS = 1 << 15


def digest(key: str) -> int:
    """The 64-bit digest a key is held by (see the collision bound above)."""
    return int.from_bytes(blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")


class DigestMap:
    """Digests, each with `width` numbers of array type `typecode` (width 0: a set). `put` holds a key once
    (its values replaced); `add` holds one more value for a key (a multimap, read with `values_of`)."""

    def __init__(self, width: int = 0, typecode: str = "q") -> None:
        self.width = width
        self.typecode = typecode
        self._bits = 0
        self._keys = [array("Q")]
        self._values = [array(typecode)]
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def __contains__(self, key: int) -> bool:
        keys = self._keys[key >> (64 - self._bits) if self._bits else 0]
        at = bisect_left(keys, key)
        return at < len(keys) and keys[at] == key

    def get(self, key: int) -> list[int] | None:
        """The key's values (the first held, in a multimap), or None when it is not held."""
        bucket = key >> (64 - self._bits) if self._bits else 0
        keys = self._keys[bucket]
        at = bisect_left(keys, key)
        if at < len(keys) and keys[at] == key:
            return self._values[bucket][at * self.width:(at + 1) * self.width].tolist()
        return None

    def values_of(self, key: int) -> list[list[int]]:
        """Every value held for the key, in the order they were added."""
        bucket = key >> (64 - self._bits) if self._bits else 0
        keys, values, width = self._keys[bucket], self._values[bucket], self.width
        return [values[at * width:(at + 1) * width].tolist()
                for at in range(bisect_left(keys, key), bisect_right(keys, key))]

    def put(self, key: int, values: Iterable[int] = ()) -> bool:
        """Hold the key with these values, replacing those it held; whether it was new."""
        bucket = key >> (64 - self._bits) if self._bits else 0
        keys = self._keys[bucket]
        at = bisect_left(keys, key)
        if at < len(keys) and keys[at] == key:
            if self.width:
                self._values[bucket][at * self.width:(at + 1) * self.width] = array(self.typecode, values)
            return False
        self._insert(bucket, at, key, values)
        return True

    def add(self, key: int, values: Iterable[int] = ()) -> None:
        """Hold one more value for the key, after those it holds."""
        bucket = key >> (64 - self._bits) if self._bits else 0
        self._insert(bucket, bisect_right(self._keys[bucket], key), key, values)

    def _insert(self, bucket: int, at: int, key: int, values: Iterable[int]) -> None:
        self._keys[bucket].insert(at, key)
        if self.width:
            where = at * self.width
            self._values[bucket][where:where] = array(self.typecode, values)
        self._size += 1
        if self._size > _PER_BUCKET << self._bits:
            self._double()

    def _double(self) -> None:
        """Twice the buckets, each old one cut at its middle value; an old bucket is let go once cut, so the
        copy made meanwhile is one bucket's."""
        old_keys, old_values = self._keys, self._values
        self._bits += 1
        shift, width = 64 - self._bits, self.width
        self._keys, self._values = [], []
        for index in range(len(old_keys)):
            keys, values = old_keys[index], old_values[index]
            old_keys[index] = old_values[index] = array("Q")  # let go of the old bucket now
            middle = bisect_left(keys, (2 * index + 1) << shift)
            self._keys += [keys[:middle], keys[middle:]]
            self._values += [values[:middle * width], values[middle * width:]]

    def items(self) -> Iterator[tuple[int, list[int]]]:
        """(digest, values) in the digests' order."""
        width = self.width
        for keys, values in zip(self._keys, self._values, strict=True):
            for at, key in enumerate(keys):
                yield key, values[at * width:(at + 1) * width].tolist()

    def keys(self) -> Iterator[int]:
        for keys in self._keys:
            yield from keys

    __iter__ = keys

    # --- saved as text: the digests, then the values, little-endian, in base64 ---------------------------

    def text(self) -> str:
        keys, values = array("Q"), array(self.typecode)
        for bucket_keys, bucket_values in zip(self._keys, self._values, strict=True):
            keys += bucket_keys
            values += bucket_values
        if sys.byteorder != "little":
            keys.byteswap()
            values.byteswap()
        return base64.b64encode(keys.tobytes() + values.tobytes()).decode("ascii")

    @classmethod
    def from_text(cls, text: str, width: int = 0, typecode: str = "q") -> DigestMap:
        """A map saved by `text()` (raises ValueError for text of another shape)."""
        if not isinstance(text, str):
            raise ValueError("not a saved digest map")
        data = base64.b64decode(text, validate=True)
        keys, values = array("Q"), array(typecode)
        entry = keys.itemsize + width * values.itemsize
        if len(data) % entry:
            raise ValueError("a saved digest map of another shape")
        count = len(data) // entry
        keys.frombytes(data[:count * keys.itemsize])
        values.frombytes(data[count * keys.itemsize:])
        if sys.byteorder != "little":
            keys.byteswap()
            values.byteswap()
        return cls._of_sorted(keys, values, width, typecode)

    @classmethod
    def of(cls, digests: Iterable[int]) -> DigestMap:
        """A set of these digests."""
        return cls._of_sorted(array("Q", sorted(set(digests))), array("q"), 0, "q")

    @classmethod
    def of_items(cls, items: Iterable[tuple[int, Iterable[int]]], width: int, typecode: str) -> DigestMap:
        """A map of these (digest, values); a digest given twice is held twice, in the order given."""
        ordered = sorted(items, key=lambda item: item[0])  # stable: a multimap's values keep their order
        values = array(typecode)
        for _, numbers in ordered:
            values.extend(numbers)
        return cls._of_sorted(array("Q", [key for key, _ in ordered]), values, width, typecode)

    @classmethod
    def _of_sorted(cls, keys: array, values: array, width: int, typecode: str) -> DigestMap:
        held = cls(width, typecode)
        while len(keys) > _PER_BUCKET << held._bits:
            held._bits += 1
        shift = 64 - held._bits
        cuts = [bisect_left(keys, bucket << shift) if held._bits else 0 for bucket in range(1 << held._bits)]
        cuts.append(len(keys))
        held._keys = [keys[start:end] for start, end in zip(cuts, cuts[1:], strict=False)]
        held._values = [values[start * width:end * width] for start, end in zip(cuts, cuts[1:], strict=False)]
        held._size = len(keys)
        return held


class KeyMap:
    """Keys (strings), each with `width` numbers (width 0: a set), or with other keys (`multi`: a row's tool
    ids). Held as a plain dict of the keys as text while it holds up to PLAIN_KEYS (an ordinary session: no
    digest computed, as fast as a dict), then as a DigestMap (a multimap's values digested too). Saved as
    the dict while plain (the shape xshare saved before digests), else as `DigestMap.text()`."""

    def __init__(self, width: int = 0, typecode: str = "q", multi: bool = False) -> None:
        self.width, self.typecode, self.multi = width, typecode, multi
        self.plain: dict[str, list | tuple] | None = {}
        self.digests: DigestMap | None = None

    def __len__(self) -> int:
        return len(self.plain) if self.plain is not None else len(self._held())

    def _held(self) -> DigestMap:
        """The digests, once the keys outgrew the plain dict (which is then None)."""
        assert self.digests is not None
        return self.digests

    def put(self, key: str, values: Iterable[int] = ()) -> bool:
        """Hold the key with these values, replacing those it held; whether it was new."""
        plain = self.plain
        if plain is None:
            return self._held().put(digest(key), values)
        new = key not in plain
        plain[key] = list(values) if self.width else ()
        if new and len(plain) > PLAIN_KEYS:
            self._to_digests()
        return new

    def get(self, key: str) -> Sequence[int] | None:
        return self.plain.get(key) if self.plain is not None else self._held().get(digest(key))

    def add(self, key: str, value: str) -> None:
        """A multimap's key holds one more key (value), after those it holds."""
        plain = self.plain
        if plain is None:
            self._held().add(digest(key), (digest(value),))
            return
        held = plain.setdefault(key, [])
        assert isinstance(held, list)  # a multimap's plain values are lists
        held.append(value)
        if len(plain) > PLAIN_KEYS:
            self._to_digests()

    def only(self, keys: Iterable[str]) -> KeyMap:
        """A multimap of these keys' values alone, held as this one's are."""
        kept, wanted = KeyMap(self.width, self.typecode, self.multi), dict.fromkeys(keys)
        if self.plain is not None:
            kept.plain = {key: self.plain[key] for key in wanted if key in self.plain}
        else:
            items = ((named, value) for named in map(digest, wanted) for value in self._held().values_of(named))
            kept.plain, kept.digests = None, DigestMap.of_items(items, 1, "Q")
        return kept

    def values(self) -> list:
        """A multimap's every value: keys as text while plain, else their digests."""
        if self.plain is not None:
            return [value for values in self.plain.values() for value in values]
        return [value for _, (value,) in self._held().items()]

    def _to_digests(self) -> None:
        assert self.plain is not None
        if self.multi:
            items = ((digest(key), (digest(value),)) for key, values in self.plain.items() for value in values)
            self.digests = DigestMap.of_items(items, 1, "Q")
        else:
            self.digests = DigestMap.of_items(((digest(key), values) for key, values in self.plain.items()),
                                              self.width, self.typecode)
        self.plain = None

    def saved(self) -> list | dict | str:
        if self.plain is None:
            return self._held().text()
        if self.width or self.multi:
            return self.plain
        return sorted(self.plain)

    def restore(self, saved: list | dict | str) -> None:
        """Brought to what `saved()` gave (raises ValueError or TypeError for another shape)."""
        if isinstance(saved, str):
            width, typecode = (1, "Q") if self.multi else (self.width, self.typecode)
            self.plain, self.digests = None, DigestMap.from_text(saved, width, typecode)
        elif isinstance(saved, list) and not (self.width or self.multi):
            self.plain, self.digests = dict.fromkeys(saved, ()), None
        elif isinstance(saved, dict) and (self.width or self.multi):
            self.plain, self.digests = {key: list(values) for key, values in saved.items()}, None
        else:
            raise ValueError("a saved key map of another shape")


class KeptKeys:
    """Keys known as text or by their digests: `key in kept` answers as a frozenset of the keys would."""

    def __init__(self, texts: Iterable[str], digests: Iterable[int] = ()) -> None:
        self.texts = frozenset(texts)
        self.digests = frozenset(digests)

    def __contains__(self, key: object) -> bool:
        return key in self.texts or (bool(self.digests) and isinstance(key, str) and digest(key) in self.digests)

    def as_digests(self) -> frozenset[int]:
        """Every key by its digest: how the ledger holds its messages' keys (measure/present.py)."""
        return self.digests | {digest(text) for text in self.texts}
