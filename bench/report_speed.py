"""How fast `xshare report` is on a real-sized history, beside ccusage in the same run, and issue 34's goals.

The yardstick (issue 34): a history of --big-gb GB (default 1.2) built in a temporary folder from the corpus
(default ../shared/corpus/claude, every root), whose copies share no text and no ids: every copy's message texts
and tool results start with a mark of its own and its ids are its own (bench/common.py build_big, distinct).
Texts that repeat across copies would flatter counting, which counts each distinct text once. On it, in one run:
  - cold exact reports (--no-cache, the default counter choice: no $XSHARE_COUNTER, as a user runs it) and
    ccusage `daily --offline` (`--ccusage PATH`, else `ccusage` on PATH; see ../shared/docs/peers.md): wall,
    CPU (user + system, every process) and peak memory of each;
  - cold reports with each counter forced (tiktoken, fastokens), for what the default choice gains;
  - the rows cache deleted and the count store kept (what a report after an xshare upgrade costs), then warm
    re-runs (everything cached);
  - the first report after install: the plugin's background pass (bench/background_speed.py), then the first
    `/exploration-share`, against ccusage's wall;
  - the floor (bench/cold_floor.py): what the cold report's CPU rests on that no change to xshare's own code
    removes (fastokens' load, counting the distinct texts, parsing every line), and what is left for that code;
  - the crossover: where fastokens (longer load, faster per byte) beats tiktoken, measured on the texts of the
    first --crossover-copies copies, as MB of distinct text and of transcripts per worker, against the
    constants xshare uses (FAST_MIN_TEXT_BYTES, TEXT_SHARE).
Also: the status line and the idle hook (bench/live_speed.py's goals(), on a --live-size-mb session); the corpus
alone (tiktoken's limit, cold, --estimate, counts known, warm, the parallel efficiency); and, labelled as
flattering, a history as big made of plain copies (texts repeat): cold exact vs ccusage.

Issue 34's goals, judged in the summary (met / NOT met): cold exact CPU <= 3x ccusage's, first report after the
background pass <= 0.5x ccusage's wall, warm report <= 0.2 s (all on the yardstick), peak memory of any
process <= 400 MB, the status line and the hook as bench/live_speed.py's goals. Earlier goals (issue 11) on
the corpus: cold >= 0.8x the tokenizer's limit, --estimate >= 100 MB/s.

    python bench/report_speed.py [--corpus DIR] [--runs N] [--ccusage PATH] [--big-gb N] [--skip PART,...]

About 15 minutes on 2 cores with --runs 3; --skip leaves parts out (corpus, copies, counters, floor, install,
crossover, live; --big-gb 0 leaves out every big history).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cold_floor  # noqa: E402  (beside this file)
from common import (  # noqa: E402
    DEFAULT_CORPUS,
    DEFAULT_VOCAB,
    build_big,
    compile_package,
    distinct_texts,
    jsonl_bytes,
    load_cpu,
    process_tree,
    roots_of,
    spread,
)

PARTS = ("corpus", "copies", "counters", "floor", "install", "crossover", "live")
CPU: dict[str, list[float]] = {}  # the CPU seconds of the runs, by what was run (cold, ccusage, ...)


@dataclass
class Goal:
    issue: int
    what: str
    measured: float
    bound: float
    unit: str
    at_least: bool = False

    def met(self) -> bool:
        return self.measured >= self.bound if self.at_least else self.measured <= self.bound


GOALS: list[Goal] = []


def goal(issue: int, what: str, measured: float, bound: float, unit: str, at_least: bool = False) -> None:
    """A goal of an issue (at most `bound`, or at least), for the summary at the end."""
    GOALS.append(Goal(issue, what, measured, bound, unit, at_least))


def summary(skipped: list[str]) -> None:
    for issue in sorted({found.issue for found in GOALS}, reverse=True):
        print(f"goals   issue {issue}")
        for found in (each for each in GOALS if each.issue == issue):
            print(f"  {'met' if found.met() else 'NOT met':7} {found.what}: {found.measured:.3g}{found.unit} "
                  f"(goal {'>=' if found.at_least else '<='} {found.bound:g}{found.unit})")
    if skipped:
        print(f"goals   not judged in this run: {', '.join(skipped)}")


def tokenizer_limit(roots: list[Path]) -> tuple[float, list[str], int, float]:
    """Seconds tiktoken alone needs for the distinct texts xshare counts (and the texts and their bytes),
    and seconds the reader needs on one thread to find them with no counting at all: the parse floor."""
    from xshare.measure import tokens

    parse_started = time.perf_counter()
    texts = distinct_texts(roots)
    parse = time.perf_counter() - parse_started
    counter = tokens.Counter(tokens.choose(remember=False))
    if counter.name != tokens.O200K:
        sys.exit(f"no o200k_base vocabulary ({counter.choice.note}); set XSHARE_VOCAB")
    counter.load()  # loaded lazily otherwise: not part of the limit
    encode = counter._count  # tiktoken alone (its count of one text), no cache
    started = time.perf_counter()
    for text in texts:
        encode(text)
    elapsed = time.perf_counter() - started
    size = sum(len(text.encode("utf-8", "surrogatepass")) for text in texts)
    return elapsed, texts, size, parse


def run_report(roots: list[Path], home: Path, *extra: str, counter: str = "", cores: str = "",
               label: str = "") -> tuple[float, int]:
    """Wall seconds and peak RSS (MB) of one `xshare report` process tree; `counter` sets $XSHARE_COUNTER
    (unset otherwise, as a user runs it), `cores` runs it under `taskset -c`; its CPU seconds go to CPU[label]."""
    command = [sys.executable, "-m", "xshare", "report", "--all", "--json", *extra]
    for root in roots:
        command += ["--claude-root", str(root)]
    env = {key: value for key, value in os.environ.items() if key != "XSHARE_COUNTER"}
    env["XSHARE_HOME"] = str(home)
    if counter:
        env["XSHARE_COUNTER"] = counter
    prefix = ["taskset", "-c", cores] if cores else []
    elapsed, cpu, peak, code, stderr = process_tree([*prefix, *command], env)
    if code != 0:
        sys.exit(f"report failed ({code}): {stderr[-2000:]}")
    CPU.setdefault(label, []).append(cpu)
    return elapsed, peak


def timed(runs: int, roots: list[Path], *extra: str, **options: str) -> tuple[list[float], int]:
    """Reports each in a new state folder: their wall seconds and the peak (MB)."""
    seconds, peak = [], 0
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as home:
            elapsed, used = run_report(roots, Path(home), *extra, **options)
            seconds.append(elapsed)
            peak = max(peak, used)
    return seconds, peak


def known_counts(roots: list[Path], home: Path, label: str = "") -> tuple[float, int, int]:
    """A report with the rows cache deleted and the count store kept (filled by a first report): its wall, its
    peak memory and the store's size on disk. `home` is warm afterwards."""
    run_report(roots, home)
    rows = list((home / "cache").glob("claude-rows*"))
    if not rows:
        sys.exit(f"no rows cache in {home / 'cache'} to delete: its name changed (xshare/agents/claude_code/"
                 "rows_cache.py); fix bench/report_speed.py known_counts")
    for path in rows:  # only the rows: the counts stay
        path.unlink()
    elapsed, used = run_report(roots, home, label=label)
    return elapsed, used, sum(path.stat().st_size for path in (home / "counts").glob("*.counts"))


