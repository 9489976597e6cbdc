"""The tokenizer: o200k_base from the vocabulary packaged with xshare, never the network, characters / 4
said out loud when it cannot be used."""

from __future__ import annotations

import gzip
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import NO_NETWORK, SHARED
from xshare.measure import tokens

TEXTS = ["hello world", "def main():\n    return 0\n", '{"tool_use_id": "toolu_01", "content": [1, 2]}',
         "Grüße, мир, 世界 🌍", "    indented\n\t\ttabs\r\n", "<|endoftext|> inside a transcript", "a" * 3000]


def tiktokens_own_o200k(cache: Path):
    """o200k_base built by tiktoken's own loader (its own hash check included) from a cache seeded with the
    packaged bytes, as tokenizer.md recipe A does: an independent path to the same encoding."""
    import tiktoken
    import tiktoken_ext.openai_public as openai_public

    cache.mkdir(parents=True, exist_ok=True)
    # tiktoken names the cached file after the sha1 of its download URL
    seeded = cache / "fb374d419588a4632f3f557e76b4b70aebbca790"
    seeded.write_bytes(gzip.decompress(tokens.PACKAGED_VOCAB.read_bytes()))
    return tiktoken.Encoding(**openai_public.o200k_base())


def test_estimate_skips_tiktoken():
    choice = tokens.choose(estimate=True)
    assert choice.name == tokens.ESTIMATE
    counter = tokens.Counter(choice)
    assert counter.count("abcdefgh") == 2
    assert counter.count("abcdefghi") == 3  # a started group of four is a token
    assert counter.count("") == 0


def test_with_nothing_named_the_packaged_vocabulary_is_chosen():
    choice = tokens.choose()
    assert choice == tokens.TokenizerChoice(tokens.O200K, tokens.PACKAGED_VOCAB, "")
    counter = tokens.Counter(choice)
    assert counter.name == tokens.O200K
    assert counter.count("hello world") == 2  # tokenizer.md: [24912, 2375]


def test_the_packaged_vocabulary_is_o200k_base():
    data = gzip.decompress(tokens.PACKAGED_VOCAB.read_bytes())
    assert hashlib.sha256(data).hexdigest() == tokens.VOCAB_SHA256
    assert data.count(b"\n") == 199_998


def test_counts_equal_tiktokens_own_loader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setitem(sys.modules, "requests", None)  # a cache miss would have to download: fail instead
    reference = tiktokens_own_o200k(tmp_path / "cache")
    counter = tokens.Counter(tokens.choose())
    assert reference.encode_ordinary("hello world") == [24912, 2375]
    for text in TEXTS:
        assert counter.count(text) == len(reference.encode_ordinary(text)), text


@pytest.mark.skipif(not (SHARED / "vocab" / "o200k_base.tiktoken").is_file(), reason="no ../shared/vocab to compare")
def test_the_packaged_bytes_are_the_shared_vocabulary():
    shared = (SHARED / "vocab" / "o200k_base.tiktoken").read_bytes()
    assert gzip.decompress(tokens.PACKAGED_VOCAB.read_bytes()) == shared


def test_the_packaged_vocabulary_loads_with_no_network(tmp_path: Path):
    code = NO_NETWORK + ("from xshare.measure import tokens\ncounter = tokens.Counter(tokens.choose())\n"
                         "print(counter.name, counter.count('hello world'))")
    env = {**os.environ, "XSHARE_HOME": str(tmp_path / "xshare"), "TIKTOKEN_CACHE_DIR": str(tmp_path / "empty")}
    env.pop("XSHARE_VOCAB", None)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["o200k_base", "2"]


def test_the_no_network_prelude_does_refuse_the_network():
    code = NO_NETWORK + "import socket\nsocket.getaddrinfo('localhost', 80)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "network use: socket.getaddrinfo" in done.stderr


def test_xshare_has_no_download_code():
    source = Path(tokens.__file__).read_text()
    assert "urllib" not in source and "requests" not in source and "http" not in source
    assert not hasattr(tokens, "download_vocab")


def test_a_named_vocabulary_that_is_missing_falls_back_and_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    choice = tokens.choose(vocab=str(tmp_path / "nope.tiktoken"))
    assert choice.name == tokens.ESTIMATE
    assert "not found" in choice.note
    monkeypatch.setenv("XSHARE_VOCAB", str(tmp_path / "gone.tiktoken"))  # named: never replaced by the packaged copy
    choice = tokens.choose()
    assert choice.name == tokens.ESTIMATE and "gone.tiktoken" in choice.note


def test_a_named_vocabulary_is_used_plain_or_gzipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    plain = tmp_path / "o200k_base.tiktoken"
    plain.write_bytes(gzip.decompress(tokens.PACKAGED_VOCAB.read_bytes()))
    zipped = tmp_path / "copy.gz"
    zipped.write_bytes(tokens.PACKAGED_VOCAB.read_bytes())
    monkeypatch.setenv("XSHARE_VOCAB", str(plain))
    assert tokens.choose().vocab == plain
    for path in (plain, zipped):
        counter = tokens.Counter(tokens.choose(vocab=str(path)))
        assert counter.name == tokens.O200K and counter.count("hello world") == 2


