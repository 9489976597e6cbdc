"""A page's layout measured in a real headless Chromium at any width, a phone's too.

Headless Chromium will not open a window narrower than 500 pixels, so `--window-size=390,...` lays a page
out at 500. This drives Chromium over its DevTools pipe (standard library only, as Playwright does under
the hood) and emulates the device instead: `Emulation.setDeviceMetricsOverride` with the width, and for a
phone `mobile` (the page's viewport meta honoured, touch scaling) at a device scale of 3. The measure runs
with `Runtime.evaluate`, outside the page's Content-Security-Policy, so the page is measured as written.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import time
from pathlib import Path

from tests.html.test_browser import CHROMIUM, FLAGS

# What a reader would see stick out: the page's own sideways scroll, every table's box (a table wider than
# its scrolling box is cut at the box's edge), text cut inside a cell, each chart's drawn columns against
# its calls (or periods), and the tallest row of each table in lines of its text.
MEASURE = """(() => {
const width = document.documentElement.clientWidth;
const box = (el) => el.getBoundingClientRect();
const named = (el) => (el.closest("section[id]")?.id || "") + " " + el.tagName.toLowerCase() + "." +
  [...el.classList].join(".");
const tables = [...document.querySelectorAll("table")].map((table) => {
  const rows = [...table.querySelectorAll("tbody tr")].filter((tr) => box(tr).height > 0);
  const line = parseFloat(getComputedStyle(table).lineHeight) || 20;
  const cut = [...table.querySelectorAll("td, th")].filter((cell) => box(cell).width > 0 &&
    (box(cell).right > width + 1 || box(cell).left < -1)).map((cell) => cell.textContent.trim().slice(0, 24));
  const holder = table.parentElement; // a scrolling box cuts a table wider than itself
  return {name: named(table), left: box(table).left, right: box(table).right, cut: cut.slice(0, 6),
          boxed: holder.scrollWidth > holder.clientWidth + 1,
          tallest: Math.max(0, ...rows.map((tr) => box(tr).height)) / line};
});
const overlaps = (svg) => { // labels that run into each other: visible texts on a line less than 4 pixels apart
  const texts = [...svg.querySelectorAll("text")].filter((t) => box(t).width > 0);
  return texts.filter((a, i) => texts.slice(i + 1).some((b) => a.getAttribute("y") === b.getAttribute("y") &&
    box(a).left < box(b).right + 4 && box(b).left < box(a).right + 4)).map((t) => t.textContent); };
const drawn = (svg, items) => items.filter((el) => { const r = box(el);
  return r.width > 0 && r.left >= -1 && r.right <= width + 1; }).length;
const charts = [...document.querySelectorAll("svg.chart")].map((svg) => {
  const hits = [...svg.querySelectorAll("rect.hit")];
  const per = parseInt(svg.dataset.per || "1");
  const calls = parseInt((svg.getAttribute("aria-label").match(/([\\d,]+) calls/) || ["", "0"])[1].replace(/,/g, ""));
  return {kind: "calls", total: calls, shown: Math.min(calls, drawn(svg, hits) * per), overlaps: overlaps(svg),
          left: box(svg).left, right: box(svg).right};
});
const trends = [...document.querySelectorAll("svg.trend")].map((svg) => {
  const periods = [...svg.querySelectorAll('a[href^="#period-"] rect')];
  return {kind: "periods", total: periods.length, shown: drawn(svg, periods), overlaps: overlaps(svg),
          left: box(svg).left,
          right: box(svg).right};
});
const wide = [...document.querySelectorAll("body *")].filter((el) => !el.closest("svg") &&
  box(el).width > 0 && box(el).right > width + 1).map(named);
return {window: width, page: document.documentElement.scrollWidth, tables, charts: charts.concat(trends),
        wide: [...new Set(wide)].slice(0, 12)};
})()"""


class Browser:
    """One headless Chromium spoken to over `--remote-debugging-pipe` (fd 3 in, fd 4 out, NUL-ended JSON)."""

    def __init__(self, profile: Path) -> None:
        to_chrome, self._writer = os.pipe()
        self._reader, from_chrome = os.pipe()
        def onto_3_and_4() -> None:  # in the child, before exec: the two ends where Chromium looks for them
            ends = os.dup(to_chrome), os.dup(from_chrome)
            os.dup2(ends[0], 3)
            os.dup2(ends[1], 4)

        command = [CHROMIUM, *FLAGS, "--remote-debugging-pipe", f"--user-data-dir={profile}", "about:blank"]
        self._process = subprocess.Popen(command, preexec_fn=onto_3_and_4, close_fds=False, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_chrome)
        os.close(from_chrome)
        self._buffer, self._next, self._events = b"", 0, []
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._reader, selectors.EVENT_READ)

    def _message(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            if not self._selector.select(max(0.0, deadline - time.monotonic())):
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self._reader, 1 << 16)
            if not chunk:
                raise ConnectionError("Chromium closed its pipe")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)

    def call(self, method: str, session: str | None = None, timeout: float = 120, **params: object) -> dict:
        self._next += 1
        request = {"id": self._next, "method": method, "params": params}
        if session:
            request["sessionId"] = session
        os.write(self._writer, json.dumps(request).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            message = self._message(deadline)
            if message.get("id") == self._next:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]
            self._events.append(message)

    def wait_for(self, event: str, session: str, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if any(m.get("method") == event and m.get("sessionId") == session for m in self._events):
                self._events.clear()
                return
            self._events.append(self._message(deadline))

    def measure(self, page: Path, width: int, phone: bool = False, expression: str = MEASURE) -> dict:
        """The page laid out `width` CSS pixels wide (a phone: mobile, at a device scale of 3), measured."""
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.call("Emulation.setDeviceMetricsOverride", session, width=width, height=900 if not phone else 844,
                  deviceScaleFactor=3 if phone else 1, mobile=phone)
        self.call("Page.enable", session)
        self.call("Page.navigate", session, url=page.resolve().as_uri())
        self.wait_for("Page.loadEventFired", session)
        found = self.call("Runtime.evaluate", session, expression=expression, returnByValue=True)
        self.call("Target.closeTarget", targetId=target)
        return found["result"]["value"]

    def close(self) -> None:
        try:
            self.call("Browser.close", timeout=30)
        except (ConnectionError, TimeoutError, OSError):
            pass
        try:
            self._process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._selector.close()
        os.close(self._reader)
        os.close(self._writer)
