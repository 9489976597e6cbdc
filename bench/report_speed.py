"""How fast `xshare report` reads Claude Code transcripts, against the tokenizer's own limit.

Measured in one run, on one corpus (default ../shared/corpus/claude, every root):
  - the limit: tiktoken's o200k_base encode_ordinary, one thread, over exactly the distinct texts
    xshare counts in that corpus, expressed as MB/s of transcript JSONL;
  - a cold report with tiktoken (no cache, all cores) and with --estimate, as MB/s of JSONL;
  - ccusage `daily --offline` on the same roots (it only sums usage fields), when installed
    (`--ccusage PATH`, else `ccusage` on PATH; see ../shared/docs/peers.md), else it says so;
  - "cold rows, counts known": the rows cache deleted, the count store kept (what every report after an
    xshare upgrade costs: the transcripts are read again, no text is tokenized again, tiktoken never
    loads), and the count store's size on disk;
  - a warm re-run (everything cached) and the peak resident memory of any one process;
  - the CPU (user + system, every process) of a cold exact report against ccusage's in the same run;
  - the fast counter (fastokens, xshare[fast]; bench/counter_crossover.py): its crossover, and cold reports
    counted by tiktoken and by fastokens ($XSHARE_COUNTER), on the corpus and on the big history;
  - the parallel efficiency: a cold report on one core (taskset) against one on all the cores given;
  - with --big-gb N (default 1.2; 0 skips), the issue's yardstick: a history of N GB made of the corpus's files
    copied under new names into a temporary folder (texts repeat across copies, a best case for counting):
    cold exact reports vs ccusage (CPU), counts known, and the first report after install: the plugin's
    background pass (bench/background_speed.py), then the first `/exploration-share`, against ccusage's wall;
    then a history as big whose copies share no message or tool result (each marked per copy): cold exact
    vs ccusage;
  - a summary of every goal, met or not.
Goals (issues 11, 24): cold >= 0.8 x the limit, cold CPU <= 4x ccusage's on the big history (on the corpus alone
loading the tokenizer is a fixed cost near ccusage's whole run), first report after install <= 1x ccusage's wall,
--estimate >= 100 MB/s, warm < 0.5 s, peak < 400 MB throughout.

    python bench/report_speed.py [--corpus DIR] [--runs N] [--ccusage PATH] [--big-gb N]
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
from common import (  # noqa: E402
    DEFAULT_CORPUS,
    DEFAULT_VOCAB,
    build_big,
    compile_package,
    distinct_texts,
    jsonl_bytes,
    process_tree,
    roots_of,
    spread,
)

CPU: dict[str, list[float]] = {}  # the CPU seconds of the runs, by what was run (cold, ccusage, ...)
GOALS: list[tuple[str, float, float, str, bool]] = []  # what, measured, bound, unit, whether at least


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


_LOAD = (
    "import time\n"
    "from xshare.measure import tokens\n"
    "counter = tokens.Counter(tokens.choose(remember=False))\n"
    "started = time.process_time()\n"
    "counter.load()\n"
    "print(time.process_time() - started)\n"
)


def tokenizer_load_cpu() -> float:
    """CPU seconds of loading tiktoken's o200k_base as a first report does (no parsed vocabulary kept yet)."""
    with tempfile.TemporaryDirectory() as home:
        done = subprocess.run([sys.executable, "-c", _LOAD], env={**os.environ, "XSHARE_HOME": home},
                              capture_output=True, text=True, check=True)
    return float(done.stdout)


