"""Token counts: o200k_base through tiktoken, from the vocabulary that ships inside xshare, else characters / 4.

xshare never touches the network. tiktoken's own loader would download the vocabulary (with no timeout,
so it can hang), so xshare builds the encoding itself from a local file: `--vocab FILE` or
`$XSHARE_VOCAB` when named, else the gzipped copy in xshare/data. The file's hash is checked before use.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import os
import zlib
from dataclasses import dataclass
from pathlib import Path

O200K = "o200k_base"
ESTIMATE = "chars/4"
# sha256 of the uncompressed file, the hash tiktoken itself expects for o200k_base
VOCAB_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
PACKAGED_VOCAB = Path(__file__).resolve().parent / "data" / "o200k_base.tiktoken.gz"
_GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True)
class TokenizerChoice:
    """Which tokenizer a run uses and why; decided without loading anything."""

    name: str  # O200K or ESTIMATE
    vocab: Path | None
    note: str  # shown on the report's Tokenizer line when the count is an estimate


def _tiktoken_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("tiktoken") is not None


def choose(estimate: bool = False, vocab: str | None = None) -> TokenizerChoice:
    """Pick the tokenizer from what is on disk: cheap (no hashing, no tiktoken import)."""
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
    """Counts tokens of texts, each distinct text once per process."""

    def __init__(self, choice: TokenizerChoice) -> None:
        self.choice = choice
        self.name = choice.name
        self._encode = None
        self._seen: dict[tuple[int, int], int] = {}
        if choice.name == O200K:
            try:
                self._encode = _load_o200k(choice.vocab).encode_ordinary
            except Exception as error:  # a corrupt or wrong file: say so, keep measuring
                self.name = ESTIMATE
                self.choice = TokenizerChoice(ESTIMATE, None, f"vocabulary unusable: {error}")

    def count(self, text: str) -> int:
        if not text:
            return 0
        if self._encode is None:
            return (len(text) + 3) // 4
        key = (hash(text), len(text))
        found = self._seen.get(key)
        if found is None:
            found = self._seen[key] = len(self._encode_safely(text))
        return found

    def _encode_safely(self, text: str) -> list[int]:
        try:
            return self._encode(text)
        except (UnicodeEncodeError, ValueError):
            # lone surrogates and other odd text: count what the model would have seen
            return self._encode(text.encode("utf-16", "surrogatepass").decode("utf-16", "replace"))


@functools.lru_cache(maxsize=2)
def _load_o200k(vocab: Path | None):
    """Build tiktoken's o200k_base Encoding from a local file, never from the network."""
    import tiktoken
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


def _vocab_bytes(vocab: Path) -> bytes:
    """The vocabulary file's text, ungzipped if it is gzipped, refused unless its hash is o200k_base's."""
    data = vocab.read_bytes()
    if data[:2] == _GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as error:  # a truncated or damaged copy
            raise ValueError(f"{vocab.name} is not a readable gzip file ({error})") from None
    if hashlib.sha256(data).hexdigest() != VOCAB_SHA256:
        raise ValueError(f"{vocab.name} is not the o200k_base vocabulary (hash mismatch)")
    return data


def _ranks_cache() -> Path:
    import sys

    from xshare.store import state_dir

    version = f"py{sys.version_info[0]}{sys.version_info[1]}"
    return state_dir() / "vocab" / f"o200k_base.{VOCAB_SHA256[:16]}.{version}.ranks"


def _ranks(vocab: Path) -> dict[bytes, int]:
    """The vocabulary's token ranks, after checking its hash. Parsing the text takes ~0.5 s, which the
    hook would pay on every call, so the parsed ranks are kept in xshare's state directory in marshal
    form, keyed by the vocabulary's hash and this Python's version."""
    import base64
    import marshal

    data = _vocab_bytes(vocab)
    cached = _ranks_cache()
    try:
        ranks = marshal.loads(cached.read_bytes())
        if isinstance(ranks, dict) and len(ranks) == data.count(b"\n"):
            return ranks
    except (OSError, ValueError, EOFError, TypeError):
        pass
    ranks = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    try:
        from xshare.store import atomic_write

        atomic_write(cached, marshal.dumps(ranks))
    except OSError:
        pass  # a read-only state directory only costs the next run half a second
    return ranks
