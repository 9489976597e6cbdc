"""Dollars on the pages (issue 30): the session page's header (a tile and a line naming the table and its
date), the index's $ column per session and each week's dollars; each from `prices.row_cost`, "unknown" (never
$0.00) for the demo's session on a model with no list price, none when dollars are turned off, and pages
written again when the prices change."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from claude_pages import claude_data, claude_looking, write_claude_page  # tests/support/ is on sys.path

from tests.commands.test_cli import run
from xshare.agents.claude_code.transcript import discover
from xshare.demo import write_demo_corpus
from xshare.html import write as xhtml
from xshare.measure import tokens
from xshare.measure.prices import load, row_cost, shipped
from xshare.measure.timestamps import session_time
from xshare.report.dollars import money
from xshare.report.periods import period_of
from xshare.report.session_dollars import cost_cell, exploration_dollars

UNPRICED_MODEL = "qwen3-coder-30b-local"  # the demo's gateway session: a self-hosted model, no list price
SHIPPED = shipped()


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The demo's transcripts and each session's row, as its page measures it."""
    root = write_demo_corpus(tmp_path_factory.mktemp("demo") / "claude")
    choice = tokens.choose(estimate=True, remember=False)
    files = discover([root])
    rows = {file.session_id: claude_data(file, choice).row for file in files}
    return {"root": root, "choice": choice, "files": files, "rows": rows}


def page_of(demo: dict, tmp_path: Path, model_is_priced: bool, prices=SHIPPED) -> tuple[str, dict]:
    file = max((f for f in demo["files"] if f.source == "interactive"
                and (demo["rows"][f.session_id]["model"] != UNPRICED_MODEL) == model_is_priced),
               key=lambda f: f.path.stat().st_size)
    path = write_claude_page(file, demo["choice"], tmp_path / "page.html", prices=prices)
    return path.read_text(encoding="utf-8"), demo["rows"][file.session_id]


def fact(page: str, name: str) -> str:
    found = re.search(rf"<dt>{name}</dt><dd>(.*?)</dd>", page)
    return html.unescape(re.sub(r"<[^>]+>", "", found.group(1))) if found else ""


def test_the_session_pages_header_says_its_dollars_and_the_table_that_priced_them(demo, tmp_path):
    page, row = page_of(demo, tmp_path, model_is_priced=True)
    priced = row_cost(row, shipped())
    assert priced.dollars > 1
    assert f'<data id="row-dollars" value="{priced.dollars!r}">{money(priced.dollars)}</data>' in page
    assert fact(page, "Dollars") == (
        f"{money(priced.dollars)} at xshare's list prices of {shipped().date}: the prompt "
        f"{money(priced.prompt_dollars)}, exploration {money(exploration_dollars(row, priced))}")
    assert "token counts only, no prices" not in page


def test_a_page_on_a_model_with_no_price_says_unknown_never_zero(demo, tmp_path):
    page, row = page_of(demo, tmp_path, model_is_priced=False)
    assert row["model"] == UNPRICED_MODEL and row["api_calls"] > 0
    assert '<data id="row-dollars" value="">unknown</data>' in page and "$0.00" not in page
    assert fact(page, "Dollars") == f"unknown: no list price for {UNPRICED_MODEL} (xshare's list prices of " \
                                    f"{shipped().date})"


def test_a_prices_file_prices_that_page_and_says_so(demo, tmp_path):
    prices_file = tmp_path / "prices.json"
    prices_file.write_text(json.dumps({"date": "2026-11-30", "models": {UNPRICED_MODEL: {"input": 0.6,
                                                                                        "output": 2.2}}}))
    table = load(str(prices_file))
    page, row = page_of(demo, tmp_path, model_is_priced=False, prices=table)
    assert fact(page, "Dollars").startswith(f"{money(row_cost(row, table).dollars)} at xshare's list prices of "
                                            f"{shipped().date}, with 1 model priced by your --prices file (2026-11-30)")


def test_no_dollars_on_the_page_when_turned_off(demo, tmp_path):
    page, _ = page_of(demo, tmp_path, model_is_priced=True, prices=None)
    assert 'id="row-dollars"' not in page and "<dt>Dollars</dt>" not in page and "$" not in re.sub(
        r"<script>.*?</script>|<style>.*?</style>", "", page, flags=re.S)


def test_the_index_prices_each_session_and_each_week(demo, tmp_path):
    index, _ = xhtml.write_index(claude_looking([str(demo["root"])], demo["choice"]), tmp_path / "index.html",
                                 prices=shipped())
    page = index.read_text(encoding="utf-8")
    assert f"$: xshare's list prices of {shipped().date}." in page
    cells = {session: re.findall(r'<td class="n">([^<]*)</td>', body)[-1]  # the last figure: the $ column
             for session, body in re.findall(r'<tr class="[^"]*" data-session="([^"]+)">(.*?)</tr>', page)}
    assert set(cells) == set(demo["rows"])
    for session, cell in cells.items():
        assert html.unescape(cell) == cost_cell(row_cost(demo["rows"][session], shipped())), session
    assert "unknown" in cells.values() and "$0.00" not in cells.values()
    weeks: dict[str, list[dict]] = {}
    for row in demo["rows"].values():
        if row["source"] == "interactive":
            weeks.setdefault(period_of(session_time(row["started_at"]), "week"), []).append(row)
    for week, members in weeks.items():
        summary = re.search(rf'<details id="period-{week}"><summary>(.*?)</summary>', page).group(1)
        costs = [row_cost(row, shipped()).dollars for row in members]
        if all(cost is None for cost in costs):
            assert "dollars unknown" in summary, week
        else:
            total = money(sum(cost for cost in costs if cost is not None)) + ("+" if None in costs else "")
            assert f'<span class="cost">{total}</span> at list price' in summary, week


def test_pages_are_written_again_when_the_prices_change(demo, tmp_path):
    out = tmp_path / "index.html"
    _, first = xhtml.write_index(claude_looking([str(demo["root"])], demo["choice"]), out, prices=None)
    page = next(path for path in tmp_path.glob("*.html") if path.name != "index.html")
    assert first and 'id="row-dollars"' not in page.read_text(encoding="utf-8")
    _, again = xhtml.write_index(claude_looking([str(demo["root"])], demo["choice"]), out, prices=None)
    _, priced = xhtml.write_index(claude_looking([str(demo["root"])], demo["choice"]), out, prices=shipped())
    assert again == 0 and priced == first and 'id="row-dollars"' in page.read_text(encoding="utf-8")
    assert '<th class="n" title="at list price">$</th>' in out.read_text(encoding="utf-8")


def test_the_html_command_takes_prices_and_no_dollars(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("XSHARE_DOLLARS", "on")
    code, out, _ = run(capsys, "html", "--demo", "--estimate")
    assert code == 0 and 'id="row-dollars"' in Path(out.strip()).read_text(encoding="utf-8")
    code, out, _ = run(capsys, "html", "--demo", "--estimate", "--no-dollars")
    assert code == 0 and 'id="row-dollars"' not in Path(out.strip()).read_text(encoding="utf-8")
    bad = tmp_path / "prices.json"
    bad.write_text("{not json")
    code, out, err = run(capsys, "html", "--demo", "--estimate", "--prices", str(bad))
    assert code == 2 and out == "" and err.count("\n") == 1 and "the --prices file is not JSON" in err
