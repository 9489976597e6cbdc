"""A row's metric points (xshare/export/points.py): its counters, their attributes, when exploration is left out."""

from __future__ import annotations

import json

import pytest

from xshare.cli import main
from xshare.demo import write_demo_corpus
from xshare.export.points import CALLS, EXPLORATION, PROMPT, REREAD, points_of, row_points


@pytest.fixture(scope="module")
def demo_rows(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """The demo corpus's rows as `collect --rows` writes them (subagent and helper rows included)."""
    folder = tmp_path_factory.mktemp("rows")
    path = folder / "rows.jsonl"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XSHARE_HOME", str(folder / "xshare-home"))
        assert main(["collect", "--all", "--rows", str(path), "--claude-root",
                     str(write_demo_corpus(folder / "claude"))]) == 0
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_session_gives_prompt_exploration_and_reread_tokens_on_both_bases_and_its_calls(demo_rows):
    row = max(demo_rows, key=lambda row: row["api_calls"])
    points = {(point.metric, point.attributes.get("basis")): point for point in row_points(row)}
    assert sorted(points) == sorted([(CALLS, None), *((metric, basis) for metric in (PROMPT, EXPLORATION, REREAD)
                                                      for basis in ("bill", "context"))])
    assert points[(PROMPT, "bill")].value == row["prompt_tokens_billed"] == 1_451_782
    assert points[(PROMPT, "context")].value == row["context_tokens"] == 1_429_094
    assert points[(EXPLORATION, "context")].value == points[(EXPLORATION, "bill")].value == 379_854
    assert points[(CALLS, None)].value == 43
    assert dict(points[(CALLS, None)].attributes) == {
        "session.id": row["id"], "thread.id": row["id"], "agent": "claude-code", "source": "interactive",
        "model": "claude-opus-4-6", "tokenizer": "o200k_base"}


def test_a_subagent_carries_its_parents_session_id(demo_rows):
    subagent = next(row for row in demo_rows if row["source"] == "subagent")
    for point in row_points(subagent):
        assert point.attributes["session.id"] == subagent["parent"] != subagent["id"] == point.attributes["thread.id"]


def test_a_share_the_bill_cannot_support_exports_the_bill_and_no_exploration(demo_rows):
    """As the report does: a session whose records show more sent than billed has an unknown share, so no
    exploration point (a dashboard's ratio shows nothing for it, never a made-up figure)."""
    row = dict(demo_rows[0], bill_short=True, exploration_share_of_context=None, exploration_share_of_prompt=None)
    metrics = {(point.metric, point.attributes.get("basis")): point.value for point in row_points(row)}
    assert metrics == {(CALLS, None): row["api_calls"], (PROMPT, "bill"): row["prompt_tokens_billed"],
                       (PROMPT, "context"): row["context_tokens"]}


def test_values_from_the_data_are_printable_and_bounded(demo_rows):
    row = dict(demo_rows[0], model="evil\x1b[2J\u202emodel" + "x" * 1000, id="id\x00nul")
    attributes = row_points(row)[0].attributes
    assert attributes["model"].startswith("evil[U+001B][2J[U+202E]model") and len(attributes["model"]) == 256
    assert attributes["session.id"] == "id[U+0000]nul"


def test_a_session_given_twice_counts_once_in_its_last_version(demo_rows):
    row = demo_rows[0]
    grown = dict(row, api_calls=row["api_calls"] + 1)
    calls = [point.value for point in points_of([row, grown, *demo_rows[1:]]) if point.metric == CALLS]
    assert len(calls) == len(demo_rows) and calls[0] == row["api_calls"] + 1