def run_ccusage(ccusage: str | None, roots: list[Path], label: str) -> float | None:
    """Wall seconds of `ccusage daily --offline` over these roots (None when it is not installed); its CPU
    seconds go to CPU[label] and its peak memory to CPU[label + " peak"] (MB)."""
    if not ccusage:
        return None
    env = {**os.environ, "CLAUDE_CONFIG_DIR": ",".join(str(root) for root in roots)}
    elapsed, cpu, peak, code, _ = process_tree([ccusage, "daily", "--offline", "--json"], env)
    if code != 0:
        return None
    CPU.setdefault(label, []).append(cpu)
    CPU.setdefault(label + " peak", []).append(peak)
    return elapsed


def cold_beside_ccusage(runs: int, roots: list[Path], ccusage: str | None,
                        kind: str) -> tuple[int, float, float | None]:
    """Cold exact reports (default counter) and ccusage over one history: the reports' peak (MB) and median
    wall, ccusage's median wall (None without it); their CPU in CPU["cold " + kind] and CPU["ccusage " + kind]."""
    size_mb = jsonl_bytes(roots) / 1e6
    cold, peak = timed(runs, roots, "--no-cache", label=f"cold {kind}")
    mine = statistics.median(CPU[f"cold {kind}"])
    print(f"{kind:7} cold exact report (default counter): {spread(cold)} = {size_mb / statistics.median(cold):.0f} "
          f"MB/s, {mine:.2f} s CPU; peak {peak} MB")
    theirs = [run_ccusage(ccusage, roots, f"ccusage {kind}") for _ in range(runs)]
    if None in theirs:
        print(f"{kind:7} ccusage daily --offline: not installed here (--ccusage PATH); no comparison")
        return peak, statistics.median(cold), None
    cpu = statistics.median(CPU[f"ccusage {kind}"])
    print(f"{kind:7} ccusage daily --offline: {spread(theirs)}, {cpu:.2f} s CPU, peak "
          f"{max(CPU[f'ccusage {kind} peak']):.0f} MB; cold exact / ccusage: CPU {mine / cpu:.2f}x, wall "
          f"{statistics.median(cold) / statistics.median(theirs):.2f}x")
    return peak, statistics.median(cold), statistics.median(theirs)


