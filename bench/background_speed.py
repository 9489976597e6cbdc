"""The first report after install, with the background pass before it (issue 24, part 1).

On a big history (default 1.2 GB: the corpus's transcripts copied under new names, their texts and ids
marked per copy so no text repeats across copies, as bench/report_speed.py builds its yardstick), as a user
has it: Claude Code's history at $CLAUDE_CONFIG_DIR, nothing else in $HOME, a new state folder. Measured in
one run:
  - ccusage `daily --offline` on the same history (`--ccusage PATH`, else `ccusage` on PATH), what we compare with;
  - the background pass exactly as the SessionStart hook's detached process runs it (lowest CPU priority,
    idle I/O, one worker): its wall time, CPU and peak memory, while nothing else competes (an upper bound
    on its cost: at low priority it only takes what the machine leaves idle);
  - then the first `/exploration-share` (`xshare slash`, the report it shows): wall and peak, against
    ccusage's wall (goal <= 0.5x, issue 34) and a warm report after it;
  - for scale: a cold report with no pass before it (what the first report cost before), unless --no-cold.

    nice python bench/background_speed.py [--big-gb N] [--corpus DIR] [--ccusage PATH] [--runs N] [--no-cold]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import DEFAULT_CORPUS, build_big, compile_package, jsonl_bytes, process_tree, roots_of  # noqa: E402

REPO = Path(__file__).resolve().parents[1]

# the detached process's own code (xshare.live.background.start), run in the foreground to be timed
_PASS = "import sys; sys.path.insert(0, sys.argv[1]); from xshare.live.background import main; sys.exit(main())"


def measured(command: list[str], env: dict) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds and peak MB of one process tree."""
    wall, cpu, peak, code, stderr = process_tree(command, env)
    if code != 0:
        sys.exit(f"{command[2:4]} failed ({code}): {stderr[-2000:]}")
    return wall, cpu, peak


def user_env(roots: list[Path], home: Path, state: Path) -> dict:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("XSHARE_", "HERMES_", "CODEX_"))}
    return {**env, "HOME": str(home), "CLAUDE_CONFIG_DIR": ",".join(str(root) for root in roots),
            "XSHARE_HOME": str(state), "NO_COLOR": "1", "XSHARE_WORKER": "0"}


def ccusage_wall(ccusage: str | None, env: dict) -> float | None:
    if not ccusage:
        return None
    started = time.perf_counter()
    done = subprocess.run([ccusage, "daily", "--offline", "--json"], env=env, capture_output=True)
    return time.perf_counter() - started if done.returncode == 0 else None


def one_run(roots: list[Path], ccusage: str | None, cold: bool = True) -> dict:
    """One fresh user's machine: the background pass, the first report after it, a warm one, (a cold one
    with no pass before it,) and ccusage's wall: (wall, CPU, peak MB) of each, ccusage's wall alone."""
    slash = [sys.executable, "-m", "xshare", "slash", "--", "--all"]
    with tempfile.TemporaryDirectory() as folder:
        home, state = Path(folder) / "home", Path(folder) / "state"
        home.mkdir()
        env = user_env(roots, home, state)
        found = {"pass": measured([sys.executable, "-c", _PASS, str(REPO)], env)}
        if not (state / "cache" / "background.json").exists():
            sys.exit(f"the background pass did not finish: {(state / 'logs' / 'hook.log').read_text()[-2000:]}")
        found["first"] = measured(slash, env)
        found["warm"] = measured(slash, env)
        if cold:
            shutil.rmtree(state)
            found["cold"] = measured(slash, env)
        found["ccusage"] = ccusage_wall(ccusage, env)
    return found


def median(runs: list[dict], key: str, index: int) -> float:
    return statistics.median(run[key][index] for run in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--big-gb", type=float, default=1.2)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--ccusage", default=shutil.which("ccusage"), help="path of the ccusage binary")
    parser.add_argument("--no-cold", action="store_true", help="skip the cold report without a pass before it")
    args = parser.parse_args()
    compile_package()
    with tempfile.TemporaryDirectory(prefix="xshare-big-") as folder:
        roots = build_big(roots_of(args.corpus), Path(folder), args.big_gb, distinct=True)
        size_gb = jsonl_bytes(roots) / 1e9
        runs = [one_run(roots, args.ccusage, not args.no_cold) for _ in range(args.runs)]
    theirs = [run["ccusage"] for run in runs]
    ccusage = statistics.median(theirs) if None not in theirs else None
    print(f"history {size_gb:.2f} GB of Claude Code transcripts; {args.runs} run(s), medians")
    print("ccusage daily --offline: " + (f"{ccusage:.2f} s" if ccusage else "not installed here (--ccusage PATH)"))
    wall, cpu, peak = (median(runs, "pass", i) for i in range(3))
    print(f"background pass (nice 19, idle I/O, one worker), nothing competing: wall {wall:.1f} s, CPU {cpu:.1f} s, "
          f"peak {peak:.0f} MB")
    for key, label in (("first", "first /exploration-share after the pass"), ("warm", "the one after it (warm)"),
                       ("cold", "a first one with no pass before it (cold)")):
        if key not in runs[0]:
            continue
        wall, cpu, peak = (median(runs, key, i) for i in range(3))
        versus = f"; / ccusage wall {wall / ccusage:.2f} (goal for the first: <= 0.5)" if ccusage else ""
        print(f"{label}: wall {wall:.2f} s, CPU {cpu:.2f} s, peak {peak:.0f} MB{versus}")

if __name__ == "__main__":
    main()
