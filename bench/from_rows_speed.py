"""How fast `xshare report --from-rows` rolls up a team's rows files (issue 13: a million rows, a
large organisation's month, in well under a minute on one machine, streaming).

Generates N invented session rows (default 1,000,000) spread over M machines' rows files in a
temporary folder, from the demo corpus's rows with their figures varied, then times the whole
command (a fresh process: start-up, reading, summing, printing) and reports its peak memory.

    python bench/from_rows_speed.py [--rows N] [--machines M]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path


def template_rows(folder: Path) -> list[dict]:
    """The demo corpus's rows, as `xshare report --demo --rows` writes them."""
    path = folder / "demo.jsonl"
    subprocess.run([sys.executable, "-m", "xshare", "report", "--demo", "--rows", str(path)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env(folder))
    return [json.loads(line) for line in path.read_text().splitlines()]


def _env(folder: Path) -> dict:
    import os

    return {**os.environ, "XSHARE_HOME": str(folder / "xshare-home")}


def varied(template: dict, index: int, machine: str, now: datetime, rng: random.Random) -> dict:
    """One invented session: the template's shape, its own id, start time and figures."""
    scale = rng.uniform(0.2, 5.0)
    billed = {category: int(tokens * scale * rng.uniform(0.5, 1.5)) for category, tokens in
              template["billed_tokens"].items()}
    context = sum(billed.values())
    prompt = int(context * rng.uniform(1.0, 1.15))
    started = now - timedelta(seconds=rng.uniform(0.2 * 86400, 27 * 86400))  # all ended by now
    return {**template, "id": f"bench-{index:08d}", "machine": machine, "started_at": started.isoformat(),
            "last_activity": (started + timedelta(minutes=rng.uniform(1, 180))).isoformat(),
            "billed_tokens": billed, "context_tokens": context, "prompt_tokens_billed": prompt,
            "exploration_share_of_context": billed["exploration"] / context if context else None}


def write_files(folder: Path, templates: list[dict], rows: int, machines: int) -> list[Path]:
    rng, now = random.Random(13), datetime.now(timezone.utc)
    paths = [folder / f"machine-{number:04d}.jsonl" for number in range(machines)]
    handles = [path.open("w") for path in paths]
    for index in range(rows):
        machine = index % machines
        row = varied(templates[index % len(templates)], index, f"m{machine:04d}", now, rng)
        handles[machine].write(json.dumps(row, separators=(",", ":")) + "\n")
    for handle in handles:
        handle.close()
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--machines", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="xshare-bench-rows-") as name:
        folder = Path(name)
        templates = template_rows(folder)
        started = time.perf_counter()
        paths = write_files(folder, templates, args.rows, args.machines)
        size = sum(path.stat().st_size for path in paths)
        print(f"generated {args.rows:,} rows in {len(paths)} files, {size / 1e6:,.0f} MB, "
              f"in {time.perf_counter() - started:.1f} s")
        started = time.perf_counter()
        command = [sys.executable, "-m", "xshare", "report", "--all", "--json", "--from-rows", *map(str, paths)]
        done = subprocess.run(command,
                              capture_output=True, env=_env(folder))
        elapsed = time.perf_counter() - started
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        if done.returncode != 0:
            sys.exit(f"xshare failed ({done.returncode}): {done.stderr.decode()[-500:]}")
        report = json.loads(done.stdout)
        print(f"xshare report --from-rows: {report['sessions']:,} sessions, {report['rollup']['machines']} "
              f"machines, in {elapsed:.1f} s ({args.rows / elapsed:,.0f} rows/s, {size / 1e6 / elapsed:,.0f} MB/s); "
              f"peak memory {peak_mb:,.0f} MB (of any process this bench started)")


if __name__ == "__main__":
    main()