def run_report(roots: list[Path], home: Path, *extra: str, counter: str = "", cores: str = "",
               label: str = "") -> tuple[float, int]:
    """Wall seconds and peak RSS (MB) of one `xshare report` process tree; `counter` sets $XSHARE_COUNTER,
    `cores` runs it under `taskset -c`; its CPU seconds go to CPU[label]."""
    command = [sys.executable, "-m", "xshare", "report", "--all", "--json", *extra]
    for root in roots:
        command += ["--claude-root", str(root)]
    env = {**os.environ, "XSHARE_HOME": str(home)}
    if counter:
        env["XSHARE_COUNTER"] = counter
    prefix = ["taskset", "-c", cores] if cores else []
    elapsed, cpu, peak, code, stderr = process_tree([*prefix, *command], env)
    if code != 0:
        sys.exit(f"report failed ({code}): {stderr[-2000:]}")
    CPU.setdefault(label, []).append(cpu)
    return elapsed, peak


def timed(runs: int, roots: list[Path], *extra: str, warm: bool = False, **options: str) -> tuple[list[float], int]:
    seconds, peak = [], 0
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as home:
            if warm:
                run_report(roots, Path(home), *extra, **options)
            elapsed, used = run_report(roots, Path(home), *extra, **options)
            seconds.append(elapsed)
            peak = max(peak, used)
    return seconds, peak


def timed_known(runs: int, roots: list[Path]) -> tuple[list[float], int, int]:
    """Reports with the rows cache deleted and the count store kept (filled by a first report), their
    peak memory, and the store's size on disk."""
    seconds, peak, stored = [], 0, 0
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as home:
            elapsed, used, stored = known_counts(roots, Path(home))
            seconds.append(elapsed)
            peak = max(peak, used)
    return seconds, peak, stored


def known_counts(roots: list[Path], home: Path) -> tuple[float, int, int]:
    run_report(roots, home)
    (home / "cache" / "claude-rows.jsonl").unlink()  # only the rows: the counts stay
    elapsed, used = run_report(roots, home)
    return elapsed, used, sum(path.stat().st_size for path in (home / "counts").glob("*.counts"))


def run_ccusage(ccusage: str | None, roots: list[Path], label: str = "ccusage") -> float | None:
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


def big_history(args: argparse.Namespace, roots: list[Path], ccusage: str | None) -> int:
    """The issue's yardstick: a history of --big-gb GB, cold exact report and ccusage side by side (the CPU
    goal), counts known, the first report after the background pass; then the same size with no text
    repeated across copies. The peak memory (MB)."""
    import background_speed  # beside this file

    with tempfile.TemporaryDirectory(prefix="xshare-big-") as folder:
        big_roots = build_big(roots, Path(folder), args.big_gb)
        peak, theirs = big_cold(args.runs, big_roots, ccusage, "copies")
        from xshare.measure import tokens
        if tokens.fast_installed():
            peak = max(peak, compare_counters(1, big_roots, "big    "))
        with tempfile.TemporaryDirectory() as home:
            known, known_peak, stored = known_counts(big_roots, Path(home))
        size_mb = jsonl_bytes(big_roots) / 1e6
        print(f"big     cold rows, counts known: {known:.1f} s = {size_mb / known:.0f} MB/s; peak {known_peak} MB; "
              f"count store {stored / 1e6:.2f} MB")
        first = background_speed.one_run(big_roots, ccusage, cold=False)
    wall, cpu, pass_peak = first["pass"]
    print(f"install background pass after install (nice 19, idle I/O, one worker), nothing competing: wall {wall:.1f} "
          f"s, CPU {cpu:.1f} s, peak {pass_peak} MB")
    wall, cpu, first_peak = first["first"]
    print(f"install first /exploration-share after it: wall {wall:.2f} s, CPU {cpu:.2f} s, peak {first_peak} MB"
          + (f"; / ccusage wall {wall / theirs:.2f}" if theirs else ""))
    if theirs:
        goal("first report after install / ccusage wall, big history", wall / theirs, 1.0, "x")
    with tempfile.TemporaryDirectory(prefix="xshare-big-") as folder:
        distinct_peak, _ = big_cold(args.runs, build_big(roots, Path(folder), args.big_gb, distinct=True), ccusage,
                                    "distinct texts")
    return max(peak, known_peak, pass_peak, first_peak, distinct_peak)


