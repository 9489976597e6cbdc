"""The per-session figures exported over OpenTelemetry (OTLP over http/protobuf), beside an agent's own metrics.

The points are export/points.py's; this module alone loads OpenTelemetry's SDK and exporter (the optional
extra `otel`), and only when exporting, so the report's and the hook's paths never pay for it. Each export is
one collection of observable counters whose value is a session's total so far: cumulative by default (what
Prometheus reads), so exporting a session again (the next turn, the next nightly run) moves its series on and
never counts it twice. The standard variables are honoured: OTEL_EXPORTER_OTLP_[METRICS_]ENDPOINT, _HEADERS,
_TIMEOUT, _COMPRESSION, _CERTIFICATE (by the exporter), _PROTOCOL (http/protobuf only),
OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE, OTEL_RESOURCE_ATTRIBUTES and OTEL_SDK_DISABLED; the
service is always `xshare`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from xshare import __version__
from xshare.export.points import CALLS, METRICS, Point, points_of
from xshare.report.identity import machine_id

EXTRA_MISSING = ("exporting over OpenTelemetry needs the `otel` extra: pip install 'xshare[otel]' "
                 "(opentelemetry-sdk and opentelemetry-exporter-otlp-proto-http)")
PROTOCOL = "http/protobuf"
DEFAULT_ENDPOINT = "http://localhost:4318"
SIGNAL_PATH = "v1/metrics"  # what the standard appends to OTEL_EXPORTER_OTLP_ENDPOINT for metrics
REASON = 300  # characters of the exporter's own words on a failure
BATCH = 5_000  # data points a request, so a long history goes in several moderate requests


class ExportError(Exception):
    """Why nothing (or not everything) was exported, in words for stderr."""


def disabled() -> bool:
    """OTEL_SDK_DISABLED=true: the standard switch that turns every OpenTelemetry export off."""
    return os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true"


def protocol_problem() -> str | None:
    """A protocol other than http/protobuf asked for by the standard variables (xshare ships no gRPC)."""
    asked = (os.environ.get("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL") or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
             or PROTOCOL).strip()
    if asked == PROTOCOL:
        return None
    return (f"OTLP protocol {asked!r} asked for (OTEL_EXPORTER_OTLP_[METRICS_]PROTOCOL): xshare exports over "
            f"{PROTOCOL} only; set OTEL_EXPORTER_OTLP_METRICS_PROTOCOL={PROTOCOL} for it")


def metrics_url(endpoint: str) -> str:
    """An endpoint given as OTEL_EXPORTER_OTLP_ENDPOINT is (a collector's base URL) as the metrics URL; one
    already ending in /v1/metrics is kept."""
    endpoint = endpoint.strip()
    return endpoint if endpoint.rstrip("/").endswith("/" + SIGNAL_PATH) else endpoint.rstrip("/") + "/" + SIGNAL_PATH


def target(endpoint: str | None = None) -> str:
    """Where the metrics go: the endpoint given, else OTEL_EXPORTER_OTLP_METRICS_ENDPOINT as it is, else
    OTEL_EXPORTER_OTLP_ENDPOINT's /v1/metrics, else the standard's default (a collector on this machine)."""
    if endpoint:
        return metrics_url(endpoint)
    metrics = os.environ.get("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "").strip()
    return metrics or metrics_url(os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip() or DEFAULT_ENDPOINT)


def shown(url: str) -> str:
    """A URL as printed: without a user or password it may carry."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def delta_wanted() -> bool:
    """OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE=delta; cumulative otherwise (lowmemory keeps
    observable counters cumulative, as the standard says)."""
    return os.environ.get("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "").strip().lower() == "delta"


def meter_provider(points: Sequence[Point], readers: Sequence[Any]) -> Any:
    """A MeterProvider for `service.name=xshare` (plus OTEL_RESOURCE_ATTRIBUTES) whose counters report
    these points to these readers at each collection. ImportError without the extra."""
    from opentelemetry.metrics import CallbackOptions, Observation
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.resources import Resource

    # a stable instance (the machine's random id, report/identity.py): a new one per export would start a new
    # series for every session at every export, and a dashboard's sum would count a session once per export
    instance = machine_id() or "unknown"
    resource = Resource.create({"service.name": "xshare", "service.version": __version__,
                                "service.instance.id": instance})
    provider = MeterProvider(metric_readers=list(readers), resource=resource)
    meter = provider.get_meter("xshare", __version__)
    for name, (unit, description) in METRICS.items():
        mine = [Observation(point.value, dict(point.attributes)) for point in points if point.metric == name]

        def observe(_options: CallbackOptions, mine: list = mine) -> Iterable[Observation]:
            return mine

        meter.create_observable_counter(name, callbacks=[observe], unit=unit, description=description)
    return provider


def collected(points: Sequence[Point]) -> Any:
    """The points as one collection (MetricsData), in the temporality the standard variable asks."""
    from opentelemetry.sdk.metrics import ObservableCounter
    from opentelemetry.sdk.metrics.export import AggregationTemporality, InMemoryMetricReader

    temporality = AggregationTemporality.DELTA if delta_wanted() else AggregationTemporality.CUMULATIVE
    series = max((sum(1 for point in points if point.metric == name) for name in METRICS), default=0)
    reader = InMemoryMetricReader(preferred_temporality={ObservableCounter: temporality},
                                  cardinality_limits={ObservableCounter: series + 1})  # never an overflow series
    provider = meter_provider(points, [reader])
    try:
        return reader.get_metrics_data()
    finally:
        provider.shutdown()


class _Said(logging.Handler):
    """The exporter says why an export failed only in its log: kept, to tell the user."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def export(rows: Iterable[Mapping], endpoint: str | None = None) -> tuple[int, int]:
    """Export these sessions' rows (SessionRow, or a rows file's dicts) to the OTLP endpoint (`endpoint`, a
    base URL or a metrics URL; else the standard variables'); how many sessions and points were sent.
    ExportError with the reason when the extra is missing, the protocol is not http/protobuf, or the receiver
    refused them."""
    if disabled():
        return 0, 0
    why = protocol_problem()
    if why:
        raise ExportError(why)
    points = points_of(rows)
    try:
        data = collected(points)
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.sdk.metrics.export import MetricExportResult
    except ImportError as error:
        raise ExportError(EXTRA_MISSING) from error
    url = target(endpoint)
    exporter = OTLPMetricExporter(endpoint=url, max_export_batch_size=BATCH)
    said, logger = _Said(), logging.getLogger("opentelemetry.exporter.otlp")
    logger.addHandler(said)
    try:
        result = exporter.export(data) if data is not None else MetricExportResult.SUCCESS
    finally:
        logger.removeHandler(said)
        exporter.shutdown()
    if result is not MetricExportResult.SUCCESS:
        # the first message is the cause (the last is the giving up), without the exporter's retry words
        reason = f" ({said.messages[0].split(' encountered while')[0][:REASON]})" if said.messages else ""
        raise ExportError(f"the OTLP receiver at {shown(url)} did not take the metrics{reason}")
    return sum(1 for point in points if point.metric == CALLS), len(points)  # one calls point a session
