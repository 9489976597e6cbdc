"""How fast the live parts are where a person waits: the status line and the hook, on a 100 MB session.

Builds an invented Claude Code transcript of --size-mb (default 110) with the demo's transcript
writer, brings its live state up to date once, then measures in one run, interleaved, medians of
--runs whole processes each:
  - the status line (`python3 -I -S statusline/statusline.py`) against `python3 -I -c pass`
    (goal: at most 3x), the fields alone for another status line's widget (`--fields context,fill`, the same
    goal), and `npx ccusage statusline` on the same input when it installs;
  - the CPU of a hook call (its process plus what the warm worker spent on it) with no new bytes
    (goal: <= 50 ms), and with 50 KB appended to this transcript and to one a twentieth its size
    (goal: <= 100 ms; the cost must follow the new bytes, not the file), and the same without the worker;
  - the hook at SessionStart: starting the background pass, and with the pass done (a stamp read) against
    the pass turned off; a tool batch's hook (wall) while a background pass runs, against nothing running;
  - the tokenizer load, cold and with the parsed vocabulary cached.

    python bench/live_speed.py [--size-mb N] [--runs N] [--no-ccusage]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
VOCAB = REPO.parent / "shared" / "vocab" / "o200k_base.tiktoken"
sys.path.insert(0, str(REPO))


def build_transcript(path: Path, size_mb: int) -> None:
    """A long invented session: reads, greps, edits and test runs, compacted every 150 calls."""
    from xshare.demo import TranscriptWriter, text

    writer = TranscriptWriter("bench-session", "/home/dev/big", start=datetime(2026, 11, 1, tzinfo=timezone.utc))
    writer.user("Walk the handlers and make every status code explicit.")
    step = 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        while out.tell() < size_mb * 1_000_000:
            step += 1
            name = f"/home/dev/big/handlers/h{step % 97}.py"
            module = "".join(f"def handler_{step}_{n}(request):\n    return respond(request, status={200 + n % 5})\n\n"
                             for n in range(120))  # every read differs, as real files do: real tokenizer work
            read = writer.use("Read", {"file_path": name})
            writer.read_result(read, name, module)
            grep = writer.use("Bash", {"command": f"rg -n 'status=20{step % 5}' handlers/"})
            writer.bash_result(grep, "".join(f"handlers/h{n}.py:{n}:    status=20{step % 5}\n" for n in range(40)))
            edit = writer.use("Edit", {"file_path": name, "old_string": "status=200", "new_string": "status=HTTP_OK"})
            writer.edit_result(edit, name, "status=200", "status=HTTP_OK", module)
            if step % 150 == 0:
                writer.compact(f"Summary after {step} steps: handlers h0..h96 updated.")
            if step % 10 == 0:
                writer.call(text(f"Step {step} done."))
            for line in writer.lines():
                out.write(line + "\n")
            writer.rows.clear()


def timed(command: list[str], stdin: bytes, env: dict) -> float:
    started = time.perf_counter()
    subprocess.run(command, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    return time.perf_counter() - started


def median_ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.0f} ms (min {min(values) * 1000:.0f}, max {max(values) * 1000:.0f})"


@dataclass
class Live:
    """A bench session made and brought up to date once: its folder, environment, transcript and the hook's
    and the status line's inputs."""

    work: Path
    env: dict
    transcript: Path
    hook: list[str]
    hook_input: bytes
    status_input: bytes


def prepare(size_mb: int, runs: int) -> Live:
    """The invented transcript of `size_mb`, its live state brought up to date by a first hook call."""
    work = Path(tempfile.mkdtemp(prefix="xshare-live-bench-"))
    env = {**os.environ, "XSHARE_HOME": str(work / "home"), "NO_COLOR": "1"}
    if VOCAB.is_file():
        env.setdefault("XSHARE_VOCAB", str(VOCAB))
    os.environ.update({key: env[key] for key in ("XSHARE_HOME", "XSHARE_VOCAB") if key in env})
    transcript = work / "projects" / "-home-dev-big" / "bench-session.jsonl"
    started = time.perf_counter()
    build_transcript(transcript, size_mb)
    size = transcript.stat().st_size
    print(f"transcript: {size / 1e6:.1f} MB, built in {time.perf_counter() - started:.1f} s; runs: {runs}")
    hook = [sys.executable, str(REPO / "bin" / "xshare"), "hook"]
    hook_input = json.dumps({"session_id": transcript.stem, "transcript_path": str(transcript),
                             "hook_event_name": "PostToolBatch"}).encode()
    first = timed(hook, hook_input, env)
    print(f"hook    first call, whole transcript from scratch: {first:.2f} s ({size / 1e6 / first:.0f} MB/s)")
    return Live(work, env, transcript, hook, hook_input, status_payload(transcript))


