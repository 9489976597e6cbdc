"""Claude Code's telemetry settings as the hook reads them (xshare/agents/claude_code/telemetry.py): the OTEL_*
entries of its settings files' `env`, a project's local file over its shared one over the user's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from xshare.agents.claude_code.telemetry import telemetry_env


def test_the_stronger_settings_file_wins_and_only_telemetry_entries_are_kept(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch):
    config, project = tmp_path / "config", tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    config.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    (config / "settings.json").write_text(json.dumps({"env": {
        "CLAUDE_CODE_ENABLE_TELEMETRY": "1", "OTEL_METRICS_EXPORTER": "otlp",
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://user:4318", "ANTHROPIC_API_KEY": "not ours to read"}}))
    (project / ".claude" / "settings.json").write_text(json.dumps({"env": {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://project:4318", "OTEL_RESOURCE_ATTRIBUTES": "team=payments"}}))
    (project / ".claude" / "settings.local.json").write_text(json.dumps({"env": {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://local:4318"}}))
    assert telemetry_env(str(project)) == {
        "CLAUDE_CODE_ENABLE_TELEMETRY": "1", "OTEL_METRICS_EXPORTER": "otlp",
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://local:4318", "OTEL_RESOURCE_ATTRIBUTES": "team=payments"}
    assert telemetry_env(None)["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://user:4318"


def test_broken_or_odd_settings_files_are_passed_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    config, project = tmp_path / "config", tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    config.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    (config / "settings.json").write_text('{"env": {"OTEL_METRICS_EXPORTER": "otlp"')  # cut short
    (project / ".claude" / "settings.json").write_text(json.dumps(["not", "an", "object"]))
    (project / ".claude" / "settings.local.json").mkdir()  # a folder where the file goes
    assert telemetry_env(str(project)) == {}