def big_cold(runs: int, big_roots: list[Path], ccusage: str | None, kind: str) -> tuple[int, float | None]:
    """Cold exact reports and ccusage over one big history: the reports' peak (MB), ccusage's median wall."""
    size_mb = jsonl_bytes(big_roots) / 1e6
    cold, peak = timed(runs, big_roots, "--no-cache", label=f"big cold {kind}")
    mine = statistics.median(CPU[f"big cold {kind}"])
    print(f"big     {size_mb / 1e3:.2f} GB history ({kind}): cold exact {spread(cold)} = "
          f"{size_mb / statistics.median(cold):.0f} MB/s, {mine:.1f} s CPU; peak {peak} MB")
    theirs = [run_ccusage(ccusage, big_roots, f"big ccusage {kind}") for _ in range(runs)]
    if None in theirs:
        return peak, None
    cpu = statistics.median(CPU[f"big ccusage {kind}"])
    print(f"big     ccusage daily --offline ({kind}): {spread(theirs)}, {cpu:.2f} s CPU, peak "
          f"{max(CPU[f'big ccusage {kind} peak']):.0f} MB; cold exact CPU {mine / cpu:.1f}x ccusage's")
    goal(f"cold exact CPU / ccusage CPU, big history ({kind})", mine / cpu, 4.0, "x")
    return peak, statistics.median(theirs)


def goal(what: str, measured: float, bound: float, unit: str, at_least: bool = False) -> None:
    """A goal of the issues (at most `bound`, or at least), for the summary at the end."""
    GOALS.append((what, measured, bound, unit, at_least))


