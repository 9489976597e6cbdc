"""Is the status line current at the end of a turn, and what does `statusLine.refreshInterval` cost?

Drives the real Claude Code TUI ($XSHARE_TEST_CLAUDE) in tmux against tests/support/fake_anthropic.py:
  - staleness: --turns prompts that each read a file; 3 s and 6 s after a turn's last API call, is the
    line still marked `…`? As before (no timer, no catch-up), and with catch-up and each interval;
  - CPU: the status line's own CPU per run (median of --runs isolated runs) times the runs a minute a
    timer adds, and Claude Code's whole CPU (itself and its children) over --idle seconds of an idle TUI
    with no timer and with each --intervals value.

    XSHARE_TEST_CLAUDE=/path/to/claude python bench/statusline_refresh.py [--turns 12] [--idle 30]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests" / "support")]

from claude_host import ClaudeHost, Tmux, claude_missing, status_line, wait_until  # noqa: E402
from fake_anthropic import FakeAnthropic  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def install(host: ClaudeHost, refresh: int | None, catch_up: bool) -> None:
    subprocess.run([sys.executable, "-m", "xshare", "statusline", "install"], env=host.env, check=True,
                   capture_output=True)
    settings_path = host.config / "settings.json"
    settings = json.loads(settings_path.read_text())
    if not catch_up:
        settings["statusLine"]["command"] += " --no-catch-up"
    if refresh is None:
        settings["statusLine"].pop("refreshInterval", None)
    else:
        settings["statusLine"]["refreshInterval"] = refresh
    settings_path.write_text(json.dumps(settings))
    host.trust_project()


def session(root: Path, refresh: int | None, catch_up: bool):
    fake = FakeAnthropic(lifetime=1800).start()
    host = ClaudeHost(root, fake)
    (host.project / "notes.txt").write_text("".join(f"line {n} of the notes\n" for n in range(200)))
    install(host, refresh, catch_up)
    tui = Tmux(host)
    tui.start()
    tui.wait_for(lambda screen: status_line(screen), timeout=30)
    return fake, host, tui


def staleness(root: Path, turns: int, refresh: int | None, catch_up: bool) -> list[int]:
    """Of `turns` turns, how many end with the line still marked `…` 3 s and 6 s after the last API call."""
    fake, host, tui = session(root, refresh, catch_up)
    behind = [0, 0]
    try:
        for _ in range(turns):
            before = len(fake.requests)
            tui.type(f"XREAD {host.project / 'notes.txt'}")
            wait_until(lambda before=before: len(fake.requests) >= before + 2, timeout=60)
            for index in range(2):
                time.sleep(3)
                behind[index] += "…" in status_line(tui.screen())
    finally:
        tui.stop()
        fake.stop()
    return behind


def process_cpu(pid: int) -> float:
    """CPU seconds of a process and the children it has waited for."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(value) for value in fields[11:15]) / TICKS


def idle_cpu(root: Path, refresh: int | None, seconds: float) -> float:
    """Claude Code's CPU (itself and its status-line runs) per minute while the TUI sits idle."""
    fake, host, tui = session(root, refresh, catch_up=True)
    try:
        tui.type(f"XREAD {host.project / 'notes.txt'}")  # a saved row to render, as in a real session
        wait_until(lambda: len(fake.requests) >= 2, timeout=60)
        time.sleep(3)
        pid = tui.pid()
        start = process_cpu(pid)
        time.sleep(seconds)
        return (process_cpu(pid) - start) * 60 / seconds
    finally:
        tui.stop()
        fake.stop()


def statusline_run_cpu(root: Path, runs: int) -> float:
    """Median CPU seconds of one status-line run on a saved row (no catch-up needed)."""
    payload = json.dumps({"session_id": "bench", "transcript_path": str(root / "none.jsonl")}).encode()
    costs = []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, "-I", "-S", str(REPO / "statusline" / "statusline.py")], input=payload,
                       capture_output=True, env={"XSHARE_HOME": str(root / "xshare-home")}, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        costs.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return statistics.median(costs)


def cpu(root: Path, args: argparse.Namespace) -> None:
    per_run = statusline_run_cpu(root, args.runs)
    print(f"status line, one run: {per_run * 1000:.1f} ms CPU")
    for interval in args.intervals:
        print(f"  refreshInterval {interval} s: +{per_run * 60 / interval:.2f} s CPU per minute "
              f"({per_run / interval:.1%} of a core)")
    for refresh in [None, *args.intervals]:
        per_minute = idle_cpu(root / f"idle-{refresh}", refresh, args.idle)
        print(f"idle TUI, refreshInterval {refresh}: {per_minute:.2f} s CPU per minute "
              f"({per_minute / 60:.1%} of a core)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=12)
    parser.add_argument("--idle", type=float, default=30.0)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--intervals", type=int, nargs="*", default=[1, 2, 5])
    parser.add_argument("--no-cpu", action="store_true", help="only the staleness counts")
    args = parser.parse_args()
    if claude_missing():
        print(claude_missing(), file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="xshare-refresh-") as scratch:
        root = Path(scratch)
        os.environ.setdefault("XSHARE_HOME", str(root / "xshare-home"))
        if not args.no_cpu:
            cpu(root, args)
        for refresh, catch_up in [(None, False), *((interval, True) for interval in args.intervals)]:
            label = f"refreshInterval {refresh}, catch-up" if catch_up else "before (no timer, no catch-up)"
            at_3, at_6 = staleness(root / f"turns-{refresh}", args.turns, refresh, catch_up)
            print(f"{label}: line behind after {at_3} of {args.turns} turns at 3 s, {at_6} at 6 s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
