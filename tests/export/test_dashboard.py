"""The Grafana dashboard that ships in docs/grafana/ (a team imports it; Grafana does not install here, so its
structure is checked): valid JSON a Grafana of schema 39 loads, every query naming only the counters xshare
exports and Claude Code's, xshare's share per session and per week beside Claude Code's token panels.
tests/export/test_prometheus.py runs its xshare queries against a real Prometheus."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from xshare.export.points import METRICS, session_attributes

DASHBOARD = Path(__file__).resolve().parents[2] / "docs" / "grafana" / "xshare-dashboard.json"
# Claude Code's counters as Prometheus names them (../shared/docs/agents.md, "Team telemetry")
CLAUDE_CODE = {"claude_code_token_usage_tokens_total", "claude_code_cost_usage_USD_total",
               "claude_code_session_count_total", "claude_code_lines_of_code_count_total",
               "claude_code_active_time_total_seconds_total"}


def prometheus_name(metric: str) -> str:
    """An OpenTelemetry counter's name as Prometheus shows it: dots to underscores, `_total` (its unit, tokens,
    is already the name's end; a {call} annotation is dropped)."""
    return metric.replace(".", "_") + "_total"


def panels() -> list[dict]:
    return [panel for panel in json.loads(DASHBOARD.read_text())["panels"] if panel["type"] != "row"]


def expressions() -> list[str]:
    return [target["expr"] for panel in panels() for target in panel["targets"]]


def panel_expr(title: str) -> str:
    [panel] = [panel for panel in panels() if panel["title"] == title]
    return panel["targets"][0]["expr"]


def test_it_is_a_dashboard_grafana_loads():
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["uid"] == "xshare-exploration" and dashboard["schemaVersion"] >= 36
    every = dashboard["panels"]
    assert len({panel["id"] for panel in every}) == len(every)
    for panel in every:
        grid = panel["gridPos"]
        assert grid["x"] + grid["w"] <= 24 and grid["h"] > 0
    for panel in panels():
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"} and panel["targets"]
        assert len({target["refId"] for target in panel["targets"]}) == len(panel["targets"])
    variables = {variable["name"]: variable for variable in dashboard["templating"]["list"]}
    assert variables["datasource"]["query"] == "prometheus"
    assert variables["source"]["current"]["value"] == "interactive"  # the reading is of sessions a person drove


def test_every_query_names_only_the_exported_counters_and_claude_codes():
    ours = {prometheus_name(metric) for metric in METRICS}
    named = {name for expr in expressions() for name in re.findall(r"\b(?:xshare|claude_code)_\w+", expr)}
    assert named <= ours | CLAUDE_CODE, named - ours - CLAUDE_CODE
    assert ours - {"xshare_reread_tokens_total", "xshare_api_calls_total"} <= named
    assert "claude_code_token_usage_tokens_total" in named
    labels = {label.replace(".", "_") for label in session_attributes({"id": "x"})} | {"basis"}
    for expr in expressions():
        for selector in re.findall(r"xshare_\w+\{([^}]*)\}", expr):
            assert {pair.split("=")[0].rstrip("!~").strip() for pair in selector.split(",")} <= labels, selector


@pytest.mark.parametrize("title, grouped_by", [("Exploration share per session", "session_id"),
                                               ("Exploration share per week", None)])
def test_the_share_is_a_ratio_of_the_counters_on_the_bill(title: str, grouped_by: str | None):
    expr = panel_expr(title)
    numerator, _, denominator = expr.partition(" / ")
    assert "xshare_exploration_tokens_total" in numerator and 'basis="bill"' in numerator
    assert "xshare_prompt_tokens_total" in denominator and 'basis="bill"' in denominator
    if grouped_by:
        assert numerator.startswith(f"sum by ({grouped_by})") and denominator.startswith(f"sum by ({grouped_by})")
    else:
        assert "[1w]" in expr and [panel for panel in panels() if panel["title"] == title][0]["interval"] == "1w"


def test_claude_codes_token_panels_stand_beside_xshares():
    titles = [panel["title"] for panel in json.loads(DASHBOARD.read_text())["panels"]]
    assert titles.index("Exploration share (xshare)") < titles.index("Claude Code's own telemetry")
    both = panel_expr("Prompt tokens per session: Claude Code's count and xshare's bill")
    assert "claude_code_token_usage_tokens_total" in both
    [panel] = [panel for panel in panels() if panel["title"].startswith("Prompt tokens per session")]
    assert [target["expr"].startswith("sum by (session_id)") for target in panel["targets"]] == [True, True]
