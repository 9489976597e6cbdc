"""An invented Claude Code history big enough that measuring it takes a while (seconds, not a blink): many
sessions, each reading files of made-up code of its own, so no text is shared between them and every one
is counted. Deterministic for a seed."""

from __future__ import annotations

import random
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

from xshare.demo import TranscriptWriter, text

START = datetime(2026, 11, 3, 9, 0, tzinfo=timezone.utc)
_WORDS = ("load", "config", "retry", "parse", "token", "cache", "span", "queue", "batch", "frame", "index", "route",
          "merge", "state", "field", "error", "limit", "clock", "shard", "cursor", "digest", "buffer", "worker")


def code(rng: random.Random, lines: int) -> str:
    """Lines of invented Python, different for every draw (numbers and names mixed at random)."""
    out = []
    for n in range(lines):
        name = "_".join(rng.choice(_WORDS) for _ in range(3))
        out.append(f"def {name}_{rng.getrandbits(40):x}(value, limit={rng.randint(1, 99999)}): "
                   f"return {rng.choice(_WORDS)}(value) + {n}  # {rng.getrandbits(64):x}")
    return "\n".join(out) + "\n"


def write_big_history(root: Path, sessions: int = 150, reads: int = 6, lines: int = 300, seed: int = 34) -> list[Path]:
    """`sessions` transcripts under root/projects/-home-dev-app, each a prompt, `reads` Reads of `lines`
    lines each and an answer; returns their paths."""
    rng = random.Random(seed)
    paths = []
    for number in range(sessions):
        session_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        writer = TranscriptWriter(session_id, "/home/dev/app", start=START + timedelta(minutes=number))
        writer.user(f"Where does module {number} retry?")
        for read in range(reads):
            path = f"/home/dev/app/pkg{number}/module{read}.py"
            writer.read_result(writer.use("Read", {"file_path": path}), path, code(rng, lines))
        writer.call(text(f"Module {number} retries in its worker loop."))
        paths.append(writer.write(root / "projects" / "-home-dev-app" / f"{session_id}.jsonl"))
    return paths
