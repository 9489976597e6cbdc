"""Token counts: o200k_base through tiktoken when its vocabulary is at hand, else characters / 4.

tiktoken's own loader downloads the vocabulary with no timeout and can hang on a network that drops
packets, so xshare never lets it fetch anything: it finds the vocabulary file itself (a named file,
tiktoken's cache, xshare's own copy), checks its hash, and builds the encoding from that file. Only the
report may try a download, with a short timeout, into xshare's own state directory.
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

O200K = "o200k_base"
ESTIMATE = "chars/4"
VOCAB_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
VOCAB_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
# tiktoken caches a download under the sha1 of its URL
_TIKTOKEN_CACHE_NAME = "fb374d419588a4632f3f557e76b4b70aebbca790"
DOWNLOAD_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class TokenizerChoice:
    """Which tokenizer a run uses and why; decided without loading anything."""

    name: str  # O200K or ESTIMATE
    vocab: Path | None
    note: str  # shown on the report's Tokenizer line when the count is an estimate


def _tiktoken_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("tiktoken") is not None


def _tiktoken_cache_file() -> Path | None:
    cache = os.environ.get("TIKTOKEN_CACHE_DIR", os.environ.get("DATA_GYM_CACHE_DIR"))
    if cache == "":
        return None
    base = Path(cache) if cache else Path(tempfile.gettempdir()) / "data-gym-cache"
    return base / _TIKTOKEN_CACHE_NAME


def own_vocab_path() -> Path:
    from xshare.store import state_dir

    return state_dir() / "vocab" / "o200k_base.tiktoken"


def _vocab_candidates(vocab: str | None) -> list[Path]:
    named = vocab or os.environ.get("XSHARE_VOCAB")
    if named:
        return [Path(named).expanduser()]
    found = [own_vocab_path()]
    cache_file = _tiktoken_cache_file()
    if cache_file:
        found.append(cache_file)
    return found


def choose(estimate: bool = False, vocab: str | None = None) -> TokenizerChoice:
    """Pick the tokenizer from what is on disk: cheap (no hashing, no tiktoken import)."""
    if estimate:
        return TokenizerChoice(ESTIMATE, None, "--estimate")
    if not _tiktoken_installed():
        return TokenizerChoice(ESTIMATE, None, "tiktoken is not installed")
    for path in _vocab_candidates(vocab):
        if path.is_file():
            return TokenizerChoice(O200K, path, "")
    named = vocab or os.environ.get("XSHARE_VOCAB")
    if named:
        return TokenizerChoice(ESTIMATE, None, f"vocabulary file not found: {named}")
    return TokenizerChoice(ESTIMATE, None, "o200k_base vocabulary not available offline")


def download_vocab(timeout: float = DOWNLOAD_TIMEOUT_S) -> Path | None:
    """Fetch the vocabulary into xshare's state directory; None on any failure."""
    import urllib.request

    target = own_vocab_path()
    try:
        with urllib.request.urlopen(VOCAB_URL, timeout=timeout) as response:  # fixed https URL
            data = response.read()
    except Exception:
        return None
    if hashlib.sha256(data).hexdigest() != VOCAB_SHA256:
        return None
    from xshare.store import atomic_write

    atomic_write(target, data)
    return target


def choose_for_report(estimate: bool = False, vocab: str | None = None) -> TokenizerChoice:
    """Like choose(), but the report alone may try one short download of the vocabulary."""
    choice = choose(estimate, vocab)
    wanted_exact = not estimate and not vocab and not os.environ.get("XSHARE_VOCAB")
    if choice.name == ESTIMATE and wanted_exact and _tiktoken_installed():
        if download_vocab():
            return choose(estimate, vocab)
        return TokenizerChoice(ESTIMATE, None, choice.note + "; the download failed")
    return choice


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


def _ranks(vocab: Path) -> dict[bytes, int]:
    """The vocabulary's token ranks, after checking its hash. Parsing the text file takes ~0.5 s,
    which the hook would pay on every call, so the parsed ranks are kept in xshare's state directory
    in marshal form (~0.1 s to load), keyed by the vocabulary's hash and this Python's version."""
    import base64
    import marshal
    import sys

    data = vocab.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != VOCAB_SHA256:
        raise ValueError(f"{vocab.name} is not the o200k_base vocabulary (hash mismatch)")
    cached = own_vocab_path().with_name(f"o200k_base.{digest[:16]}.py{sys.version_info[0]}{sys.version_info[1]}.ranks")
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
