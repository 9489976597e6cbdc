"""A small OTLP receiver for the tests: http/protobuf on a free 127.0.0.1 port, decoded with opentelemetry-proto.

It takes what a collector would (POST /v1/metrics, /v1/logs, /v1/traces; gzip or not), keeps every request
decoded, and answers each with its empty Export*ServiceResponse, so an exporter (xshare's, Claude Code's) sees
a collector. `metric_points()` flattens the metrics to one dict per data point, `log_records()` the log
records; `wait_for` waits for what a test asserts on. Stdlib server, no collector needed.
"""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest, ExportLogsServiceResponse
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

KINDS = {"/v1/metrics": (ExportMetricsServiceRequest, ExportMetricsServiceResponse),
         "/v1/logs": (ExportLogsServiceRequest, ExportLogsServiceResponse),
         "/v1/traces": (ExportTraceServiceRequest, ExportTraceServiceResponse)}


def any_value(value: Any) -> Any:
    """An AnyValue as Python: its one set field."""
    field = value.WhichOneof("value")
    if field is None:
        return None
    if field == "array_value":
        return [any_value(item) for item in value.array_value.values]
    if field == "kvlist_value":
        return attributes(value.kvlist_value.values)
    return getattr(value, field)


def attributes(pairs: Any) -> dict[str, Any]:
    return {pair.key: any_value(pair.value) for pair in pairs}


class _Handler(BaseHTTPRequestHandler):
    receiver: OtlpReceiver
    protocol_version = "HTTP/1.1"

    def log_message(self, *_: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        kind = KINDS.get(self.path.split("?")[0])
        if kind is None or "protobuf" not in (self.headers.get("Content-Type") or ""):
            self.receiver.refused.append((self.path, self.headers.get("Content-Type")))
            self._answer(404 if kind is None else 415, b"")
            return
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        request = kind[0]()
        request.ParseFromString(body)
        with self.receiver.lock:
            self.receiver.requests.append((self.path, request, dict(self.headers)))
        self._answer(200, kind[1]().SerializeToString())

    def _answer(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class OtlpReceiver:
    """`with OtlpReceiver() as receiver:` serves at receiver.url (a collector's base URL) until the block ends."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, Any, dict]] = []
        self.refused: list[tuple[str, str | None]] = []
        self.lock = threading.Lock()
        handler = type("Handler", (_Handler,), {"receiver": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> OtlpReceiver:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *_: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    def of(self, path: str, since: int = 0) -> list[Any]:
        """The requests to `path`, from the since-th request received."""
        with self.lock:
            return [request for at, request, _ in self.requests[since:] if at == path]

    def metric_points(self, since: int = 0) -> list[dict[str, Any]]:
        """Every number data point received (from the since-th request): resource and point attributes, scope,
        metric, unit, value, temporality (1 delta, 2 cumulative), monotonic, start and time."""
        points = []
        for request in self.of("/v1/metrics", since):
            for resource_metrics in request.resource_metrics:
                resource = attributes(resource_metrics.resource.attributes)
                for scope_metrics in resource_metrics.scope_metrics:
                    for metric in scope_metrics.metrics:
                        points += _number_points(metric, resource, scope_metrics.scope.name)
        return points

    def log_records(self) -> list[dict[str, Any]]:
        """Every log record received: resource attributes, scope, event name, body and attributes."""
        records = []
        for request in self.of("/v1/logs"):
            for resource_logs in request.resource_logs:
                resource = attributes(resource_logs.resource.attributes)
                for scope_logs in resource_logs.scope_logs:
                    records += [{"resource": resource, "scope": scope_logs.scope.name, "event": record.event_name,
                                 "body": any_value(record.body), "attributes": attributes(record.attributes)}
                                for record in scope_logs.log_records]
        return records

    def bodies(self) -> list[bytes]:
        """Every request as it came, serialized again: for checks that no text of the data went out."""
        with self.lock:
            return [request.SerializeToString() for _, request, _ in self.requests]


def _number_points(metric: Any, resource: dict, scope: str) -> list[dict[str, Any]]:
    field = metric.WhichOneof("data")
    if field not in ("sum", "gauge"):
        return []
    data = getattr(metric, field)
    return [{"resource": resource, "scope": scope, "metric": metric.name, "unit": metric.unit,
             "attributes": attributes(point.attributes),
             "value": point.as_int if point.WhichOneof("value") == "as_int" else point.as_double,
             "temporality": getattr(data, "aggregation_temporality", 0),
             "monotonic": getattr(data, "is_monotonic", False),
             "start": point.start_time_unix_nano, "time": point.time_unix_nano} for point in data.data_points]


def wait_for(predicate: Callable[[], Any], timeout: float = 60, step: float = 0.2) -> Any:
    """predicate()'s first true value, waiting up to `timeout` seconds; AssertionError if it never comes."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not received within {timeout} s")
        time.sleep(step)


def bypass_proxies(monkeypatch) -> None:
    """The exporter reaches 127.0.0.1 directly, as a team whose proxy is set names its collector in NO_PROXY (the
    fresh-clone pass points every proxy at a closed port, and the OTLP exporter honours the proxy variables)."""
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(name, "127.0.0.1,localhost")
