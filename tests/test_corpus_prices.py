"""Every model the readers record across ../shared/corpus (six agents) has a list price in the shipped table,
or is named below as one that has none, with the reason; and every row's usage is the sum of its calls' usage
by model. Skipped when the corpus is absent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import CORPUS, needs_corpus
from xshare.cli import main
from xshare.measure.ledger import usage_sums_agree
from xshare.measure.prices import NO_MODEL, shipped

# Models the corpus holds that the table does not price, each for a reason; a name here that the table comes to
# price, or that the corpus no longer holds, fails the test, so the list stays true.
KNOWN_UNPRICED = {
    # MiniMax's first-party list (through LiteLLM) has MiniMax-M2.5 and M2.5-lightning, not "highspeed"
    "MiniMax-M2.5-highspeed",
    # Xiaomi's first-party list has only MiMo v2.6; v2.5 is priced by resellers alone
    "mimo-v2.5-pro",
    # a local quantised model (llama.cpp): no provider bills it
    "Qwen3.6-35B-A3B-UD-IQ4_NL-MTP",
    # NVIDIA's Nemotron is sold by resellers only; xshare prices first-party lists
    "nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B",
    # a gateway's own name for a model behind it: which provider and rate it billed is not recorded
    "gemini-claude-sonnet-4-5",
}


def _arguments(rows: Path) -> list[str]:
    arguments = ["report", "--all", "--json", "--estimate", "--no-cache", "--no-history", "--rows", str(rows)]
    flags = {"claude": "--claude-root", "codex": "--codex-home", "gemini": "--gemini-home",
             "opencode": "--opencode-db", "openclaw": "--openclaw-home"}
    for agent, flag in flags.items():
        for home in sorted(path for path in (CORPUS / agent).glob("*") if path.is_dir()):
            arguments += [flag, str(home)]
    for database in sorted((CORPUS / "hermes").rglob("state.db")):
        arguments += ["--hermes-db", str(database)]
    return arguments


@needs_corpus
def test_every_model_in_the_corpus_is_priced_or_named_as_unpriced(tmp_path: Path, capsys: pytest.CaptureFixture):
    rows_file = tmp_path / "rows.jsonl"
    assert main(_arguments(rows_file)) == 0
    dollars = json.loads(capsys.readouterr().out)["dollars"]
    rows = [json.loads(line) for line in rows_file.read_text().splitlines()]
    assert len(rows) > 300 and all("usage_by_model" in row for row in rows)
    assert [row["id"] for row in rows if not usage_sums_agree(row)] == []
    recorded = {model for row in rows for model, bands in row["usage_by_model"].items()
                if any(entry["calls"] for entry in bands.values())}
    table = shipped()
    unpriced = {model for model in recorded if model == NO_MODEL or table.name_for(model) is None}
    assert unpriced == KNOWN_UNPRICED
    # the report counts those models' calls as unpriced, and no others
    assert set(dollars["calls_unpriced"]) == KNOWN_UNPRICED
    assert dollars["sessions_priced"] > 300 and dollars["dollars"] > 0