def yardstick(args: argparse.Namespace, roots: list[Path]) -> int:
    """Issue 34's yardstick, the big history whose copies share no text and no ids; the peak memory (MB)."""
    with tempfile.TemporaryDirectory(prefix="xshare-big-") as folder:
        started = time.perf_counter()
        big = build_big(roots, Path(folder), args.big_gb, distinct=True)
        print(f"big     the yardstick: {jsonl_bytes(big) / 1e9:.2f} GB of Claude Code transcripts, {len(big)} copies "
              f"of the corpus sharing no message text, tool result or id (built in "
              f"{time.perf_counter() - started:.0f} s)")
        peak, _, theirs = cold_beside_ccusage(args.runs, big, args.ccusage, "big")
        if theirs:
            goal(34, "cold exact report CPU / ccusage CPU, yardstick (default counter)",
                 statistics.median(CPU["cold big"]) / statistics.median(CPU["ccusage big"]), 3, "x")
        if "floor" not in args.skip:
            for line in cold_floor.describe(cold_floor.floor(big), statistics.median(CPU["cold big"]),
                                            statistics.median(CPU["ccusage big"]) if theirs else None):
                print(line)
        if "counters" not in args.skip:
            peak = max(peak, compare_counters(1, big, "big"))
        warm, warm_peak = upgrade_then_warm(args.runs, big, theirs, "big")
        goal(34, "warm report (nothing changed), yardstick", warm, 0.2, " s")
        peak = max(peak, warm_peak)
        if "install" not in args.skip:
            peak = max(peak, after_install(big, theirs))
        if "crossover" not in args.skip:
            crossover(big[:args.crossover_copies], jsonl_bytes(big), args.runs)
    return peak


def upgrade_then_warm(runs: int, roots: list[Path], theirs: float | None, tag: str) -> tuple[float, int]:
    """Counts known (rows deleted), then warm re-runs in that state folder: the warm median, the peak (MB)."""
    with tempfile.TemporaryDirectory() as home:
        known, known_peak, stored = known_counts(roots, Path(home), f"known {tag}")
        warm = [run_report(roots, Path(home), label=f"warm {tag}") for _ in range(runs)]
    versus = f"; / ccusage wall {known / theirs:.2f}" if theirs else ""
    print(f"{tag:7} cold rows, counts known (after an upgrade): {known:.2f} s, "
          f"{statistics.median(CPU[f'known {tag}']):.2f} s CPU{versus}; peak {known_peak} MB; count store "
          f"{stored / 1e6:.1f} MB")
    seconds = [elapsed for elapsed, _ in warm]
    versus = f"; / ccusage wall {statistics.median(seconds) / theirs:.2f}" if theirs else ""
    print(f"{tag:7} warm re-run (nothing changed): {spread(seconds)}{versus}; peak {max(used for _, used in warm)} MB")
    return statistics.median(seconds), max(known_peak, *(used for _, used in warm))


def after_install(roots: list[Path], theirs: float | None) -> int:
    """The plugin's background pass, then the first `/exploration-share`, against ccusage's wall; the peak."""
    import background_speed  # beside this file

    first = background_speed.one_run(roots, None, cold=False)
    wall, cpu, pass_peak = first["pass"]
    print(f"install background pass (nice 19, idle I/O, one worker), nothing competing: wall {wall:.1f} s, "
          f"CPU {cpu:.1f} s, peak {pass_peak} MB")
    wall, cpu, first_peak = first["first"]
    print(f"install first /exploration-share after it: wall {wall:.2f} s, CPU {cpu:.2f} s, peak {first_peak} MB"
          + (f"; / ccusage wall {wall / theirs:.2f}" if theirs else ""))
    if theirs:
        goal(34, "first report after the background pass / ccusage wall, yardstick", wall / theirs, 0.5, "x")
    return max(pass_peak, first_peak)


