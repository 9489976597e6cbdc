"""Dollars where a ccusage user looks for them (issue 30): `xshare session`'s line, `xshare sessions`'s $ column
and `--sort cost`, `report --by`'s dollars per period; each from `prices.row_cost`, "unknown" (never $0.00) for
the demo's session on a model with no list price, none with --no-dollars or XSHARE_DOLLARS=off, and a
--prices file laid over the table."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import asdict
from pathlib import Path

import pytest

from tests.commands.test_cli import run
from tests.conftest import needs_corpus
from xshare.demo import write_demo_corpus
from xshare.measure.prices import load, row_cost, shipped
from xshare.measure.timestamps import session_time
from xshare.report.dollars import money
from xshare.report.periods import period_of
from xshare.report.session_dollars import exploration_dollars

UNPRICED_MODEL = "qwen3-coder-30b-local"  # the demo's gateway session: a self-hosted model, no list price


@pytest.fixture
def demo_root(tmp_path: Path) -> Path:
    return write_demo_corpus(tmp_path / "claude")


def demo_rows(capsys, root: Path, tmp_path: Path) -> list[dict]:
    rows_file = tmp_path / "rows.jsonl"
    code, _, _ = run(capsys, "report", "--all", "--estimate", "--claude-root", str(root), "--rows", str(rows_file))
    assert code == 0
    return [json.loads(line) for line in rows_file.read_text().splitlines()]


def test_session_says_its_dollars_its_prompt_and_explorations_part(capsys, demo_root, tmp_path):
    rows = demo_rows(capsys, demo_root, tmp_path)
    row = max((row for row in rows if row["model"] != UNPRICED_MODEL), key=lambda row: row["api_calls"])
    priced = row_cost(row, shipped())
    code, out, _ = run(capsys, "session", row["id"], "--estimate", "--claude-root", str(demo_root))
    assert code == 0 and priced.dollars > 1  # the demo's longest session: a dollar and more at Opus's rates
    assert (f"Dollars (list prices of {shipped().date}): {money(priced.dollars)}, of which the prompt "
            f"{money(priced.prompt_dollars)} and exploration {money(exploration_dollars(row, priced))}") in out
    assert 0 < exploration_dollars(row, priced) < priced.prompt_dollars < priced.dollars


def test_session_on_a_model_with_no_price_says_unknown_and_why_never_zero(capsys, demo_root, tmp_path):
    row = next(row for row in demo_rows(capsys, demo_root, tmp_path) if row["model"] == UNPRICED_MODEL)
    code, out, _ = run(capsys, "session", row["id"], "--estimate", "--claude-root", str(demo_root))
    assert code == 0 and f"): unknown: no list price for {UNPRICED_MODEL}" in out and "$0.00" not in out
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"date": "2026-11-30", "models": {UNPRICED_MODEL: {"input": 0.6, "output": 2.2}}}))
    code, out, _ = run(capsys, "session", row["id"], "--estimate", "--claude-root", str(demo_root), "--prices",
                       str(prices))
    priced = row_cost(row, load(str(prices)))
    assert code == 0 and priced.dollars and f"your --prices file (2026-11-30)): {money(priced.dollars)}," in out


@pytest.mark.parametrize("turned_off", [("--no-dollars",), ()])
def test_session_without_dollars_when_turned_off(capsys, demo_root, tmp_path, monkeypatch, turned_off):
    if not turned_off:
        monkeypatch.setenv("XSHARE_DOLLARS", "off")
    row = demo_rows(capsys, demo_root, tmp_path)[0]
    code, out, _ = run(capsys, "session", row["id"], "--estimate", "--claude-root", str(demo_root), *turned_off)
    assert code == 0 and "Exploration:" in out and "Dollars" not in out and "$" not in out


def test_sessions_lists_each_sessions_dollars_and_sorts_by_cost(capsys, demo_root, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    by_id = {row["id"]: row for row in demo_rows(capsys, demo_root, tmp_path)}
    code, out, _ = run(capsys, "sessions", "--all", "--estimate", "--claude-root", str(demo_root), "--json")
    listed = json.loads(out)["sessions"]
    assert code == 0 and listed
    for entry in listed:
        priced = row_cost(by_id[entry["id"]], shipped())
        shown = {name: value for name, value in asdict(priced).items() if name != "by_model"}  # the report's to sum
        assert entry["cost"] == json.loads(json.dumps(shown))
        assert sum(dollars for _, dollars in priced.by_model) == pytest.approx(priced.dollars or 0.0)
    code, out, _ = run(capsys, "sessions", "--all", "--estimate", "--claude-root", str(demo_root), "--sort", "cost")
    lines = [line for line in out.splitlines() if line.split() and by_id.get(_full(line.split()[0], by_id))]
    dollars = [row_cost(by_id[_full(line.split()[0], by_id)], shipped()).dollars for line in lines]
    assert len(lines) == len(listed) and dollars[-1] is None and None not in dollars[:-1]
    assert dollars[:-1] == sorted(dollars[:-1], reverse=True) and dollars[0] > dollars[-2]
    for line, value in zip(lines, dollars, strict=True):
        assert (money(value) if value is not None else "unknown") in line.split()
    assert "$0.00" not in out and f"$: list prices of {shipped().date}." in out


def _full(short: str, by_id: dict) -> str | None:
    return next((full for full in by_id if full.startswith(short)), None) if len(short) >= 8 else None


def test_sessions_without_dollars_when_turned_off(capsys, demo_root, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = run(capsys, "sessions", "--all", "--estimate", "--claude-root", str(demo_root), "--no-dollars")
    assert code == 0 and "$" not in out and "list prices" not in out
    code, out, _ = run(capsys, "sessions", "--all", "--estimate", "--claude-root", str(demo_root), "--json",
                       "--no-dollars")
    assert code == 0 and all("cost" not in entry for entry in json.loads(out)["sessions"])


@pytest.mark.parametrize("columns", [60, 100, 200])
def test_sessions_with_dollars_fit_the_width(capsys, demo_root, monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    code, out, _ = run(capsys, "sessions", "--all", "--estimate", "--claude-root", str(demo_root))
    assert code == 0 and max(map(len, out.splitlines())) <= columns and "unknown" in out


def test_report_by_week_prices_each_period_from_row_cost(capsys, demo_root, tmp_path, monkeypatch):
    rows = demo_rows(capsys, demo_root, tmp_path)
    expected: dict = defaultdict(lambda: [0.0, 0])  # (week, group) -> dollars priced, sessions unpriced
    for row in rows:
        priced = row_cost(row, shipped())
        key = (period_of(session_time(row["started_at"]), "week"), f"{row['agent']}/{row['source']}")
        expected[key][0] += priced.dollars or 0.0
        expected[key][1] += priced.dollars is None
    code, out, _ = run(capsys, "report", "--all", "--estimate", "--claude-root", str(demo_root), "--by", "week",
                       "--json")
    periods = json.loads(out)["over_time"]["periods"]
    got = {(week, key): group["dollars"] for week, period in periods.items() for key, group in period["groups"].items()}
    assert code == 0 and set(got) == set(expected)
    for key, (dollars, unpriced) in expected.items():
        assert got[key]["sessions_unpriced"] == unpriced
        assert got[key]["dollars"] == (None if unpriced and not dollars else pytest.approx(dollars, abs=1e-4))
    assert any(value["dollars"] is None for value in got.values())  # the glm-4.6 session's week
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = run(capsys, "report", "--all", "--estimate", "--claude-root", str(demo_root), "--by", "week")
    table = out[out.index("By week"):]
    assert code == 0 and "Dollars" in table.splitlines()[2]
    for (week, key), (dollars, unpriced) in expected.items():
        line = next(line for line in table.splitlines() if line.startswith(f"{week}  {key.replace('/', ' / ')} "))
        assert line.split()[-1] == ("unknown" if unpriced and not dollars else money(dollars))
    code, out, _ = run(capsys, "report", "--all", "--estimate", "--claude-root", str(demo_root), "--by", "week",
                       "--no-dollars")
    assert code == 0 and "Dollars" not in out[out.index("By week"):] and "$" not in out


@needs_corpus
def test_the_corpus_sessions_dollars_add_up_to_the_reports(capsys, monkeypatch):
    """Every agent of ../shared/corpus: `sessions`'s dollars (every session, subagents too) sum to the report's
    total, its unknowns are the report's unpriced sessions, and --sort cost lists the costliest first."""
    from tests.test_views_agree import corpus_flags

    flags = ["--all", "--estimate", *corpus_flags()]
    code, out, _ = run(capsys, "report", *flags, "--json")
    report = json.loads(out)["dollars"]
    code_listed, out, _ = run(capsys, "sessions", *flags, "--json", "--limit", "0", "--subagents", "--sort", "cost")
    costs = [entry["cost"]["dollars"] for entry in json.loads(out)["sessions"]]
    assert code == code_listed == 0 and len(costs) > 300
    assert sum(cost for cost in costs if cost is not None) == pytest.approx(report["dollars"], abs=0.01)
    assert costs.count(None) == report["sessions_unpriced"] + report["sessions_without_usage"]
    priced = [cost for cost in costs if cost is not None]
    assert priced == sorted(priced, reverse=True) and costs[-1] is None and costs.index(None) == len(priced)
