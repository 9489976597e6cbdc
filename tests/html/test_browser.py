"""The HTML summary in a real headless browser (Debian's chromium): it loads with no console message and
no request outside the file, its script runs under the page's Content-Security-Policy, and a screenshot
is not blank. Skipped when no chromium binary is installed (`apt-get install chromium`)."""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest
from claude_pages import claude_looking, write_claude_page  # tests/support/ is on sys.path

from tests.html.test_pages import hostile_transcript
from xshare.agents.claude_code.transcript import describe, discover
from xshare.demo import write_demo_corpus
from xshare.html import write as xhtml
from xshare.measure import tokens

CHROMIUM = next((found for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
                 if (found := shutil.which(name))), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary (apt-get install chromium)")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars", "--mute-audio")
# chromium logs every console message (errors, CSP violations, uncaught exceptions) as INFO:CONSOLE
CONSOLE = re.compile(r":CONSOLE[(:]")


class Run:
    def __init__(self, stdout: str, stderr: str, netlog: Path) -> None:
        self.stdout, self.stderr, self.netlog = stdout, stderr, netlog

    def console(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if CONSOLE.search(line)]

    def page_requests(self) -> list[str]:
        """URLs the page asked for that are not the file itself. The browser's own background requests
        (update checks, sign-in) are not the page's: their initiator is 'not an origin'."""
        log = json.loads(self.netlog.read_text(encoding="utf-8"))
        begin = log["constants"]["logEventPhase"]["PHASE_BEGIN"]
        start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
        found = []
        for event in log["events"]:
            params = event.get("params") or {}
            if event["type"] == start and event.get("phase") == begin and "url" in params:
                if params.get("initiator") != "not an origin" and not params["url"].startswith("file:"):
                    found.append(params["url"])
        return found


def chromium(tmp_path: Path, page: Path, *extra: str) -> Run:
    runs = len(list(tmp_path.glob("profile-*")))
    profile, netlog = tmp_path / f"profile-{runs}", tmp_path / f"netlog-{runs}.json"
    command = [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
               f"--log-net-log={netlog}", *extra, page.resolve().as_uri()]
    done = subprocess.run(command, capture_output=True, timeout=120)
    return Run(done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace"), netlog)


def pixels(png: Path) -> tuple[int, int, list[bytes], int]:
    """Decode an 8-bit RGB or RGBA PNG with the standard library: width, height, rows, bytes per pixel."""
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    position, idat, header = 8, b"", None
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position:position + 8])
        body = data[position + 8:position + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        position += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0
    step = 3 if color == 2 else 4
    raw, stride = zlib.decompress(idat), width * step
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride) if kind else ():
            left = line[x - step] if x >= step else 0
            up, corner = previous[x], previous[x - step] if x >= step else 0
            if kind == 1:
                line[x] = (line[x] + left) & 255
            elif kind == 2:
                line[x] = (line[x] + up) & 255
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 255
            else:
                guess = left + up - corner
                a, b, c = abs(guess - left), abs(guess - up), abs(guess - corner)
                line[x] = (line[x] + (left if a <= b and a <= c else up if b <= c else corner)) & 255
        rows.append(bytes(line))
        previous = line
    return width, height, rows, step


@pytest.fixture
def pages(tmp_path: Path) -> dict[str, Path]:
    """The richest demo session's page (with its subagents' pages), the index, and a hostile page."""
    root = write_demo_corpus(tmp_path / "claude")
    files = discover([root])
    choice = tokens.choose()
    richest = max((f for f in files if f.source == "interactive"), key=lambda f: f.path.stat().st_size)
    out = tmp_path / "pages"
    index, _ = xhtml.write_index(claude_looking([str(root)], choice), out / "index.html")
    page = out / xhtml.page_name(richest.session_id)
    hostile = describe(hostile_transcript(tmp_path / "hostile"))
    bad = write_claude_page(hostile, choice, out / "hostile.html")
    return {"session": page, "index": index, "hostile": bad}


def test_pages_load_with_no_console_message_and_no_request(pages: dict[str, Path], tmp_path: Path):
    for name, page in pages.items():
        run = chromium(tmp_path, page, "--dump-dom")
        assert run.console() == [], name
        assert run.page_requests() == [], name
        assert "</main>" in run.stdout, name  # the whole page was parsed
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in chromium(tmp_path, pages["hostile"], "--dump-dom").stdout


def test_the_weights_script_runs_under_the_policy(pages: dict[str, Path], tmp_path: Path):
    """Start the page with a cache-read weight of 0.2: the script must recompute the compaction card."""
    source = pages["session"].read_text(encoding="utf-8")
    assert 'id="w-cache_read" value="0.1"' in source
    variant = pages["session"].with_name("variant.html")
    variant.write_text(source.replace('id="w-cache_read" value="0.1"', 'id="w-cache_read" value="0.2"'),
                       encoding="utf-8")
    card = re.search(r'data-w5="(\d+)" data-w1h="(\d+)" data-saved="(-?\d+)" data-followed="(\d+)"', source)
    write_5m, write_1h, saved, _ = map(int, card.groups())
    assert saved > 0
    written = re.search(r'class="save">([^<]*)<', source).group(1)
    assert written == f"{round(saved * 0.1):,}"
    run = chromium(tmp_path, variant, "--dump-dom")
    assert run.console() == []
    assert re.search(r'class="save">([^<]*)<', run.stdout).group(1) == f"{round(saved * 0.2):,}"


def test_the_checks_catch_a_page_that_loads_something(tmp_path: Path):
    leaky = tmp_path / "leaky.html"
    leaky.write_text('<!DOCTYPE html><meta charset="utf-8"><title>x</title><img src="https://example.invalid/x.png">'
                     '<script>console.error("caught")</script>', encoding="utf-8")
    run = chromium(tmp_path, leaky, "--dump-dom")
    assert any("caught" in line for line in run.console())
    assert run.page_requests() == ["https://example.invalid/x.png"]


@pytest.mark.parametrize("width", [1280, 390])
def test_a_screenshot_is_not_blank(pages: dict[str, Path], tmp_path: Path, width: int):
    shot = tmp_path / f"shot-{width}.png"
    chromium(tmp_path, pages["session"], f"--screenshot={shot}", f"--window-size={width},720")
    columns, height, rows, step = pixels(shot)
    assert columns == width and height == 720
    background = rows[0][:step]
    colours, other = set(), 0
    for row in rows[::4]:
        for x in range(0, len(row), step * 3):
            pixel = row[x:x + step]
            colours.add(pixel)
            other += pixel != background
    sampled = (height // 4) * (width // 3)
    assert len(colours) >= 20 and other / sampled > 0.03
