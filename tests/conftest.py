"""Every test runs with its own xshare home and an empty user home, never the developer's real data."""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# the shared fixtures and fake servers, imported by their bare names (`from agent_fixtures import ...`) from
# every test folder and by each other when run as scripts
sys.path.insert(0, str(Path(__file__).resolve().parent / "support"))

SHARED = Path(__file__).resolve().parents[2] / "shared"
CORPUS = SHARED / "corpus"

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not beside this checkout")

# Raises on any attempt to resolve a name, open a connection or build a URL request: run as a prelude in a
# child process, it proves that a code path never touches the network (an audit hook cannot be removed,
# so it is never installed in the test process itself).
NO_NETWORK = """
import sys
def _refuse(event, args):
    if event in ("socket.connect", "socket.getaddrinfo", "socket.gethostbyname", "urllib.Request"):
        raise RuntimeError(f"network use: {event}")
sys.addaudithook(_refuse)
sys.modules["requests"] = None  # tiktoken's downloader needs it
"""


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XSHARE_HOME", str(tmp_path / "xshare-home"))
    # an empty tiktoken cache: were anything to fall back on tiktoken's own loader, it could not hide there
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tiktoken-cache"))
    # no test leaves a hook worker running for ten minutes; tests of the worker turn it on themselves
    monkeypatch.setenv("XSHARE_WORKER", "0")
    # nor a background pass over the history (tests of the pass turn it on themselves)
    monkeypatch.setenv("XSHARE_NO_BACKGROUND", "1")
    for name in ("CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XSHARE_VOCAB", "NO_COLOR", "HERMES_HOME",
                 "HERMES_SESSION_ID", "CLAUDE_PLUGIN_DATA", "CLAUDE_PLUGIN_ROOT", "XSHARE_PLUGIN_ENV",
                 "CODEX_HOME", "GEMINI_CLI_HOME", "XDG_DATA_HOME", "OPENCLAW_STATE_DIR", "OPENCLAW_HOME",
                 "COPILOT_HOME", "QWEN_HOME", "PI_CODING_AGENT_DIR", "PI_CODING_AGENT_SESSION_DIR"):
        monkeypatch.delenv(name, raising=False)
    return home  # the tokenizer is the vocabulary packaged with xshare, as on a user's machine


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


def hook_on(path: Path, event: str = "PostToolBatch") -> None:
    """The Claude Code hook for one transcript, called as Claude Code calls it (after a tool batch by default)."""
    from xshare.live import hook

    payload = {"session_id": path.stem, "transcript_path": str(path), "hook_event_name": event}
    hook.run_hook(json.dumps(payload).encode())


def session_json(capsys: pytest.CaptureFixture, *argv: str) -> dict:
    """`xshare session ARGV --json`, parsed."""
    from xshare.cli import main

    assert main(["session", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)