def status_payload(transcript: Path) -> bytes:
    return json.dumps({  # Claude Code's documented status-line payload
        "session_id": transcript.stem, "transcript_path": str(transcript), "cwd": "/home/dev/big", "version": "2.1.90",
        "model": {"id": "claude-sonnet-4-6", "display_name": "Sonnet 4.6"},
        "workspace": {"current_dir": "/home/dev/big", "project_dir": "/home/dev/big"},
        "cost": {"total_cost_usd": 0.0, "total_duration_ms": 1000, "total_api_duration_ms": 500},
        "context_window": {"total_input_tokens": 82000, "total_output_tokens": 900, "context_window_size": 200000,
                           "used_percentage": 41.0, "remaining_percentage": 59.0, "current_usage": None},
    }).encode()


STATUS = [sys.executable, "-I", "-S", str(REPO / "statusline" / "statusline.py")]
WIDGET = [sys.executable, "-I", "-S", str(REPO / "xshare" / "statusline.py"), "--fields", "context,fill"]
BARE = [sys.executable, "-I", "-c", "pass"]


def interleaved(live: Live, runs: int) -> dict[str, list[float]]:
    """Seconds of the status line, its fields alone and a bare python (wall), and CPU seconds of a hook call
    with nothing new and of a bare python, interleaved run by run so a drift touches each alike."""
    found: dict[str, list[float]] = {"status": [], "fields": [], "bare": [], "idle": [], "bare cpu": []}
    for _ in range(runs):
        found["status"].append(timed(STATUS, live.status_input, live.env))
        found["fields"].append(timed(WIDGET, live.status_input, live.env))
        found["bare"].append(timed(BARE, b"", live.env))
        found["idle"].append(cpu_of_hook(live.hook, live.hook_input, live.env))
        found["bare cpu"].append(cpu_of_hook(BARE, b"", live.env))
    return found


