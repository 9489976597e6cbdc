"""Every test runs with its own xshare home and an empty user home, never the developer's real data."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared"
CORPUS = SHARED / "corpus"
VOCAB = SHARED / "vocab" / "o200k_base.tiktoken"

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not beside this checkout")
needs_vocab = pytest.mark.skipif(not VOCAB.is_file(), reason="no o200k_base vocabulary in ../shared/vocab")


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XSHARE_HOME", str(tmp_path / "xshare-home"))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tiktoken-cache"))
    for name in ("CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XSHARE_VOCAB", "NO_COLOR", "HERMES_HOME",
                 "HERMES_SESSION_ID", "CLAUDE_PLUGIN_DATA", "CLAUDE_PLUGIN_ROOT", "XSHARE_PLUGIN_ENV"):
        monkeypatch.delenv(name, raising=False)
    if VOCAB.is_file():
        monkeypatch.setenv("XSHARE_VOCAB", str(VOCAB))
    return home


def append_in_pieces(source: Path, target: Path, rng: random.Random, pieces: int) -> Iterator[None]:
    """Write `source` into `target` the way Claude Code does, a piece at a time with lines cut anywhere;
    yields after each piece (where the caller runs the hook)."""
    data = source.read_bytes()
    cuts = sorted(rng.sample(range(1, len(data)), min(pieces, len(data) - 1)))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"")
    for start, end in zip([0, *cuts], [*cuts, len(data)], strict=True):
        with target.open("ab") as handle:
            handle.write(data[start:end])
        yield
