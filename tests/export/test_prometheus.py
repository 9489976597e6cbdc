"""Prometheus scrapes xshare's counters and the shipped dashboard's PromQL reads the shares back: per session,
pooled, per week (Debian's prometheus 2.42 has no OTLP receiver but scrapes: the counters are served by
OpenTelemetry's Prometheus reader over the same MeterProvider the OTLP export uses, xshare/export/otlp.py).
Skips without a `prometheus` on the PATH (.ci/run installs Debian's with apt when run as root). About 10 s.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from otlp_receiver import wait_for

from tests.export.test_dashboard import panel_expr, panels
from xshare.cli import main
from xshare.demo import write_demo_corpus
from xshare.export.otlp import meter_provider
from xshare.export.points import points_of

PROMETHEUS = shutil.which("prometheus")
pytestmark = pytest.mark.skipif(PROMETHEUS is None, reason="no prometheus on the PATH (.ci/run installs it with apt)")
# Grafana's variables as the dashboard would fill them: the last hour, every agent and source
FILLED = {"$__range": "1h", "$__rate_interval": "1m", "$agent": ".*", "$source": ".*"}


def fill(expr: str) -> str:
    for variable, value in FILLED.items():
        expr = expr.replace(variable, value)
    return expr


def dashboard_query(title: str) -> str:
    """The query of the shipped dashboard's panel (docs/grafana/xshare-dashboard.json), its variables filled."""
    return fill(panel_expr(title))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# straight to Prometheus on 127.0.0.1, whatever proxy the environment names (the fresh-clone pass names a closed one)
DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def query(base: str, promql: str) -> list[dict]:
    url = f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
    with DIRECT.open(url, timeout=10) as answer:
        body = json.load(answer)
    assert body["status"] == "success", body
    return body["data"]["result"]


@pytest.fixture
def demo_rows(tmp_path: Path) -> list[dict]:
    path = tmp_path / "rows.jsonl"
    assert main(["collect", "--all", "--rows", str(path), "--claude-root",
                 str(write_demo_corpus(tmp_path / "claude"))]) == 0
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def scraped(tmp_path: Path, demo_rows: list[dict]):
    """xshare's counters on a /metrics endpoint, and a Prometheus scraping it every second; its base URL."""
    from opentelemetry.exporter.prometheus import PrometheusMetricReader
    from prometheus_client import CollectorRegistry, start_http_server

    registry = CollectorRegistry()
    provider = meter_provider(points_of(demo_rows), [PrometheusMetricReader(registry=registry)])
    metrics_port, web_port = free_port(), free_port()
    server, _ = start_http_server(metrics_port, addr="127.0.0.1", registry=registry)
    config = tmp_path / "prometheus.yml"
    config.write_text("global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
                      "scrape_configs:\n"
                      f"  - {{job_name: xshare, static_configs: [{{targets: ['127.0.0.1:{metrics_port}']}}]}}\n")
    log = (tmp_path / "prometheus.log").open("w")
    prometheus = subprocess.Popen([str(PROMETHEUS), f"--config.file={config}",
                                   f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                                   f"--web.listen-address=127.0.0.1:{web_port}"], stdout=log, stderr=log)
    try:
        yield f"http://127.0.0.1:{web_port}"
    finally:
        prometheus.terminate()
        prometheus.wait(timeout=30)
        log.close()
        server.shutdown()
        provider.shutdown()


def test_the_share_per_session_read_back_with_promql_is_the_rows(scraped: str, demo_rows: list[dict]):
    per_session = dashboard_query("Exploration share per session")

    def answered() -> list[dict]:
        try:
            return query(scraped, per_session)
        except OSError:
            return []  # not listening yet, or no scrape yet

    result = wait_for(lambda: len(found := answered()) == 6 and found, timeout=90)
    shares = {item["metric"]["session_id"]: float(item["value"][1]) for item in result}
    sessions = {row["id"] for row in demo_rows if not row["parent"]}
    assert set(shares) == sessions
    for session in sessions:  # pooled over the session and its subagents and helpers, as xshare pools
        family = [row for row in demo_rows if session in (row["id"], row["parent"])]
        expected = (sum(row["billed_tokens"]["exploration"] for row in family)
                    / sum(row["prompt_tokens_billed"] for row in family))
        assert shares[session] == pytest.approx(expected, rel=1e-9)
    pooled = sum(row["billed_tokens"]["exploration"] for row in demo_rows) / sum(
        row["prompt_tokens_billed"] for row in demo_rows)
    for title in ("Exploration share of the bill", "Exploration share per week"):
        [value] = query(scraped, dashboard_query(title))
        assert float(value["value"][1]) == pytest.approx(pooled, rel=1e-9), title
    counted = next(panel for panel in panels() if panel["title"].startswith("Sessions and"))
    [sessions, calls] = (query(scraped, fill(target["expr"])) for target in counted["targets"])
    assert float(sessions[0]["value"][1]) == 6
    assert float(calls[0]["value"][1]) == sum(row["api_calls"] for row in demo_rows)
    [target] = query(scraped, 'count by (service_name) (target_info{service_name="xshare"})')
    assert target["metric"]["service_name"] == "xshare"
