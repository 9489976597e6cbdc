"""How fast the Claude Code reader turns transcripts into ledgers, with counting taken out (issue 11).

Once text counts are remembered across runs, this is the floor of a cold exact report. One thread, over
one corpus (default ../shared/corpus/claude, every root), min of N runs (wall and process CPU):
  - bytes: reading every file;
  - orjson: reading, splitting into lines and `orjson.loads` of every line (the floor under the floor);
  - reader: `ClaudeTranscript(file, count, ...).catch_up()` on every file, where count stands in for a
    remembered count (chars/4: an int per text, so the ledger holds and trims context as it does with
    real counts; `--zero` counts 0, which leaves the ledger nothing to hold), the shell-command
    classifier's cache (classify.py, per process) warm after the first run, as in the min of N;
  - cold: the same with that cache emptied before each run, as in a fresh `xshare report` process;
and the reader's own cost per line and per GB on top of orjson.

    python bench/reader_speed.py [--corpus DIR] [--runs N] [--profile]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

from common import Counted, parse_every_line  # bench/, the folder this script runs from

from xshare.agents.claude_code import transcript as claude
from xshare.measure import classify

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus" / "claude"


def transcripts(corpus: Path) -> list[claude.TranscriptFile]:
    roots = [corpus] if (corpus / "projects").is_dir() else sorted(p for p in corpus.iterdir() if p.is_dir())
    return claude.discover([claude.resolve_root(root) for root in roots])


def read_bytes(files: list[claude.TranscriptFile]) -> int:
    return sum(len(file.path.read_bytes()) for file in files)


def parse_lines(files: list[claude.TranscriptFile]) -> int:
    return parse_every_line(file.path for file in files)


def remembered(text: str) -> int:
    return (len(text) + 3) >> 2


def zero(text: str) -> int:
    return 0


def read_ledgers(files: list[claude.TranscriptFile], count: Callable[[str], int] = remembered) -> int:
    for file in files:
        claude.ClaudeTranscript(file, Counted(count, "none")).catch_up()
    return len(files)


def read_ledgers_cold(files: list[claude.TranscriptFile], count: Callable[[str], int] = remembered) -> int:
    classify._explain.cache_clear()  # every shell command lexed again, as in a new process
    return read_ledgers(files, count)


def best_of(runs: int, step: Callable[[], int]) -> tuple[float, float, int]:
    """Min wall seconds, min process CPU seconds, and what the step returned."""
    walls, cpus, result = [], [], 0
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        result = step()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--zero", action="store_true", help="count every text as 0 tokens (the ledger holds nothing)")
    parser.add_argument("--profile", action="store_true", help="cProfile one reader pass, top 25 by own time")
    args = parser.parse_args()
    files = transcripts(args.corpus)
    count = zero if args.zero else remembered
    if not files:
        raise SystemExit(f"no transcripts under {args.corpus}")
    if args.profile:
        import cProfile
        import pstats

        profile = cProfile.Profile()
        profile.runcall(read_ledgers, files, count)
        pstats.Stats(profile).sort_stats("tottime").print_stats(25)
        return
    size = read_bytes(files)
    print(f"corpus: {len(files)} transcripts, {size / 1e6:.1f} MB; one thread, min of {args.runs}; "
          f"counts: {'0' if args.zero else 'chars/4 (as remembered)'}")
    steps = (("bytes", read_bytes), ("orjson", parse_lines), ("reader", read_ledgers), ("cold", read_ledgers_cold))
    results = {name: best_of(args.runs, lambda step=step: step(files) if step in (read_bytes, parse_lines)
                             else step(files, count)) for name, step in steps}
    lines = results["orjson"][2]
    for name, (wall, cpu, _) in results.items():
        print(f"{name:7} wall {wall:.3f} s  cpu {cpu:.3f} s  = {cpu / size * 1e9:.2f} s/GB  "
              f"{cpu / lines * 1e6:.1f} us/line")
    extra = results["reader"][1] - results["orjson"][1]
    print(f"reader over orjson: {extra:.3f} s cpu = {extra / lines * 1e6:.1f} us/line, "
          f"{extra / size * 1e9:.2f} s/GB ({lines:,} lines)")


if __name__ == "__main__":
    main()
