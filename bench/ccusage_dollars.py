"""xshare's dollars against ccusage's on the same Claude Code roots, and the gap explained reason by reason
(issue 30): the figures the README's "Against ccusage" paragraph quotes.

Runs `ccusage monthly --offline --json` (CLAUDE_CONFIG_DIR = the roots, comma-separated) and `xshare report
--all --json --rows` on the same roots in one go, then reads every assistant usage line of the transcripts
itself: ccusage's sum emulated at xshare's own rates (checked against ccusage's per-model costs), then one rule
changed at a time towards xshare's, each step priced with xshare's table. Prints totals only.

    python bench/ccusage_dollars.py [--ccusage PATH] [ROOT ...]   (default: ../shared/corpus/claude/*/)

ccusage 20.0.24 runs here from npm (see ../shared/docs/peers.md): npm install ccusage@20.0.24
@ccusage/ccusage-linux-x64@20.0.24, then --ccusage node_modules/.bin/ccusage.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from xshare.measure.prices import shipped  # noqa: E402

TABLE = shipped()


def usage_lines(roots: list[Path]) -> Iterator[dict]:
    """Every billed assistant line's usage, with its file, message id and request id."""
    for root in roots:
        for path in sorted((root / "projects").rglob("*.jsonl")):
            session = f"{path.parent.parent.name}/{path.stem}" if path.parent.name == "subagents" else path.stem
            with path.open("rb") as handle:
                for raw in handle:
                    try:
                        line = json.loads(raw)
                    except ValueError:
                        continue
                    message = line.get("message") if isinstance(line, dict) else None
                    if line.get("type") != "assistant" or not isinstance(message, dict) \
                            or not isinstance(message.get("usage"), dict) or message.get("model") == "<synthetic>":
                        continue
                    yield _usage(message["usage"]) | {"path": str(path), "session": session, "mid": message.get("id"),
                                                       "rid": line.get("requestId"), "model": message.get("model")}


def _usage(usage: dict) -> dict:
    split = usage.get("cache_creation") if isinstance(usage.get("cache_creation"), dict) else None
    five = (split or {}).get("ephemeral_5m_input_tokens") or 0
    hour = (split or {}).get("ephemeral_1h_input_tokens") or 0
    flat = usage.get("cache_creation_input_tokens") or 0
    return {"input": usage.get("input_tokens") or 0, "output": usage.get("output_tokens") or 0,
            "cache_read": usage.get("cache_read_input_tokens") or 0,
            "split": (five + hour) if split is not None else flat, "flat": flat, "hour": hour}


def keep(lines: list[dict], first: bool = False, by_message: bool = False) -> list[dict]:
    """One line per (message id, request id), the last streamed (or the first); with no request id every line
    counts, as ccusage counts them, unless `by_message` (then one per message id within its file)."""
    chosen: list[dict] = []
    at: dict[tuple, int] = {}
    for line in lines:
        key = (line["mid"], line["rid"]) if line["mid"] and line["rid"] else \
              (line["mid"], line["path"]) if by_message and line["mid"] else None
        if key is None:
            chosen.append(line)
        elif key in at:
            if not first:
                chosen[at[key]] = line
        else:
            at[key] = len(chosen)
            chosen.append(line)
    return chosen


def dollars(line: dict, one_hour_rate: bool = True, writes: str = "split") -> float:
    rates = TABLE.rates(line["model"])
    if rates is None:
        return 0.0
    written = line["split"] if writes == "split" else max(line["flat"], line["split"])
    hour = min(line["hour"], written) if one_hour_rate else 0
    return (line["input"] * rates["input"] + line["output"] * rates["output"] + line["cache_read"] * rates["cache_read"]
            + (written - hour) * rates["cache_write_5m"] + hour * rates["cache_write_1h"]) * 1e-6


def total(lines: list[dict], **how) -> float:
    return sum(dollars(line, **how) for line in lines)


