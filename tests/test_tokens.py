"""The tokenizer: o200k_base offline, never a hang on the network, characters / 4 said out loud."""

from __future__ import annotations

import hashlib
import io
import sys
from pathlib import Path

import pytest
from conftest import VOCAB, needs_vocab

from xshare import tokens


def test_estimate_skips_tiktoken():
    choice = tokens.choose(estimate=True)
    assert choice.name == tokens.ESTIMATE
    counter = tokens.Counter(choice)
    assert counter.count("abcdefgh") == 2
    assert counter.count("abcdefghi") == 3  # a started group of four is a token
    assert counter.count("") == 0


def test_a_named_vocabulary_that_is_missing_falls_back_and_says_why(tmp_path: Path):
    choice = tokens.choose(vocab=str(tmp_path / "nope.tiktoken"))
    assert choice.name == tokens.ESTIMATE
    assert "not found" in choice.note


def test_no_vocabulary_anywhere_means_no_network_and_an_estimate(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("XSHARE_VOCAB", raising=False)
    monkeypatch.setitem(sys.modules, "requests", None)  # tiktoken's downloader would need it

    def no_network(*args, **kwargs):
        raise AssertionError("choose() must never touch the network")

    monkeypatch.setattr("urllib.request.urlopen", no_network)
    choice = tokens.choose()
    assert choice.name == tokens.ESTIMATE
    assert "not available offline" in choice.note


def test_the_report_tries_one_short_download_and_survives_its_failure(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("XSHARE_VOCAB", raising=False)
    asked = []

    def offline(url, timeout):
        asked.append(timeout)
        raise OSError("network unreachable")

    monkeypatch.setattr("urllib.request.urlopen", offline)
    choice = tokens.choose_for_report()
    assert choice.name == tokens.ESTIMATE
    assert "download failed" in choice.note
    assert asked == [tokens.DOWNLOAD_TIMEOUT_S]


def test_a_download_with_the_wrong_hash_is_not_kept(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr("urllib.request.urlopen", lambda url, timeout: io.BytesIO(b"not a vocabulary"))
    assert tokens.download_vocab() is None
    assert not tokens.own_vocab_path().exists()


@needs_vocab
def test_a_verified_download_lands_in_xshares_own_directory(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("XSHARE_VOCAB", raising=False)
    monkeypatch.setattr("urllib.request.urlopen", lambda url, timeout: io.BytesIO(VOCAB.read_bytes()))
    choice = tokens.choose_for_report()
    assert choice.name == tokens.O200K
    assert choice.vocab == tokens.own_vocab_path()


def test_a_corrupt_vocabulary_is_refused_not_trusted(tmp_path: Path):
    bad = tmp_path / "o200k_base.tiktoken"
    bad.write_bytes(b"aGVsbG8= 0\n")
    choice = tokens.choose(vocab=str(bad))
    assert choice.name == tokens.O200K  # present, so chosen ...
    counter = tokens.Counter(choice)
    assert counter.name == tokens.ESTIMATE  # ... but the hash check refuses it on load
    assert "hash mismatch" in counter.choice.note


def test_without_tiktoken_the_count_is_an_estimate(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(tokens, "_tiktoken_installed", lambda: False)
    choice = tokens.choose()
    assert choice.name == tokens.ESTIMATE
    assert "not installed" in choice.note


@needs_vocab
def test_o200k_counts_match_tiktoken():
    counter = tokens.Counter(tokens.choose())
    assert counter.name == tokens.O200K
    assert counter.count("hello world") == 2
    assert hashlib.sha256(VOCAB.read_bytes()).hexdigest() == tokens.VOCAB_SHA256


@needs_vocab
@pytest.mark.parametrize(
    "text",
    ["lone surrogate \ud83d here", "<|endoftext|> inside a transcript", "\x00\x01 control", "é" * 5000, " " * 10000],
)
def test_odd_text_never_crashes(text: str):
    counter = tokens.Counter(tokens.choose())
    assert counter.count(text) > 0


@needs_vocab
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