def crossover(subset: list[Path], history_bytes: int, runs: int) -> None:
    """Where fastokens beats tiktoken on this history's texts, per worker, against xshare's constants."""
    from xshare.agents.common import counting
    from xshare.measure import tokens

    if not tokens.fast_installed():
        print("crossover fastokens is not installed (pip install 'xshare[fast]'): not measured")
        return
    import counter_crossover  # beside this file

    texts = distinct_texts(subset)
    result = counter_crossover.measure(texts, runs)
    del texts
    share = result.text_bytes / jsonl_bytes(subset)
    print(f"crossover on the distinct texts of {len(subset)} copies ({jsonl_bytes(subset) / 1e6:.0f} MB of "
          f"transcripts): {share:.3f} of their bytes are distinct text (xshare's TEXT_SHARE {counting.TEXT_SHARE})")
    for line in counter_crossover.describe(result, counting.cores()):
        print(line)
    for line in counter_crossover.per_worker(result, share, history_bytes, counting.cores()):
        print(line)


def compare_counters(runs: int, roots: list[Path], tag: str) -> int:
    """Cold reports counted by tiktoken and by fastokens (their wall, CPU and peak); the larger peak."""
    from xshare.measure import tokens

    if not tokens.fast_installed():
        print(f"{tag:7} fastokens is not installed (pip install 'xshare[fast]'): no counter comparison")
        return 0
    line, peak = [], 0
    for name in ("tiktoken", "fastokens"):
        seconds, used = timed(runs, roots, "--no-cache", counter=name, label=f"{tag} {name}")
        line.append(f"{name} {statistics.median(seconds):.2f} s wall, {statistics.median(CPU[f'{tag} {name}']):.2f} s "
                    f"CPU, peak {used} MB")
        peak = max(peak, used)
    print(f"{tag:7} cold report forced ($XSHARE_COUNTER) to count by {'; by '.join(line)}")
    return peak


def copies(args: argparse.Namespace, roots: list[Path]) -> int:
    """The flattering history: as big, made of plain copies (each copy's ids its own, texts repeated)."""
    print("copies  (flatters counting, not a yardstick: texts repeat across copies and each distinct text is "
          "counted once)")
    with tempfile.TemporaryDirectory(prefix="xshare-big-") as folder:
        history = build_big(roots, Path(folder), args.big_gb)
        print(f"copies  {jsonl_bytes(history) / 1e9:.2f} GB, {len(history)} copies of the corpus (ids their own)")
        peak, _, _ = cold_beside_ccusage(args.runs, history, args.ccusage, "copies")
    return peak


def live(args: argparse.Namespace) -> None:
    """The status line and the hook, with bench/live_speed.py's goals (issue 34: as today)."""
    import live_speed  # beside this file

    for what, measured, bound, unit in live_speed.goals(args.live_size_mb, args.live_runs):
        print(f"live    {what}: {measured:.3g}{unit} (goal <= {bound:g}{unit})")
        goal(34, what, measured, bound, unit)


def corpus(args: argparse.Namespace, roots: list[Path]) -> int:
    """The corpus alone: tiktoken's limit and the parse floor, cold beside ccusage, --estimate, counts known,
    warm, the parallel efficiency; the peak memory (MB)."""
    size_mb = jsonl_bytes(roots) / 1e6
    limit_s, texts, text_bytes, parse_s = tokenizer_limit(roots)
    limit = size_mb / limit_s
    print(f"limit   tiktoken alone, 1 thread: {len(texts):,} distinct texts, {text_bytes / 1e6:.1f} MB, "
          f"{limit_s:.2f} s = {limit:.1f} MB/s of JSONL")
    del texts
    cores = os.cpu_count() or 1
    print(f"floor   the reader alone (parse, ledger, no counting), 1 thread: {parse_s:.2f} s; parse + count "
          f"on {cores} cores at best {(parse_s + limit_s) / cores:.2f} s")
    peak, cold, theirs = cold_beside_ccusage(args.runs, roots, args.ccusage, "corpus")
    print(f"corpus  cold exact report: {size_mb / cold / limit:.2f} x the limit")
    goal(11, "cold exact report / the tokenizer's limit, corpus", size_mb / cold / limit, 0.8, "x", at_least=True)
    load = load_cpu("tiktoken")
    if theirs:
        print(f"corpus  loading the tokenizer alone takes {load:.2f} s of CPU "
              f"({load / statistics.median(CPU['ccusage corpus']):.1f}x ccusage's whole run here), a fixed cost: "
              f"the CPU goal is judged on the yardstick")
    estimate, estimate_peak = timed(args.runs, roots, "--no-cache", "--estimate")
    estimate_rate = size_mb / statistics.median(estimate)
    print(f"corpus  --estimate: {spread(estimate)} = {estimate_rate:.0f} MB/s; peak {estimate_peak} MB")
    goal(11, "--estimate, corpus", estimate_rate, 100, " MB/s", at_least=True)
    _, warm_peak = upgrade_then_warm(args.runs, roots, theirs, "corpus")
    return max(peak, estimate_peak, warm_peak, parallel(args, roots))


