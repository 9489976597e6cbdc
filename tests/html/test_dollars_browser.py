"""The pages' dollars laid out in a real headless Chromium (issue 30): at a phone's width and a desktop's,
the session page's dollar tile and line and the index's $ column are on screen, and nothing makes the page
wider than the window. Skipped when no chromium binary is installed (`apt-get install chromium`)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from claude_pages import claude_looking  # tests/support/ is on sys.path

from tests.html.test_browser import CHROMIUM, chromium
from xshare.agents.claude_code.transcript import discover
from xshare.demo import write_demo_corpus
from xshare.html import write as xhtml
from xshare.measure import tokens
from xshare.measure.prices import shipped

NARROW = 500  # headless Chromium's narrowest window; the page's phone layout starts at 760 pixels
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary (apt-get install chromium)")
# run after layout, in a copy of the page whose policy lets it run: what sticks out of the window, and where
# the dollars are drawn (a cell inside a scrolling table box may lie beyond the window: the box scrolls)
MEASURE = """<script>
const box = (el) => { if (!el) return null; const r = el.getBoundingClientRect();
  return {left: r.left, right: r.right, width: r.width, visible: r.width > 0 && r.height > 0,
          clipped: el.scrollWidth > el.clientWidth + 1}; };
const out = {window: innerWidth, page: document.documentElement.scrollWidth,
  wide: [...document.querySelectorAll("body *")].filter((el) => !el.closest(".scroll, svg"))
        .filter((el) => el.getBoundingClientRect().right > innerWidth + 1).map((el) => el.tagName + "." + el.className),
  tile: box(document.getElementById("row-dollars")?.closest(".tile")),
  fact: box([...document.querySelectorAll(".facts dt")].find((dt) => dt.textContent === "Dollars")?.nextElementSibling),
  column: box([...document.querySelectorAll("table.sessions th")].find((th) => th.textContent === "$"))};
const pre = document.createElement("pre"); pre.id = "measured"; pre.textContent = JSON.stringify(out);
document.body.append(pre);
</script>"""


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The demo's index and its richest session's page, priced at the shipped table, as measurable copies."""
    tmp = tmp_path_factory.mktemp("pages")
    root = write_demo_corpus(tmp / "claude")
    files = discover([root])
    richest = max((f for f in files if f.source == "interactive"), key=lambda f: f.path.stat().st_size)
    index, _ = xhtml.write_index(claude_looking([str(root)], tokens.choose(estimate=True, remember=False)),
                                 tmp / "out" / "index.html", prices=shipped())
    found = {"session": index.with_name(xhtml.page_name(richest.session_id)), "index": index}
    return {name: measurable(page) for name, page in found.items()}


def measurable(page: Path) -> Path:
    source = page.read_text(encoding="utf-8")
    source = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>\n', "", source)
    copy = page.with_name(f"measured-{page.name}")
    copy.write_text(source.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    return copy


def measured(tmp_path: Path, page: Path, width: int) -> dict:
    run = chromium(tmp_path, page, "--dump-dom", f"--window-size={width},900")
    found = re.search(r'<pre id="measured">(.*?)</pre>', run.stdout)
    assert found, run.stderr[-2000:]
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))


@pytest.mark.parametrize("width", [NARROW, 1280])
def test_the_session_pages_dollars_are_on_screen_and_nothing_overflows(pages, tmp_path, width):
    layout = measured(tmp_path, pages["session"], width)
    assert layout["window"] == width
    assert layout["page"] <= width and layout["wide"] == []
    for part in ("tile", "fact"):
        drawn = layout[part]
        assert drawn and drawn["visible"] and 0 <= drawn["left"] and drawn["right"] <= width, part
        assert not drawn["clipped"], part


@pytest.mark.parametrize("width", [NARROW, 1280])
def test_the_indexs_dollar_column_shows_at_every_width_and_the_page_does_not_overflow(pages, tmp_path, width):
    layout = measured(tmp_path, pages["index"], width)
    assert layout["page"] <= width and layout["wide"] == []
    assert layout["column"] and layout["column"]["visible"]  # not among the columns a phone hides


def test_the_measure_catches_a_page_wider_than_the_window(pages, tmp_path):
    wide = pages["session"].with_name("wide.html")
    wide.write_text(pages["session"].read_text(encoding="utf-8").replace(
        "<main>", '<main><p style="width:900px">too wide</p>', 1), encoding="utf-8")
    layout = measured(tmp_path, wide, NARROW)
    assert layout["page"] > NARROW and layout["wide"]
