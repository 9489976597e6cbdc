"""The hook's export over OpenTelemetry: off by default; at a turn's end, switched on by Claude Code's own telemetry
variables or XSHARE_OTLP, the session's counters reach the collector with the figures `xshare session` shows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from otlp_receiver import OtlpReceiver, bypass_proxies

from tests.conftest import session_json
from xshare.demo import write_demo_corpus
from xshare.export.points import CALLS, EXPLORATION, PROMPT
from xshare.live import hook as live_hook
from xshare.state.paths import hook_log

REPO = Path(__file__).resolve().parents[2]
CLAUDE_TELEMETRY = {"CLAUDE_CODE_ENABLE_TELEMETRY": "1", "OTEL_METRICS_EXPORTER": "otlp"}
SETTINGS = ("XSHARE_OTLP", "CLAUDE_CODE_ENABLE_TELEMETRY", "OTEL_METRICS_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT",
            "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_SDK_DISABLED")


@pytest.fixture(autouse=True)
def no_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """None of the switches set, Claude Code's settings in a folder of the test's; the OTEL_* variables the hook
    copies from them into its environment (the SDK reads them there) are gone after the test."""
    for name in (*SETTINGS, "OTEL_RESOURCE_ATTRIBUTES", "OTEL_EXPORTER_OTLP_PROTOCOL"):
        monkeypatch.setenv(name, "")  # so that the test's end removes what the hook set
        monkeypatch.delenv(name)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))
    bypass_proxies(monkeypatch)


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    """The demo's longest main session, where Claude Code would keep it."""
    demo = write_demo_corpus(tmp_path / "demo")
    return max((path for path in demo.glob("*/*.jsonl")), key=lambda path: path.stat().st_size)


@pytest.fixture
def receiver():
    with OtlpReceiver() as made:
        yield made


def turn_end(path: Path, event: str = "Stop") -> None:
    payload = {"session_id": path.stem, "transcript_path": str(path), "cwd": "/home/dev/todo-api",
               "hook_event_name": event, "permission_mode": "default"}
    live_hook.run_hook(json.dumps(payload).encode())


def exported(receiver: OtlpReceiver) -> dict[tuple, int]:
    return {(point["metric"], point["attributes"].get("basis")): point["value"] for point in receiver.metric_points()}


def test_on_through_claude_codes_own_variables_a_turns_end_exports_the_session(
        capsys, transcript: Path, receiver: OtlpReceiver, monkeypatch: pytest.MonkeyPatch):
    for name, value in {**CLAUDE_TELEMETRY, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url}.items():
        monkeypatch.setenv(name, value)
    turn_end(transcript, "PostToolBatch")  # a tool batch counts, but exports nothing: only turns' ends do
    assert receiver.requests == []
    os.utime(transcript)  # the turn's end finds something new, as after a reply
    turn_end(transcript)
    row = session_json(capsys, transcript.stem)
    sent = exported(receiver)
    assert sent[(PROMPT, "bill")] == row["prompt_tokens_billed"] == 1_451_782
    assert sent[(EXPLORATION, "bill")] == row["billed_tokens"]["exploration"] == 379_854
    assert sent[(CALLS, None)] == row["api_calls"] == 43
    assert {point["attributes"]["session.id"] for point in receiver.metric_points()} == {transcript.stem}
    assert not hook_log().exists()


def test_on_through_the_settings_claude_code_exports_with(capsys, tmp_path: Path, transcript: Path,
                                                            receiver: OtlpReceiver, monkeypatch: pytest.MonkeyPatch):
    """Claude Code gives its hooks CLAUDE_CODE_ENABLE_TELEMETRY but none of the OTEL_* variables: the hook finds
    them in the `env` of Claude Code's settings, where a team sets them (here the user's settings.json)."""
    config = tmp_path / "claude-config"
    config.mkdir()
    settings = {"env": {"OTEL_METRICS_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url,
                        "OTEL_RESOURCE_ATTRIBUTES": "team=payments", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"},
                "model": "opus"}
    (config / "settings.json").write_text(json.dumps(settings))
    monkeypatch.setenv("CLAUDE_CODE_ENABLE_TELEMETRY", "1")
    turn_end(transcript)
    points = receiver.metric_points()
    assert exported(receiver)[(PROMPT, "bill")] == session_json(capsys, transcript.stem)["prompt_tokens_billed"]
    assert {point["resource"]["team"] for point in points} == {"payments"}


def test_xshare_otlp_names_the_endpoint_and_off_wins_over_claude_codes_variables(
        transcript: Path, receiver: OtlpReceiver, monkeypatch: pytest.MonkeyPatch):
    for name, value in {**CLAUDE_TELEMETRY, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, "XSHARE_OTLP": "off"}.items():
        monkeypatch.setenv(name, value)
    turn_end(transcript)
    assert receiver.requests == []
    monkeypatch.delenv("CLAUDE_CODE_ENABLE_TELEMETRY")
    monkeypatch.setenv("XSHARE_OTLP", receiver.url)
    os.utime(transcript)
    turn_end(transcript)
    assert exported(receiver)[(CALLS, None)] == 43


def test_a_collector_that_is_not_there_is_a_line_in_the_hooks_log(
        capsys, transcript: Path, monkeypatch: pytest.MonkeyPatch):
    with OtlpReceiver() as gone:
        url = gone.url
    monkeypatch.setenv("XSHARE_OTLP", url)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")
    turn_end(transcript)
    assert capsys.readouterr() == ("", "")
    assert f"could not export over OpenTelemetry: the OTLP receiver at {url}/v1/metrics" in hook_log().read_text()
    assert session_json(capsys, transcript.stem)["api_calls"] == 43  # the ledger and history kept all the same


@pytest.mark.parametrize("environ, wanted", [
    ({}, None),
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, None),  # an endpoint alone switches nothing on
    ({"CLAUDE_CODE_ENABLE_TELEMETRY": "1"}, None),  # Claude Code's telemetry, but not its metrics over OTLP
    ({**CLAUDE_TELEMETRY, "OTEL_METRICS_EXPORTER": "console,otlp"}, ""),
    ({**CLAUDE_TELEMETRY, "XSHARE_OTLP": "false"}, None),
    ({"XSHARE_OTLP": "on"}, ""),
    ({"XSHARE_OTLP": "http://collector:4318"}, "http://collector:4318"),
])
def test_what_switches_the_export_on(environ: dict, wanted: str | None):
    assert live_hook.otlp_wanted(environ) == wanted


def test_off_a_turns_end_loads_nothing_of_opentelemetry(transcript: Path, tmp_path: Path):
    """The default: the hook's turn's end (tokenizer, reader, history) imports neither the SDK nor xshare's
    exporter, even with a collector's endpoint in the environment."""
    payload = json.dumps({"session_id": transcript.stem, "transcript_path": str(transcript),
                          "hook_event_name": "Stop"})
    code = (f"import sys; sys.path.insert(0, {str(REPO)!r}); from xshare.live.hook import run_hook; "
            f"run_hook({payload!r}.encode()); "
            "print(sorted(name for name in sys.modules if name.startswith(('opentelemetry', 'google.protobuf', "
            "'xshare.export'))))")
    env = {name: value for name, value in os.environ.items() if name not in SETTINGS}
    env.update(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:9", XSHARE_HOME=str(tmp_path / "child-home"),
               XSHARE_NO_BACKGROUND="1")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done
    assert (tmp_path / "child-home" / "history" / "sessions.jsonl").exists()  # the turn's end did its work