def run_both(ccusage: str, roots: list[Path], folder: Path) -> tuple[dict, dict, set[str]]:
    env = {**os.environ, "CLAUDE_CONFIG_DIR": ",".join(map(str, roots))}
    theirs = json.loads(subprocess.run([ccusage, "monthly", "--offline", "--json"], env=env, capture_output=True,
                                       text=True, check=True).stdout)
    flags = [part for root in roots for part in ("--claude-root", str(root))]
    rows = folder / "rows.jsonl"
    ours = json.loads(subprocess.run(
        [sys.executable, "-m", "xshare", "report", "--all", "--json", "--rows", str(rows), *flags],
        env={**os.environ, "XSHARE_HOME": str(folder / "home"), "PYTHONPATH": str(REPO)}, capture_output=True,
        text=True, check=True).stdout)
    return theirs, ours, {json.loads(line)["id"] for line in rows.read_text().splitlines() if line.strip()}


def explain(theirs: dict, ours: dict, listed: set[str], lines: list[dict]) -> list[str]:
    ccusage, xshare = theirs["totals"]["totalCost"], ours["dollars"]["dollars"]
    by_model: dict[str, float] = defaultdict(float)
    for month in theirs["monthly"]:
        for part in month["modelBreakdowns"]:
            by_model[part["modelName"]] += part["cost"]
    unpriced_here = sum(cost for model, cost in by_model.items() if TABLE.rates(model) is None)
    emulated = total(keep(lines))  # ccusage's rules at xshare's rates: last streamed row, 1-hour rate, split writes
    once = keep(lines, by_message=True)
    per_call, per_call_larger = total(once), total(once, writes="larger")
    first_rows = total(keep(lines, first=True))
    at_5m = total(keep(lines), one_hour_rate=False)
    zero = ", ".join(sorted(model for model, cost in by_model.items() if cost == 0)) or "none"
    return [
        f"ccusage monthly --offline: ${ccusage:,.2f}; xshare report: ${xshare:,.2f} (xshare - ccusage: "
        f"${xshare - ccusage:+,.2f})",
        f"  ccusage's rules at xshare's rates: ${emulated:,.2f} (ccusage - that: ${ccusage - emulated:+,.2f}, of which "
        f"${unpriced_here:,.2f} for models xshare has no price for; the rest, lines only ccusage reads)",
        f"  checked: models ccusage priced $0: {zero}; its output tokens {theirs['totals']['outputTokens']:,} against "
        f"the last streamed rows' {sum(line['output'] for line in keep(lines)):,} and the first rows' "
        f"{sum(line['output'] for line in keep(lines, first=True)):,} (first rows would be "
        f"${first_rows - emulated:+,.2f}); 1-hour writes at the 5-minute rate would be ${at_5m - emulated:+,.2f}",
        f"  1. a response with no requestId: each streamed row by ccusage, each message once by xshare: "
        f"${per_call - emulated:+,.2f} ({sum(1 for line in lines if not line['rid']):,} of {len(lines):,} usage "
        "rows have none)",
        f"  2. cache writes: the 5m + 1h split by ccusage, the larger of it and the flat field by xshare: "
        f"${per_call_larger - per_call:+,.2f}",
        f"  = every call once, at its own model: ${per_call_larger:,.2f} "
        f"(${sum(dollars(line, writes='larger') for line in once if line['session'] in listed):,.2f} in the "
        "sessions xshare lists)",
        f"  3. xshare against that (calls copied into several files billed once, where xshare read them): "
        f"${xshare - per_call_larger:+,.2f}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ccusage", default=shutil.which("ccusage"), help="the ccusage launcher")
    parser.add_argument("roots", nargs="*", type=Path, help="Claude Code config roots (each holding projects/)")
    args = parser.parse_args()
    roots = args.roots or sorted(path for path in (REPO.parent / "shared" / "corpus" / "claude").glob("*/")
                                 if (path / "projects").is_dir())
    if not args.ccusage or not roots:
        sys.exit("needs ccusage (--ccusage PATH) and Claude Code roots (or ../shared/corpus/claude beside the repo)")
    with tempfile.TemporaryDirectory(prefix="xshare-ccusage-") as folder:
        theirs, ours, listed = run_both(args.ccusage, roots, Path(folder))
    print(f"{len(roots)} roots")
    print("\n".join(explain(theirs, ours, listed, list(usage_lines(roots)))))


if __name__ == "__main__":
    main()
