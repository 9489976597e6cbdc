"""Token counts: o200k_base through tiktoken, from the vocabulary that ships inside xshare, else characters / 4.

xshare never touches the network. tiktoken's own loader would download the vocabulary (with no timeout,
so it can hang), so xshare builds the encoding itself from a local file: `--vocab FILE` or
`$XSHARE_VOCAB` when named, else the gzipped copy in xshare/data. The file's hash is checked before use.

Counts are remembered across runs by a digest of the text (xshare/measure/count_store.py), and tiktoken (about
0.4 s to load) is loaded only when a text is not there: the vocabulary's hash is checked when a Counter
is made, so an unusable file still makes the whole run an estimate, never a mix.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import sys
import zlib
from dataclasses import dataclass, replace
from pathlib import Path

from xshare.measure import long_text

TYPE_CHECKING = False  # typing.TYPE_CHECKING without loading typing (the live paths count); checkers see True
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from xshare.measure.count_store import CountStore

O200K = "o200k_base"
ESTIMATE = "chars/4"
# sha256 of the uncompressed file, the hash tiktoken itself expects for o200k_base
VOCAB_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
PACKAGED_VOCAB = Path(__file__).resolve().parents[1] / "data" / "o200k_base.tiktoken.gz"
_GZIP_MAGIC = b"\x1f\x8b"
LARGEST_VOCAB = 16 << 20  # o200k_base is 3.6 MB as text
# tiktoken's pre-tokenizer overflows its stack on a run of about 1M blanks (spaces, tabs, ... but not
# newlines, which end its backtracking); texts holding a longer run than this are counted in parts
LONG_RUN = 1 << 16
_MAX_PERIOD = 256  # o200k's longest blank token is 128 spaces
_BLANK_RUN = re.compile(rf"[^\S\r\n]{{{LONG_RUN},}}")
_UNIFORM_RUN = re.compile(rf"([^\S\r\n])\1{{{LONG_RUN - 1},}}")
# the counting rule beyond tiktoken itself (the long-run handling below): bump it when a change could
# alter any count, so counts remembered by an older rule (xshare/measure/count_store.py) are never read
COUNT_VERSION = 2  # 2: long texts in parts, a long piece that repeats nothing in windows
# fastokens (a dependency wherever it has a wheel: pyproject.toml) counts exactly as tiktoken does, 3-7x faster on
# real text, but takes 1-2 s more to load: it pays from 22-30 MB of text to count, measured on the bench's 1.22 GB
# yardstick's texts (bench/report_speed.py; 40 MB was measured on the corpus's, which tiktoken counts faster)
FAST_MIN_TEXT_BYTES = 25_000_000
FASTOKENS, TIKTOKEN = "fastokens", "tiktoken"  # the two exact o200k counters: which one loaded (Counter.loaded)
_UNSAFE_RUN = re.compile(rf"[^\S\r\n]{{{8 * LONG_RUN},}}")  # tiktoken takes 900k; half a million is safe
# distinct texts a Counter remembers the counts of (about 150 bytes each): past it the memo is dropped whole
# and begins again, its counts read from the count store or counted anew (a session of 10M distinct prompts
# held them all); a year of heavy use has fewer distinct texts than this in its largest session
SEEN_CAP = 1 << 17
# why tiktoken counts where fastokens would have paid: it is not installed (no wheel for this platform, or left out)
FAST_MISSING = "fastokens is not installed here (no wheel for this platform, or left out)"


@dataclass(frozen=True)
class TokenizerChoice:
    """Which tokenizer a run uses and why; decided without loading anything."""

    name: str  # O200K or ESTIMATE
    vocab: Path | None
    note: str  # shown on the report's Tokenizer line when the count is an estimate
    remember: bool = True  # counts kept across runs (xshare/measure/count_store.py); --no-cache: False


def _tiktoken_installed() -> bool:
    import importlib.util  # only when choosing a tokenizer

    return importlib.util.find_spec("tiktoken") is not None


def fast_installed() -> bool:
    """Whether the exact counter fastokens is installed (where it has a wheel); nothing is imported."""
    import importlib.util  # only when deciding whether a cold report may load it

    return importlib.util.find_spec("fastokens") is not None


def choose(estimate: bool = False, vocab: str | None = None, remember: bool = True) -> TokenizerChoice:
    """Pick the tokenizer from what is on disk: cheap (no hashing, no tiktoken import). `remember=False`
    (--no-cache) neither reads nor writes the counts other runs kept."""
    return replace(_choose(estimate, vocab), remember=remember)


def _choose(estimate: bool, vocab: str | None) -> TokenizerChoice:
    if estimate:
        return TokenizerChoice(ESTIMATE, None, "--estimate")
    if not _tiktoken_installed():
        return TokenizerChoice(ESTIMATE, None, "tiktoken is not installed")
    named = vocab or os.environ.get("XSHARE_VOCAB")
    if named:  # an explicit choice is never silently replaced by the packaged copy
        path = Path(named).expanduser()
        if path.is_file():
            return TokenizerChoice(O200K, path, "")
        return TokenizerChoice(ESTIMATE, None, f"vocabulary file not found: {named}")
    if PACKAGED_VOCAB.is_file():
        return TokenizerChoice(O200K, PACKAGED_VOCAB, "")
    return TokenizerChoice(ESTIMATE, None, "xshare's packaged o200k_base vocabulary is missing")


class Counter:
    """Counts tokens of texts, each distinct text once per process; with `choice.remember`, also once across
    processes and runs (xshare/measure/count_store.py): the tokenizer is then loaded only for a text no xshare
    process has counted before."""

    def __init__(self, choice: TokenizerChoice, warn=None) -> None:
        self.choice = choice
        self.name = choice.name
        self._encode: Callable[[str], Sequence[int]] | None = None
        self._seen: dict[tuple[int, int], int] = {}
        self._periods: dict[str, tuple[int, int] | None] = {}
        self._blocks: dict[tuple[str, str], tuple[int, int] | None] = {}  # long pieces' (see long_text.py)
        self.fallbacks = 0  # texts tiktoken failed on, estimated as characters / 4
        self.fast = False  # counting with fastokens (load(fast=True)), equal to tiktoken's counts
        self.loaded: str | None = None  # FASTOKENS or TIKTOKEN once loaded in this process
        self.why = ""  # why that one, in plain words (the report's Tokenizer line); "" when loaded on a first text
        self.known_before: int | None = None  # counts remembered when a report began (agents/common/counting.py)
        self.store: CountStore | None = None
        if choice.name == O200K:
            try:  # checked now, loaded on the first text to count: one tokenizer for the whole run
                _checked_lines(choice.vocab)
                import tiktoken  # noqa: F401  (a broken install fails here, not after counts were read)
            except Exception as error:  # a corrupt or wrong file, a broken tiktoken: say so, keep measuring
                self.name = ESTIMATE
                self.choice = TokenizerChoice(ESTIMATE, None, f"vocabulary unusable: {error}", choice.remember)
        if choice.remember and self.name == O200K:
            from xshare.measure import count_store  # only when counts are remembered

            self.store = count_store.shared(store_path(), **({"warn": warn} if warn else {}))

    def load(self, fast: bool = False, why: str = "") -> None:
        """Load the tokenizer now (before forking workers that will need it); with `fast`, fastokens when
        it is installed and loads (its counts are tiktoken's: tests/measure/test_fast_counter.py), else tiktoken.
        `why` the choice was made is kept for the report, replaced by why fastokens could not count; a fastokens
        that fails to load is said once on stderr (not an error: tiktoken counts the same)."""
        if self.name == O200K and self._encode is None:
            self.why = why
            if fast and not fast_installed():
                self.why = FAST_MISSING
            elif fast:
                try:
                    self._encode = _load_fast(self.choice.vocab)
                    self.fast, self.loaded = True, FASTOKENS
                    return
                except Exception as error:  # a broken or incompatible fastokens: tiktoken, the reference, counts
                    self.why = f"fastokens could not be loaded ({type(error).__name__}): tiktoken counts the same"
                    print(f"xshare: {self.why}", file=sys.stderr)
            try:
                self._encode = _load_o200k(self.choice.vocab).encode_ordinary
                self.loaded = TIKTOKEN
            except Exception:  # the file passed its check, so tiktoken itself is broken: see _count
                self._encode = _unusable

    def flush(self) -> None:
        """Remember the counts made since the last flush for other processes (never raises)."""
        if self.store is not None:
            self.store.flush()

    def count(self, text: str) -> int:
        if not text:
            return 0
        if self.name != O200K:
            return (len(text) + 3) // 4
        key = (hash(text), len(text))
        found = self._seen.get(key)
        if found is None:
            if len(self._seen) >= SEEN_CAP:
                self._seen = {}
            store = self.store
            found = self._seen[key] = self._remembered(text, store) if store is not None else self._exact(text)
        return found

    def _remembered(self, text: str, store: CountStore) -> int:
        data = text.encode("utf-8", "surrogatepass")
        found = store.get(data)
        if found is None:
            fallbacks = self.fallbacks
            found = self._exact(text)
            if self.fallbacks == fallbacks:  # an estimate is never remembered as a count
                store.put(data, found)
        return found

    def _exact(self, text: str) -> int:
        if len(text) < LONG_RUN:
            return self._count(text)
        # in parts cut where the pre-tokenizer's pieces start: bounded memory, time linear (long_text.py)
        return sum(long_text.count_piece(part, self._count, self._blocks) if whole else self._count_long(part)
                   for part, whole in long_text.parts(text))

    def _count(self, text: str) -> int:
        """tiktoken's count; never lets its Rust panics (BaseException) out: chars/4 for such a text."""
        if self._encode is None:
            self.load()
        encode = self._encode
        assert encode is not None  # load() sets it for o200k, the one tokenizer that counts here
        try:
            try:
                return len(encode(text))
            except (UnicodeEncodeError, ValueError):
                # lone surrogates and other odd text: count what the model would have seen
                return len(encode(text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")))
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException:  # pyo3_runtime.PanicException derives from BaseException
            self.fallbacks += 1
            return (len(text) + 3) // 4

    def _count_long(self, text: str) -> int:
        """A text that may hold a run of blanks too long for tiktoken's pre-tokenizer (about 1M panics).
        A long run of one character is tokenized as blocks of one token each (o200k: 128 spaces, 16 tabs,
        ...) wherever it lies, so it is shortened by whole blocks, far from its ends, and the blocks
        removed are added back: exact. What is still too long after that (a long run alternating blank
        characters) is counted in pieces of LONG_RUN, off by at most a token or two at each cut."""
        if not _BLANK_RUN.search(text):
            return self._count(text)
        pieces: list[str] = []
        extra = start = 0
        for run in _UNIFORM_RUN.finditer(text):
            period = self._period(run.group(1))
            if period is None:
                continue
            chars, tokens = period
            blocks = (run.end() - run.start() - LONG_RUN // 2) // chars
            pieces.append(text[start:run.start() + LONG_RUN // 4])
            start = run.start() + LONG_RUN // 4 + blocks * chars
            extra += blocks * tokens
        pieces.append(text[start:])
        text = "".join(pieces)
        pieces, start = [], 0
        for run in _UNSAFE_RUN.finditer(text):
            cuts = range(run.start(), run.end(), LONG_RUN)
            extra += sum(self._count(text[cut:cut + LONG_RUN]) for cut in cuts[:-1])
            pieces.append(text[start:run.start()])
            start = cuts[-1]  # the run's last piece stays with what follows it
        pieces.append(text[start:])
        return self._count("".join(pieces)) + extra

    def _period(self, char: str) -> tuple[int, int] | None:
        """(characters, tokens) of the block a long run of `char` repeats, or None: the shortest length
        that adds the same number of tokens to runs of any length (checked over _MAX_PERIOD consecutive
        lengths, so over a whole period of any shorter block), measured on runs tiktoken can take."""
        if char not in self._periods:
            base, sizes = 2048, {}

            def size(extra: int) -> int:
                if extra not in sizes:
                    sizes[extra] = self._count(char * (base + extra))
                return sizes[extra]

            self._periods[char] = next(
                ((chars, size(chars) - size(0)) for chars in range(1, _MAX_PERIOD + 1)
                 if size(chars) > size(0)
                 and all(size(shift + chars) - size(shift) == size(chars) - size(0) for shift in range(_MAX_PERIOD))),
                None,
            )
        return self._periods[char]


def _unusable(text: str) -> list:
    raise RuntimeError("tiktoken could not be loaded")


def store_path() -> Path:
    """The count store of o200k_base under this counting rule: a change to either names another file."""
    from xshare.state.store import state_dir  # the CLI imports this module at start-up: orjson waits

    return state_dir() / "counts" / f"{O200K}.{VOCAB_SHA256[:16]}.v{COUNT_VERSION}.counts"


@functools.lru_cache(maxsize=2)
def _load_o200k(vocab: Path | None):
    """Build tiktoken's o200k_base Encoding from a local file, never from the network."""
    import tiktoken  # 0.2 s and more: only when a text is not in the count store
    import tiktoken_ext.openai_public as openai_public

    if vocab is None:
        raise ValueError("no vocabulary file")
    ranks = _ranks(vocab)

    # o200k_base() holds tiktoken's own pattern and special tokens; only its loader is swapped
    original = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = lambda _url, expected_hash=None: ranks
    try:
        return tiktoken.Encoding(**openai_public.o200k_base())
    finally:
        openai_public.load_tiktoken_bpe = original


def _load_fast(vocab: Path | None):
    """fastokens' encode_ordinary over the same checked vocabulary. It reads only a plain file and checks
    no hash, so the checked text is kept uncompressed in the state directory and checked again here."""
    import fastokens  # the optional extra: only for a large cold report

    if vocab is None:
        raise ValueError("no vocabulary file")
    data = _vocab_bytes(vocab)
    plain = _ranks_cache().with_name(f"o200k_base.{VOCAB_SHA256[:16]}.tiktoken")
    try:
        if hashlib.sha256(plain.read_bytes()).hexdigest() != VOCAB_SHA256:
            raise ValueError("changed")
    except (OSError, ValueError):
        from xshare.state.store import atomic_write  # see store_path

        atomic_write(plain, data)
    flat = fastokens.Tokenizer.from_tiktoken(str(plain), encoding=O200K).encode_batch_flat

    def encode(text: str) -> memoryview:
        # the ids as one buffer of uint32, no Python int per token: a third less CPU than encode_ordinary's
        # lists; special tokens' text split as any text, as tiktoken's encode_ordinary does
        return memoryview(flat([text], split_special_tokens=True)[0]).cast("I")

    # fastokens finishes building its tables on the first text (~0.1-0.25 s of CPU): done here, before a
    # report forks its workers, so they inherit them instead of each building its own
    encode("warm up")
    return encode


def _vocab_bytes(vocab: Path) -> bytes:
    """The vocabulary file's text, ungzipped if it is gzipped, refused unless its hash is o200k_base's; read
    and ungzipped to LARGEST_VOCAB at most (XSHARE_VOCAB may name a file that never ends, or a gzip bomb)."""
    from xshare.state.private import open_regular  # see store_path

    with open_regular(vocab) as handle:  # a FIFO or a device is refused, as every file xshare reads
        data = handle.read(LARGEST_VOCAB + 1)
    if data[:2] == _GZIP_MAGIC:
        unzip = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            data = unzip.decompress(data, LARGEST_VOCAB + 1)
        except zlib.error as error:  # a damaged copy
            raise ValueError(f"{vocab.name} is not a readable gzip file ({error})") from None
        if not unzip.eof and len(data) <= LARGEST_VOCAB:
            raise ValueError(f"{vocab.name} is not a readable gzip file (it ends too soon)")
    if len(data) > LARGEST_VOCAB:
        raise ValueError(f"{vocab.name} is over {LARGEST_VOCAB >> 20} MB: not the o200k_base vocabulary")
    if hashlib.sha256(data).hexdigest() != VOCAB_SHA256:
        raise ValueError(f"{vocab.name} is not the o200k_base vocabulary (hash mismatch)")
    return data


@functools.lru_cache(maxsize=4)
def _checked_lines(vocab: Path | None) -> int:
    """The vocabulary's number of lines, once its hash proved it is o200k_base's (raises if not)."""
    if vocab is None:
        raise ValueError("no vocabulary file")
    return _vocab_bytes(vocab).count(b"\n")


def _ranks_cache() -> Path:
    from xshare.state.store import state_dir  # see store_path

    version = f"py{sys.version_info[0]}{sys.version_info[1]}"
    return state_dir() / "vocab" / f"o200k_base.{VOCAB_SHA256[:16]}.{version}.ranks"


def _ranks(vocab: Path) -> dict[bytes, int]:
    """The vocabulary's token ranks, after checking its hash. Parsing the text takes ~0.5 s, which the
    hook would pay on every call, so the parsed ranks are kept in xshare's state directory in marshal
    form, keyed by the vocabulary's hash and this Python's version."""
    import binascii  # only when the parsed vocabulary is not cached yet
    import marshal

    lines = _checked_lines(vocab)
    cached = _ranks_cache()
    try:
        ranks = marshal.loads(cached.read_bytes())
        if isinstance(ranks, dict) and len(ranks) == lines:
            return ranks
    except (OSError, ValueError, EOFError, TypeError):
        pass
    ranks = {}
    decode = binascii.a2b_base64  # what base64.b64decode calls, without its per-call argument checks
    for line in _vocab_bytes(vocab).splitlines():
        if line:
            token, rank = line.split()
            ranks[decode(token)] = int(rank)
    try:
        from xshare.state.store import atomic_write  # see store_path

        atomic_write(cached, marshal.dumps(ranks))
    except OSError:
        pass  # a read-only state directory only costs the next run half a second
    return ranks