def parallel(args: argparse.Namespace, roots: list[Path]) -> int:
    """A cold report on one core against one on every core given: the parallel efficiency."""
    from xshare.agents.common import counting as counter

    cores = counter.cores()
    if cores < 2 or not shutil.which("taskset"):
        print(f"cores   {cores} core(s) given, or no taskset: no parallel efficiency measured")
        return 0
    first = str(min(os.sched_getaffinity(0)))
    one, one_peak = timed(args.runs, roots, "--no-cache", cores=first, label="one core")
    every, every_peak = timed(args.runs, roots, "--no-cache", label="every core")
    speedup = statistics.median(one) / statistics.median(every)
    print(f"cores   cold report, 1 worker: {spread(one)}; {cores} workers: {spread(every)}; parallel efficiency "
          f"{speedup / cores:.2f} (speed-up {speedup:.2f}x on {cores} cores; "
          f"CPU {statistics.median(CPU['one core']):.2f} s vs {statistics.median(CPU['every core']):.2f} s)")
    # Karp-Flatt: the share of the run that did not spread over the cores (start, tokenizer load, settling)
    serial = min(max((1 / speedup - 1 / cores) / (1 - 1 / cores), 0.0), 1.0)
    projected = ", ".join(f"{n} cores ~{statistics.median(one) * (serial + (1 - serial) / n):.2f} s"
                          for n in (4, 10, 16))
    print(f"cores   serial share {serial:.2f} (Karp-Flatt); by Amdahl's law this cold report would take {projected}")
    return max(one_peak, every_peak)


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--ccusage", default=shutil.which("ccusage"), help="path of the ccusage binary")
    parser.add_argument("--big-gb", type=float, default=1.2, help="the yardstick's size (0: no big history)")
    parser.add_argument("--skip", default="", help=f"parts left out, comma-separated: {', '.join(PARTS)}")
    parser.add_argument("--crossover-copies", type=int, default=2, help="copies whose texts the crossover counts")
    parser.add_argument("--live-size-mb", type=int, default=110, help="the status line's and hook's session")
    parser.add_argument("--live-runs", type=int, default=9)
    args = parser.parse_args()
    args.skip = [part for part in args.skip.split(",") if part]
    unknown = [part for part in args.skip if part not in PARTS]
    if unknown:
        parser.error(f"--skip: no part {', '.join(unknown)} (parts: {', '.join(PARTS)})")
    return args


def main() -> None:
    args = arguments()
    if not args.corpus.is_dir():
        sys.exit(f"no corpus at {args.corpus}")
    if "XSHARE_VOCAB" not in os.environ and DEFAULT_VOCAB.is_file():
        os.environ["XSHARE_VOCAB"] = str(DEFAULT_VOCAB)
    roots = roots_of(args.corpus)
    compile_package()
    from xshare.measure import tokens

    print(f"corpus: {len(roots)} roots, {jsonl_bytes(roots) / 1e6:.1f} MB of JSONL; {os.cpu_count()} cores; "
          f"runs: {args.runs}; ccusage: {args.ccusage or 'none'}; fastokens "
          f"{'installed (as the plugin installs xshare)' if tokens.fast_installed() else 'NOT installed'}")
    peak = 0
    if args.big_gb > 0:
        peak = max(peak, yardstick(args, roots))
        if "copies" not in args.skip:
            peak = max(peak, copies(args, roots))
    if "live" not in args.skip:
        live(args)
    if "corpus" not in args.skip:
        peak = max(peak, corpus(args, roots))
    if peak:
        print(f"memory  peak resident of any one xshare process (reports, the background pass) above: {peak} MB")
        goal(34, "peak memory of any one xshare process", peak, 400, " MB")
    summary(not_judged(args))


def not_judged(args: argparse.Namespace) -> list[str]:
    """Issue 34's goals this run left out (a part skipped, no big history, no ccusage)."""
    left = []
    if args.big_gb <= 0:
        left.append("every goal on the yardstick (--big-gb 0)")
    elif not args.ccusage:
        left.append("the goals against ccusage (not installed: --ccusage PATH)")
    if "install" in args.skip and args.big_gb > 0:
        left.append("the first report after install (--skip install)")
    if "live" in args.skip:
        left.append("the status line and the hook (--skip live)")
    return left


if __name__ == "__main__":
    main()