def summary() -> None:
    print("goals   (issues 11 and 24)")
    for what, measured, bound, unit, at_least in GOALS:
        met = measured >= bound if at_least else measured <= bound
        print(f"  {'met' if met else 'NOT met':7} {what}: {measured:.3g}{unit} "
              f"(goal {'>=' if at_least else '<='} {bound:g}{unit})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--ccusage", default=shutil.which("ccusage"), help="path of the ccusage binary")
    parser.add_argument("--big-gb", type=float, default=1.2)
    args = parser.parse_args()
    if not args.corpus.is_dir():
        sys.exit(f"no corpus at {args.corpus}")
    if "XSHARE_VOCAB" not in os.environ and DEFAULT_VOCAB.is_file():
        os.environ["XSHARE_VOCAB"] = str(DEFAULT_VOCAB)
    roots = roots_of(args.corpus)
    compile_package()
    size_mb = jsonl_bytes(roots) / 1e6
    print(f"corpus: {len(roots)} roots, {size_mb:.1f} MB of JSONL; {os.cpu_count()} cores; runs: {args.runs}")

    limit_s, texts, text_bytes, parse_s = tokenizer_limit(roots)
    limit = size_mb / limit_s
    print(f"limit   tiktoken alone, 1 thread: {len(texts):,} distinct texts, {text_bytes / 1e6:.1f} MB, "
          f"{limit_s:.2f} s = {limit:.1f} MB/s of JSONL")
    cores = os.cpu_count() or 1
    print(f"floor   the reader alone (parse, ledger, no counting), 1 thread: {parse_s:.2f} s; parse + count "
          f"on {cores} cores at best {(parse_s + limit_s) / cores:.2f} s")

    cold, cold_peak = timed(args.runs, roots, "--no-cache", label="cold")
    cold_rate = size_mb / statistics.median(cold)
    print(f"cold    o200k_base: {spread(cold)} = {cold_rate:.1f} MB/s = {cold_rate / limit:.2f} x the limit "
          f"(goal >= 0.80); peak {cold_peak} MB")
    goal("cold exact report / the tokenizer's limit, corpus", cold_rate / limit, 0.8, "x", at_least=True)
    theirs = [run_ccusage(args.ccusage, roots) for _ in range(args.runs)]
    if None in theirs:
        print("cold    ccusage daily --offline: not installed here (--ccusage PATH); no comparison")
    else:
        print(f"cold    ccusage daily --offline: {spread(theirs)}, peak {max(CPU['ccusage peak']):.0f} MB; "
              f"exact report / ccusage {statistics.median(cold) / statistics.median(theirs):.1f} (wall)")
        theirs_cpu, load = statistics.median(CPU["ccusage"]), tokenizer_load_cpu()
        print(f"cpu     cold exact {statistics.median(CPU['cold']):.2f} s of CPU, ccusage {theirs_cpu:.2f} s: "
              f"{statistics.median(CPU['cold']) / theirs_cpu:.1f}x; loading the tokenizer alone takes {load:.2f} s "
              f"({load / theirs_cpu:.1f}x ccusage's whole run), a fixed cost: the goal (<= 4x) is judged on the big "
              f"history, the issue's yardstick")

    estimate, estimate_peak = timed(args.runs, roots, "--no-cache", "--estimate")
    estimate_rate = size_mb / statistics.median(estimate)
    print(f"cold    --estimate: {spread(estimate)} = {estimate_rate:.0f} MB/s (goal >= 100); peak {estimate_peak} MB")
    goal("--estimate, corpus", estimate_rate, 100, " MB/s", at_least=True)

    known, known_peak, stored = timed_known(args.runs, roots)
    versus = "" if None in theirs else f"; / ccusage {statistics.median(known) / statistics.median(theirs):.1f}"
    print(f"known   cold rows, counts known (after an upgrade): {spread(known)} = "
          f"{size_mb / statistics.median(known):.0f} MB/s{versus}; peak {known_peak} MB; "
          f"count store {stored / 1e6:.2f} MB on disk")

    warm, warm_peak = timed(args.runs, roots, warm=True)
    versus = "" if None in theirs else f"; / ccusage {statistics.median(warm) / statistics.median(theirs):.2f}"
    print(f"warm    cached re-run: {spread(warm)} (goal < 0.5 s){versus}; peak {warm_peak} MB")
    goal("warm report, corpus", statistics.median(warm), 0.5, " s")
    peak = max(cold_peak, estimate_peak, known_peak, warm_peak, fast_counter(args, roots, texts), parallel(args, roots))
    if args.big_gb > 0:
        peak = max(peak, big_history(args, roots, args.ccusage))
    print(f"memory  peak resident of any one process, every run above: {peak} MB (goal < 400 MB)")
    goal("peak memory of any one process", peak, 400, " MB")
    summary()


def fast_counter(args: argparse.Namespace, roots: list[Path], texts: list[str]) -> int:
    """The crossover, and cold reports counted by each counter; their peak memory (MB)."""
    from xshare.agents.common import counting as counter
    from xshare.measure import tokens

    if not tokens.fast_installed():
        print("fast    fastokens is not installed (pip install 'xshare[fast]'): no comparison")
        return 0
    import counter_crossover  # beside this file

    for line in counter_crossover.describe(counter_crossover.measure(texts,
                                                                     args.runs), counter.cores()):
        print(line)
    return compare_counters(args.runs, roots, "fast   ")


def compare_counters(runs: int, roots: list[Path], tag: str) -> int:
    """Cold reports counted by tiktoken and by fastokens (their wall, CPU and peak); the larger peak."""
    line, peak = [], 0
    for name in ("tiktoken", "fastokens"):
        seconds, used = timed(runs, roots, "--no-cache", counter=name, label=f"{tag}{name}")
        line.append(f"{name} {statistics.median(seconds):.2f} s wall, {statistics.median(CPU[tag + name]):.2f} s "
                    f"CPU, peak {used} MB")
        peak = max(peak, used)
    print(f"{tag} cold report counted by {'; by '.join(line)}")
    return peak


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


if __name__ == "__main__":
    main()
