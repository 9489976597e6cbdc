"""Claude Code's own OpenTelemetry and xshare's, side by side in one collector: the real CLI, offline.

The pinned Claude Code ($XSHARE_TEST_CLAUDE) runs against tests/support/fake_anthropic.py with its telemetry on,
set as a team sets it, in the `env` of its settings (metrics and log events over OTLP http/protobuf, a 1 s export
interval, cumulative), to tests/support/otlp_receiver.py; the plugin's hook exports xshare's counters to the
same receiver at the turn's end (it finds those settings itself: Claude Code passes its hooks no OTEL_*
variable), and `xshare collect --otlp` exports the same session once more. Claude Code's token.usage (input +
cacheRead + cacheCreation) for the session equals xshare's billed prompt tokens, and its api_request events
xshare's API calls, both joined on session.id. DISABLE_TELEMETRY=1 and CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1
(the suite's quiet settings) do not mute it. About 15 s.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from claude_host import ClaudeHost, claude_missing
from fake_anthropic import FakeAnthropic
from otlp_receiver import OtlpReceiver, wait_for

from xshare.export.points import CALLS, EXPLORATION, PROMPT

pytestmark = [pytest.mark.realhost, pytest.mark.skipif(claude_missing() is not None, reason=str(claude_missing()))]

PROMPT_TYPES = ("input", "cacheRead", "cacheCreation")  # claude_code.token.usage's prompt side


@pytest.fixture
def setup(tmp_path: Path):
    with FakeAnthropic(lifetime=900) as fake, OtlpReceiver() as receiver:
        host = ClaudeHost(tmp_path / "cc", fake)
        (host.project / "notes.txt").write_text("first line of the notes\nsecond line\n")
        (host.project / "todo.txt").write_text("- write the tests\n- ship it\n")
        telemetry = {"CLAUDE_CODE_ENABLE_TELEMETRY": "1", "OTEL_METRICS_EXPORTER": "otlp",
                     "OTEL_LOGS_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
                     "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, "OTEL_METRIC_EXPORT_INTERVAL": "1000",
                     "OTEL_LOGS_EXPORT_INTERVAL": "1000",
                     "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE": "cumulative"}
        (host.config / "settings.json").write_text(json.dumps({"env": telemetry}))
        yield host, receiver


def latest(points: list[dict]) -> dict[tuple, dict]:
    """Each series' last point (cumulative: its total so far), by resource instance and attributes."""
    found: dict[tuple, dict] = {}
    for point in points:
        key = (point["metric"], point["resource"].get("service.instance.id"),
               tuple(sorted((name, str(value)) for name, value in point["attributes"].items())))
        if key not in found or point["time"] >= found[key]["time"]:
            found[key] = point
    return found


def claude_prompt_tokens(receiver: OtlpReceiver, session: str) -> int:
    return sum(point["value"] for point in latest(receiver.metric_points()).values()
               if point["metric"] == "claude_code.token.usage" and point["attributes"].get("session.id") == session
               and point["attributes"].get("type") in PROMPT_TYPES)


def api_requests(receiver: OtlpReceiver, session: str) -> list[dict]:
    return [record for record in receiver.log_records() if record["attributes"].get("event.name") == "api_request"
            and record["attributes"].get("session.id") == session]


def xshare_points(points: list[dict], session: str) -> dict[tuple, int]:
    """(metric, basis) -> the session's total over its threads (itself, its subagents), each thread's last."""
    totals: dict[tuple, int] = {}
    for point in latest([point for point in points if point["resource"].get("service.name") == "xshare"]).values():
        if point["attributes"]["session.id"] == session:
            key = (point["metric"], point["attributes"].get("basis"))
            totals[key] = totals.get(key, 0) + int(point["value"])
    return totals


def collect_otlp(host: ClaudeHost, receiver: OtlpReceiver) -> list[dict]:
    """`xshare collect --otlp URL` on this Claude Code's sessions; the points it sent."""
    before = len(receiver.requests)
    done = subprocess.run([sys.executable, "-m", "xshare", "collect", "--all", "--otlp", receiver.url],
                          env=host.env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "over OTLP to" in done.stdout, done.stderr
    return [point for point in receiver.metric_points(since=before) if point["resource"]["service.name"] == "xshare"]


def test_claude_codes_tokens_and_api_requests_equal_xshares_bill_and_calls(setup):
    host, receiver = setup
    _, requests = host.claude_p(f"XREAD {host.project / 'notes.txt'}\nXBASH cat todo.txt")
    (transcript,) = host.transcripts()
    session, bill = transcript.stem, sum(request.prompt_tokens for request in requests)
    assert len(requests) == 2
    # Claude Code's families: its token counter and one api_request event per call, under its session.id
    wait_for(lambda: claude_prompt_tokens(receiver, session) == bill, timeout=60)
    wait_for(lambda: len(api_requests(receiver, session)) == len(requests), timeout=60)
    # xshare's, from the plugin's hook at the turn's end (it outlives the -p run)
    hooked = wait_for(lambda: (found := xshare_points(receiver.metric_points(), session)).get((CALLS, None))
                      == len(requests) and found, timeout=90)
    assert hooked[(PROMPT, "bill")] == bill == claude_prompt_tokens(receiver, session)
    assert hooked[(CALLS, None)] == len(api_requests(receiver, session)) == len(requests)
    assert hooked[(EXPLORATION, "bill")] > 0  # the read and the cat, carried by the second call
    # the one-shot export of the same session: the same figures, the same session.id
    collected = xshare_points(collect_otlp(host, receiver), session)
    assert collected == hooked
    row = host.xshare("session", session)
    assert (row["prompt_tokens_billed"], row["api_calls"], row["billed_tokens"]["exploration"]) == (
        bill, len(requests), hooked[(EXPLORATION, "bill")])
    # Claude Code's service and xshare's, each its own; the metric families both present
    services = {point["resource"].get("service.name") for point in receiver.metric_points()}
    assert {"claude-code", "xshare"} <= services


def test_a_subagents_calls_join_their_session_as_claude_code_counts_them(setup):
    """Claude Code counts a subagent's calls under the session that started it; xshare's subagent row carries
    that session.id too, so the two sums match."""
    host, receiver = setup
    _, requests = host.claude_p(f"XAGENT XREAD {host.project / 'todo.txt'}")
    assert any(request.subagent for request in requests) and any(not request.subagent for request in requests)
    (transcript,) = host.transcripts()
    session, bill = transcript.stem, sum(request.prompt_tokens for request in requests)
    wait_for(lambda: claude_prompt_tokens(receiver, session) == bill, timeout=60)
    wait_for(lambda: len(api_requests(receiver, session)) == len(requests), timeout=60)
    sent = collect_otlp(host, receiver)
    threads = {point["attributes"]["thread.id"] for point in sent if point["attributes"]["session.id"] == session}
    assert len(threads) == 2  # the session and its subagent
    collected = xshare_points(sent, session)
    assert collected[(PROMPT, "bill")] == bill == claude_prompt_tokens(receiver, session)
    assert collected[(CALLS, None)] == len(requests) == len(api_requests(receiver, session))