def goals(size_mb: int, runs: int) -> list[tuple[str, float, float, str]]:
    """The status line's and the hook's figures against their goals (what, measured, at most, unit), for
    bench/report_speed.py: the status line and its fields alone against a bare python (<= 3x), a hook call's
    CPU with nothing new (<= 50 ms) and with 50 KB appended to the transcript (<= 100 ms)."""
    saved = {key: os.environ.get(key) for key in ("XSHARE_HOME", "XSHARE_VOCAB")}
    live = prepare(size_mb, runs)
    try:
        found = interleaved(live, runs)
        batch = [append_and_hook(live.transcript, live.hook, live.hook_input, live.env)
                 for _ in range(max(3, runs // 3))]
    finally:
        stop_worker(live.env)
        shutil.rmtree(live.work, ignore_errors=True)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    bare = statistics.median(found["bare"])
    return [("status line / python3 -I -c pass (wall)", statistics.median(found["status"]) / bare, 3, "x"),
            ("status line --fields / python3 -I -c pass (wall)", statistics.median(found["fields"]) / bare, 3, "x"),
            ("hook, nothing new (CPU)", statistics.median(found["idle"]) * 1e3, 50, " ms"),
            (f"hook, 50 KB appended to a {size_mb} MB transcript (CPU of hook and worker)",
             statistics.median(batch) * 1e3, 100, " ms")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=110)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--no-ccusage", action="store_true")
    parser.add_argument("--ccusage-version", default="17")
    args = parser.parse_args()
    live = prepare(args.size_mb, args.runs)
    env = live.env
    line = subprocess.run(STATUS, input=live.status_input, capture_output=True, env=env).stdout.decode().strip()
    print(f"status  prints: {line}")
    shown = subprocess.run(WIDGET, input=live.status_input, capture_output=True, env=env).stdout.decode().strip()
    print(f"status  --fields context,fill prints: {shown}")
    found = interleaved(live, args.runs)
    ours, bare = found["status"], found["bare"]
    ratio = statistics.median(ours) / statistics.median(bare)
    print(f"status  xshare status line: {median_ms(ours)}; python3 -I -c pass: {median_ms(bare)}; "
          f"ratio {ratio:.2f} (goal <= 3)")
    print(f"status  the fields alone (--fields): {median_ms(found['fields'])}; ratio "
          f"{statistics.median(found['fields']) / statistics.median(bare):.2f} (goal <= 3)")
    if not args.no_ccusage and shutil.which("npx"):
        ccusage_statusline(live, args.ccusage_version, args.runs, statistics.median(ours))
    print(f"hook    no new bytes, CPU: {median_ms(found['idle'])} (goal <= 50 ms); python3 -I -c pass: "
          f"{median_ms(found['bare cpu'])}")
    session_start(live.hook, live.transcript, env, args.runs)
    appended(live, args.size_mb, args.runs)
    stop_worker(env)
    print(f"tokens  tokenizer load: {load_seconds(env, fresh=True):.2f} s cold, "
          f"{load_seconds(env, fresh=False):.2f} s with the parsed vocabulary cached")
    shutil.rmtree(live.work, ignore_errors=True)


def ccusage_statusline(live: Live, version: str, runs: int, ours: float) -> None:
    # ccusage 18+ ships a native binary that has no linux-x64 build here; 17 is its last JavaScript one
    ccusage = ["npx", "--yes", f"ccusage@{version}", "statusline"]
    ccusage_env = {**live.env, "CLAUDE_CONFIG_DIR": str(live.work)}
    if subprocess.run(ccusage, input=live.status_input, capture_output=True, env=ccusage_env).returncode == 0:
        theirs = [timed(ccusage, live.status_input, ccusage_env) for _ in range(max(3, runs // 3))]
        print(f"status  npx ccusage@{version} statusline: {median_ms(theirs)}; "
              f"ccusage / xshare {statistics.median(theirs) / ours:.1f}")
    else:
        print("status  npx ccusage statusline: did not run here")


def appended(live: Live, size_mb: int, runs: int) -> None:
    """The hook's CPU for 50 KB appended to this transcript and to one a twentieth its size (the cost must
    follow the new bytes, not the file), beside a background pass, and without the worker."""
    env, transcript, hook, hook_input = live.env, live.transcript, live.hook, live.hook_input
    small = transcript.with_name("small-session.jsonl")
    build_transcript(small, max(1, size_mb // 20))
    small_input = json.dumps({"session_id": small.stem, "transcript_path": str(small)}).encode()
    timed(hook, small_input, env)
    for label, path, payload in (("", transcript, hook_input), (" (small)", small, small_input)):
        seconds = [append_and_hook(path, hook, payload, env) for _ in range(max(3, runs // 3))]
        print(f"hook    50 KB appended to the {path.stat().st_size / 1e6:.0f} MB transcript{label}, CPU of hook "
              f"and worker: {median_ms(seconds)} (goal <= 100 ms)")
    beside_pass(transcript, hook, hook_input, env, max(3, runs // 3))
    local = {**env, "XSHARE_WORKER": "0"}
    seconds = [append_and_hook(transcript, hook, hook_input, local) for _ in range(max(3, runs // 3))]
    print(f"hook    the same without the worker (XSHARE_WORKER=0): {median_ms(seconds)}")


def session_start(hook: list[str], transcript: Path, env: dict, runs: int) -> None:
    """The hook at SessionStart: the call that starts the background pass (its CPU, and the pass's wall
    time over this transcript), then, the pass done, the usual call (a stamp read) against the same call
    with the pass turned off (the hook as it was before the pass existed)."""
    payload = json.dumps({"session_id": transcript.stem, "transcript_path": str(transcript),
                          "hook_event_name": "SessionStart"}).encode()
    env = {**env, "CLAUDE_CONFIG_DIR": str(transcript.parents[2])}  # the pass reads this bench's history only
    env.pop("XSHARE_NO_BACKGROUND", None)
    stamp = Path(env["XSHARE_HOME"], "cache", "background.json")
    started = time.perf_counter()
    first = cpu_of_hook(hook, payload, env)
    while not stamp.exists():
        if time.perf_counter() - started > 600:
            sys.exit("the background pass did not finish in 10 minutes (see the hook log)")
        time.sleep(0.05)
    print(f"hook    SessionStart starting the background pass, CPU: {first * 1e3:.0f} ms; the pass (this "
          f"transcript, counts known) done in {time.perf_counter() - started:.1f} s at low priority")
    on, off = [], []
    for _ in range(runs):
        on.append(cpu_of_hook(hook, payload, env))
        off.append(cpu_of_hook(hook, payload, {**env, "XSHARE_NO_BACKGROUND": "1"}))
    print(f"hook    SessionStart, no new bytes, CPU: {median_ms(on)} (pass done: the stamp read); "
          f"with XSHARE_NO_BACKGROUND=1: {median_ms(off)}")


# the background pass's detached process (xshare.live.background.main: nice 19, idle I/O), in the foreground
_PASS = "import sys; sys.path.insert(0, sys.argv[1]); from xshare.live.background import main; sys.exit(main())"


def beside_pass(transcript: Path, hook: list[str], payload: bytes, env: dict, runs: int) -> None:
    """What a session feels of the background pass: the hook's wall time for a 50 KB batch while a pass
    measures this bench's history from nothing (its own state folder, so it has every text to count),
    against the same with nothing else running."""
    quiet = [append_and_time(transcript, hook, payload, env) for _ in range(runs)]
    other = Path(tempfile.mkdtemp(prefix="xshare-pass-"))
    (other / "home").mkdir()  # an empty home: the pass reads this bench's Claude Code history and nothing else
    pass_env = {key: value for key, value in env.items() if key not in ("XSHARE_NO_BACKGROUND", "HERMES_HOME")}
    pass_env.update(HOME=str(other / "home"), XSHARE_HOME=str(other / "state"),
                    CLAUDE_CONFIG_DIR=str(transcript.parents[2]))
    started = time.perf_counter()
    running = subprocess.Popen([sys.executable, "-c", _PASS, str(REPO)], env=pass_env)
    busy = []
    while running.poll() is None:
        busy.append(append_and_time(transcript, hook, payload, env))
    took = time.perf_counter() - started
    shutil.rmtree(other, ignore_errors=True)
    if len(busy) < 3:
        print(f"hook    beside the background pass: the pass took {took:.1f} s, too short to measure beside")
        return
    print(f"hook    50 KB batch, wall, while a background pass measured this history from nothing ({took:.1f} s, "
          f"{len(busy)} calls): {median_ms(busy)}; with nothing else running: {median_ms(quiet)}")


def append_and_time(path: Path, hook: list[str], payload: bytes, env: dict) -> float:
    with path.open("ab") as handle:
        handle.write(grow_by(50_000))
    return timed(hook, payload, env)


def append_and_hook(path: Path, hook: list[str], payload: bytes, env: dict) -> float:
    with path.open("ab") as handle:
        handle.write(grow_by(50_000))
    return cpu_of_hook(hook, payload, env)


def cpu_of_hook(hook: list[str], payload: bytes, env: dict) -> float:
    """CPU seconds of one hook call: its own process and what the warm worker spent serving it."""
    before_worker = worker_cpu(env)
    before = os.times()
    subprocess.run(hook, input=payload, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    after = os.times()
    own = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return own + max(0.0, worker_cpu(env) - before_worker)


def worker_cpu(env: dict) -> float:
    """The hook worker's CPU seconds so far (Linux /proc), 0 when none runs."""
    for pid_file in Path(env["XSHARE_HOME"], "live").glob("worker-*.pid"):
        try:
            fields = Path(f"/proc/{pid_file.read_text().strip()}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            continue
    return 0.0


def stop_worker(env: dict) -> None:
    """End the worker this bench started (by its pid file), so it does not outlive the bench."""
    import signal

    for pid_file in Path(env["XSHARE_HOME"], "live").glob("worker-*.pid"):
        try:
            os.kill(int(pid_file.read_text().strip()), signal.SIGTERM)
        except (OSError, ValueError):
            pass


def grow_by(size: int) -> bytes:
    """About `size` bytes of new turns for the bench session (fresh ids, so each is new work)."""
    from xshare.demo import TranscriptWriter, text

    writer = TranscriptWriter(f"grow-{time.time_ns()}", "/home/dev/big", start=datetime.now(timezone.utc))
    writer.user("One more pass.")
    lines: list[str] = []
    while sum(len(line) + 1 for line in lines) < size:
        read = writer.use("Read", {"file_path": "/home/dev/big/extra.py"})
        writer.read_result(read, "/home/dev/big/extra.py", f"# {time.time_ns()}\n" + "x = 1\n" * 200)
        writer.call(text("ok"))
        lines = writer.lines()
    return "".join(line + "\n" for line in lines).encode()


def load_seconds(env: dict, fresh: bool) -> float:
    home = Path(env["XSHARE_HOME"])
    if fresh:
        shutil.rmtree(home / "vocab", ignore_errors=True)
    code = "import time; t=time.perf_counter(); from xshare.measure import tokens; " \
           "tokens.Counter(tokens.choose()).load(); print(time.perf_counter()-t)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**env, "PYTHONPATH": str(REPO)})
    return float(done.stdout.strip() or "nan")


if __name__ == "__main__":
    main()