def test_a_missing_packaged_vocabulary_means_an_estimate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(tokens, "PACKAGED_VOCAB", tmp_path / "o200k_base.tiktoken.gz")
    choice = tokens.choose()
    assert choice.name == tokens.ESTIMATE and "packaged" in choice.note and "missing" in choice.note


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda good: good[: len(good) // 2], "not a readable gzip file"),  # a truncated download or copy
        (lambda good: good[:100] + b"\0" * 64 + good[164:], "not a readable gzip file"),  # flipped bytes
        (lambda good: gzip.compress(b"aGVsbG8= 0\n"), "hash mismatch"),  # gzip, but another vocabulary
        (lambda good: b"", "hash mismatch"),
    ],
)
def test_a_damaged_packaged_vocabulary_is_refused_not_trusted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              damage, reason: str):
    bad = tmp_path / "o200k_base.tiktoken.gz"
    bad.write_bytes(damage(tokens.PACKAGED_VOCAB.read_bytes()))
    monkeypatch.setattr(tokens, "PACKAGED_VOCAB", bad)
    choice = tokens.choose()
    assert choice.name == tokens.O200K  # present, so chosen ...
    counter = tokens.Counter(choice)
    assert counter.name == tokens.ESTIMATE  # ... but refused on load, with the reason
    assert reason in counter.choice.note
    assert counter.count("abcdefgh") == 2


def test_a_corrupt_named_vocabulary_is_refused_not_trusted(tmp_path: Path):
    bad = tmp_path / "o200k_base.tiktoken"
    bad.write_bytes(b"aGVsbG8= 0\n")
    counter = tokens.Counter(tokens.choose(vocab=str(bad)))
    assert counter.name == tokens.ESTIMATE
    assert "hash mismatch" in counter.choice.note


def test_the_parsed_ranks_are_cached_and_a_damaged_cache_is_rebuilt():
    first = tokens._ranks(tokens.PACKAGED_VOCAB)
    cache = tokens._ranks_cache()
    assert cache.is_file() and str(cache).startswith(os.environ["XSHARE_HOME"])
    assert tokens._ranks(tokens.PACKAGED_VOCAB) == first
    cache.write_bytes(b"\0 not marshal")
    assert tokens._ranks(tokens.PACKAGED_VOCAB) == first
    assert len(first) == 199_998 and first[b"hello"] == 24912


def test_the_parsed_ranks_are_tiktokens_own_parse_in_the_same_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The fast parse (binascii) against tiktoken's own (base64.b64decode per line), cache emptied first:
    the same ranks, inserted in the same order, so the marshal cache holds the same bytes."""
    from tiktoken.load import load_tiktoken_bpe

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "cache"))  # tiktoken keeps a copy there
    tokens._ranks_cache().unlink(missing_ok=True)
    parsed = tokens._ranks(tokens.PACKAGED_VOCAB)
    plain = tmp_path / "o200k_base.tiktoken"
    plain.write_bytes(gzip.decompress(tokens.PACKAGED_VOCAB.read_bytes()))
    reference = load_tiktoken_bpe(str(plain))
    assert list(parsed.items()) == list(reference.items())


def test_without_tiktoken_the_count_is_an_estimate(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(tokens, "_tiktoken_installed", lambda: False)
    choice = tokens.choose()
    assert choice.name == tokens.ESTIMATE
    assert "not installed" in choice.note


@pytest.mark.parametrize(
    "text",
    ["lone surrogate \ud83d here", "<|endoftext|> inside a transcript", "\x00\x01 control", "é" * 5000, " " * 10000],
)
def test_odd_text_never_crashes(text: str):
    counter = tokens.Counter(tokens.choose())
    assert counter.name == tokens.O200K
    assert counter.count(text) > 0


def test_each_distinct_text_is_tokenized_once():
    counter = tokens.Counter(tokens.choose())
    calls = []
    encode = counter._encode

    def counting(text):
        calls.append(text)
        return encode(text)

    counter._encode = counting
    for _ in range(3):
        counter.count("def main():\n    return 0\n")
        counter.count("another text")
    assert len(calls) == 2


def test_the_counters_memo_stays_under_its_cap(monkeypatch):
    """A session of more distinct texts than the memo holds: it is dropped whole and begins again, and every
    count stays what a counter without a cap gives."""
    monkeypatch.setattr(tokens, "SEEN_CAP", 50)
    capped = tokens.Counter(tokens.choose(remember=False))
    if capped.name != tokens.O200K:
        pytest.skip("tiktoken or the vocabulary is not installed")
    texts = [f"prompt number {number} about {'x' * (number % 13)}" for number in range(400)]
    first = [capped.count(text) for text in texts]
    assert len(capped._seen) <= 50
    again = [capped.count(text) for text in reversed(texts)][::-1]
    monkeypatch.setattr(tokens, "SEEN_CAP", 1 << 20)
    assert first == again == [tokens.Counter(tokens.choose(remember=False)).count(text) for text in texts]
    assert len(capped._seen) <= 50
