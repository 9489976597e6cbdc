"""Every file reader takes whatever a file holds (wrong types at every level) and still returns its row."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest
from agent_fixtures import codex_session, gemini_jsonl, openclaw_session

from xshare.sources import codex, gemini, openclaw

ODD = [None, True, 0, -5, 1.5e300, "", "x", [], [None], {}, {"": None}, "2026-13-45T99:99:99Z", 10 ** 30]


def _scramble(value: object, rng: random.Random) -> object:
    """The same structure with some values swapped for values of the wrong type."""
    if isinstance(value, dict):
        return {key: _scramble(item, rng) for key, item in value.items()}
    if isinstance(value, list):
        return [_scramble(item, rng) for item in value]
    return rng.choice(ODD) if rng.random() < 0.3 else value


@pytest.mark.parametrize(("module", "write"), [(codex, codex_session), (gemini, gemini_jsonl),
                                               (openclaw, openclaw_session)])
@pytest.mark.parametrize("seed", range(8))
def test_scrambled_files_never_raise(tmp_path: Path, module, write, seed: int):
    path, _ = write(tmp_path)
    rng = random.Random(seed)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps(_scramble(line, rng)) + "\n" for line in lines))
    problems: Counter = Counter()
    rows = module.read(path, len, "chars", problems)
    assert len(rows) == 1 and rows[0]["agent"] == module.AGENT
    assert rows[0]["api_calls"] >= 0 and rows[0]["prompt_tokens_billed"] >= 0
