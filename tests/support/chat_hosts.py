"""What the OpenCode and OpenClaw real-host tests share: a project to work in, xshare's rows of what the agent
recorded (`xshare report --rows`, run as a user runs it), waiting for what is asserted on, and the comparison
with the fake server's log (tests/support/fake_openai.py billing each request its exact o200k count, counted by
tests/support/chat_wire.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from fake_openai import FakeOpenAI, Reply

TOLERANCE = 0.001  # 0.1 percentage point: arguments as sent vs as stored differ by a few tokens at most
FILES = {
    "app.py": "def main():\n    return 42\n\n\nif __name__ == '__main__':\n    print(main())\n",
    "notes.txt": "alpha\nbeta\ngamma: the third letter\n",
    "src/lib.py": "".join(f"def helper_{index}(value):\n    return value * {index}\n\n" for index in range(40)),
}


def make_project(folder: Path) -> Path:
    for name, text in FILES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def tool(name: str, **arguments: object) -> Reply:
    return Reply(tool_calls=[(name, dict(arguments))])


def wait_until(check: Callable[[], bool], timeout: float = 60.0, every: float = 0.25) -> bool:
    """True once `check()` holds; False when the time is up (the caller's assertion then says what differs)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if check():
                return True
        except Exception:  # noqa: BLE001 - a file half-written by the agent: look again
            pass
        if time.monotonic() > deadline:
            return False
        time.sleep(every)


def xshare_rows(env: dict[str, str], tmp: Path, *sources: str) -> tuple[list[dict], str]:
    """The rows `xshare report --all --rows` writes for these sources, and its stderr."""
    rows = tmp / f"rows-{time.monotonic_ns()}.jsonl"
    found = subprocess.run([sys.executable, "-m", "xshare", "report", "--all", "--json", "--no-history", "--no-cache",
                            "--rows", str(rows), *sources], env=env, capture_output=True, text=True, timeout=300)
    assert found.returncode == 0, found.stderr[-3000:]
    return [json.loads(line) for line in rows.read_text().splitlines() if line.strip()], found.stderr


def compare_with_the_wire(rows: list[dict], fake: FakeOpenAI) -> dict:
    """xshare's calls, bill, cache reads, output and exploration over these rows equal the server's."""
    main = fake.billed("main")
    bill = sum(entry["prompt_tokens"] for entry in main)
    explored = sum(entry["wire"]["exploration"] for entry in main)
    found = {
        "calls": sum(row["api_calls"] for row in rows),
        "prompt": sum(row["prompt_tokens_billed"] for row in rows),
        "cache_read": sum(row["usage"]["cache_read"] for row in rows),
        "output": sum(row["usage"]["output"] for row in rows),
        "exploration": sum(row["billed_tokens"]["exploration"] for row in rows),
    }
    want = {"calls": len(main), "prompt": bill, "cache_read": sum(entry["cached_tokens"] for entry in main),
            "output": sum(entry["completion_tokens"] for entry in main)}
    assert {key: found[key] for key in want} == want, (found, want)
    assert explored > 0 and found["exploration"] > 0
    share, wire_share = found["exploration"] / found["prompt"], explored / bill
    assert abs(share - wire_share) <= TOLERANCE, (found, explored, share, wire_share)
    figures = {**found, "wire_exploration": explored, "share": round(share, 5), "wire_share": round(wire_share, 5)}
    print("xshare vs wire:", figures)  # shown with -s: the figures a run compared
    return figures
