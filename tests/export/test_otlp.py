"""`xshare collect --otlp`: the window's sessions reach an OTLP receiver as counters equal to the rows file's figures.

Each test measures the demo corpus (invented Claude Code sessions with subagents, a compaction, a helper agent)
and exports it to tests/support/otlp_receiver.py over http/protobuf, which decodes what arrives with
opentelemetry-proto, as a collector would.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from otlp_receiver import OtlpReceiver, bypass_proxies

from xshare.cli import main
from xshare.demo import write_demo_corpus
from xshare.export.otlp import export
from xshare.export.points import CALLS, EXPLORATION, PROMPT, REREAD

CUMULATIVE, DELTA = 2, 1  # the proto's AggregationTemporality


@pytest.fixture
def demo_root(tmp_path: Path) -> Path:
    return write_demo_corpus(tmp_path / "claude")


@pytest.fixture(autouse=True)
def direct(monkeypatch: pytest.MonkeyPatch) -> None:
    bypass_proxies(monkeypatch)


@pytest.fixture
def receiver():
    with OtlpReceiver() as made:
        yield made


def collect(capsys, demo_root: Path, *extra: str) -> tuple[int, str, str]:
    code = main(["collect", "--all", "--claude-root", str(demo_root), *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def rows_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def by_series(points: list[dict]) -> dict[tuple, int]:
    """(metric, thread, basis) -> value, each series once."""
    found: dict[tuple, int] = {}
    for point in points:
        key = (point["metric"], point["attributes"]["thread.id"], point["attributes"].get("basis"))
        assert key not in found, f"one series twice in one export: {key}"
        found[key] = point["value"]
    return found


def test_every_session_arrives_with_its_rows_figures_and_ids(capsys, tmp_path: Path, demo_root: Path,
                                                             receiver: OtlpReceiver):
    rows_path = tmp_path / "rows.jsonl"
    code, out, err = collect(capsys, demo_root, "--rows", str(rows_path), "--otlp", receiver.url)
    assert code == 0, err
    rows = rows_of(rows_path)
    assert len(rows) == 8 and {row["source"] for row in rows} == {"interactive", "subagent", "internal"}
    assert f"exported 8 sessions (56 points) over OTLP to {receiver.url}/v1/metrics" in out
    points = receiver.metric_points()
    series = by_series(points)
    for row in rows:
        thread = row["id"]
        assert series[(PROMPT, thread, "bill")] == row["prompt_tokens_billed"]
        assert series[(PROMPT, thread, "context")] == row["context_tokens"]
        assert series[(EXPLORATION, thread, "bill")] == series[(EXPLORATION, thread, "context")]
        assert series[(EXPLORATION, thread, "bill")] == row["billed_tokens"]["exploration"] > 0
        assert series[(REREAD, thread, "bill")] == row["billed_tokens"]["reread"]
        assert series[(CALLS, thread, None)] == row["api_calls"]
    # the ratio a dashboard computes is the row's share
    for row in rows:
        share = series[(EXPLORATION, row["id"], "bill")] / series[(PROMPT, row["id"], "bill")]
        assert share == pytest.approx(row["exploration_share_of_prompt"], abs=1e-12)
    by_thread = {row["id"]: row for row in rows}
    for point in points:
        attributes, row = point["attributes"], by_thread[point["attributes"]["thread.id"]]
        # Claude Code's session.id: a subagent's and a helper's is their parent's, so a dashboard joins them
        assert attributes["session.id"] == (row["parent"] if row["source"] in ("subagent", "internal") else row["id"])
        assert (attributes["agent"], attributes["source"], attributes["model"], attributes["tokenizer"]) == (
            "claude-code", row["source"], row["model"], "o200k_base")
        assert point["resource"]["service.name"] == "xshare"
        assert point["resource"]["service.instance.id"] == row["machine"]  # one series per session, export after export
        assert (point["scope"], point["temporality"], point["monotonic"]) == ("xshare", CUMULATIVE, True)
        assert point["unit"] == ("{call}" if point["metric"] == CALLS else "tokens")
    assert {point["attributes"]["session.id"] for point in points} == {row["id"] for row in rows if not row["parent"]}


def test_nothing_of_the_sessions_text_or_paths_goes_out(capsys, tmp_path: Path, demo_root: Path,
                                                       receiver: OtlpReceiver):
    code, _, err = collect(capsys, demo_root, "--rows", str(tmp_path / "rows.jsonl"), "--otlp", receiver.url)
    assert code == 0, err
    rows = rows_of(tmp_path / "rows.jsonl")
    allowed = ({row[key] for row in rows for key in ("id", "agent", "source", "model", "tokenizer", "parent")}
               | {"bill", "context"})
    for point in receiver.metric_points():
        assert set(point["attributes"].values()) <= allowed, point["attributes"]
    sent = b"".join(receiver.bodies())
    texts = {str(demo_root), demo_root.name, *(path.name for path in demo_root.iterdir())}
    for path in demo_root.rglob("*.jsonl"):
        for line in path.read_text().splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue  # the demo's damaged line, on purpose
            message = record.get("message") if isinstance(record.get("message"), dict) else {}
            for block in message.get("content") if isinstance(message.get("content"), list) else []:
                for key in ("text", "content"):
                    if isinstance(block.get(key), str) and len(block[key]) > 20:
                        texts.add(block[key][:40])
            if isinstance(record.get("cwd"), str):
                texts.add(record["cwd"])
    assert len(texts) > 20
    assert [text for text in texts if text.encode() in sent] == []


def test_the_standard_variables_name_the_endpoint_headers_resource_and_temporality(
        capsys, demo_root: Path, receiver: OtlpReceiver, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-team-key=k1")
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "team=payments,service.name=claude-code")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "delta")
    code, out, err = collect(capsys, demo_root, "--otlp")
    assert code == 0, err
    assert f"over OTLP to {receiver.url}/v1/metrics" in out
    [(_, _, headers)] = receiver.requests
    assert headers.get("x-team-key") == "k1"
    points = receiver.metric_points()
    assert len(points) == 56
    for point in points:
        assert point["resource"]["team"] == "payments"
        assert point["resource"]["service.name"] == "xshare"  # its own service, beside Claude Code's
        assert point["temporality"] == DELTA


def test_exported_again_the_series_stay_the_same(capsys, demo_root: Path, receiver: OtlpReceiver):
    """Cumulative counters of a session's total: a second export (the next night) repeats each series with the
    same identity and value, so Prometheus and a dashboard's increase() count each session once."""
    for _ in range(2):
        code, _, err = collect(capsys, demo_root, "--otlp", receiver.url)
        assert code == 0, err
    first, second = (receiver.metric_points()[index * 56:(index + 1) * 56] for index in range(2))

    def identity(point: dict) -> tuple:
        return (point["metric"], tuple(sorted(point["resource"].items())), tuple(sorted(point["attributes"].items())),
                point["value"])

    assert sorted(map(identity, first)) == sorted(map(identity, second))


def test_an_endpoint_that_is_already_the_metrics_url_is_kept(capsys, demo_root: Path, receiver: OtlpReceiver):
    code, out, err = collect(capsys, demo_root, "--otlp", receiver.url + "/v1/metrics")
    assert code == 0, err
    assert len(receiver.metric_points()) == 56 and receiver.refused == []


@pytest.mark.parametrize("setting, said", [
    ({"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "xshare exports over http/protobuf only"),
    ({"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "http/json"}, "OTLP protocol 'http/json' asked for"),
])
def test_a_protocol_other_than_http_protobuf_is_refused_in_words(capsys, demo_root: Path, receiver: OtlpReceiver,
                                                                 monkeypatch: pytest.MonkeyPatch, setting, said):
    for name, value in setting.items():
        monkeypatch.setenv(name, value)
    code, _, err = collect(capsys, demo_root, "--otlp", receiver.url)
    assert code == 1 and said in err and receiver.requests == []


def test_without_the_extra_the_message_says_what_to_install(capsys, demo_root: Path, receiver: OtlpReceiver,
                                                            monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(__import__("sys").modules, "opentelemetry.exporter.otlp.proto.http.metric_exporter", None)
    code, _, err = collect(capsys, demo_root, "--otlp", receiver.url)
    assert code == 1 and "pip install 'xshare[otel]'" in err and receiver.requests == []


def test_a_receiver_that_is_not_there_is_one_line_with_the_reason(capsys, tmp_path: Path, demo_root: Path,
                                                                  monkeypatch: pytest.MonkeyPatch):
    with OtlpReceiver() as gone:
        url = gone.url  # a port that was free a moment ago and is closed now
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "4")  # room for one retry, whose warning says why
    rows_path = tmp_path / "rows.jsonl"
    code, _, err = collect(capsys, demo_root, "--rows", str(rows_path), "--otlp", url.replace("://", "://me:pw@"))
    assert code == 1
    line = err.strip().splitlines()[-1]  # after the demo's own problems, said on purpose
    assert line.startswith(f"xshare: could not export over OpenTelemetry: the OTLP receiver at {url}/v1/metrics")
    assert "Connection refused" in line and "pw" not in line
    assert not rows_path.exists()  # the export failed before the rows file was touched: the next run does both


def test_collect_asks_for_rows_or_otlp_and_the_sdk_switch_turns_it_off(capsys, demo_root: Path,
                                                                       receiver: OtlpReceiver,
                                                                       monkeypatch: pytest.MonkeyPatch):
    code, _, err = collect(capsys, demo_root)
    assert code == 2 and "collect needs --rows FILE, --otlp [ENDPOINT] or both" in err
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    code, _, err = collect(capsys, demo_root, "--otlp", receiver.url)
    assert code == 0 and "OTEL_SDK_DISABLED=true: nothing exported" in err and receiver.requests == []


def test_a_session_given_twice_is_exported_and_counted_once(capsys, tmp_path: Path, demo_root: Path,
                                                            receiver: OtlpReceiver):
    """A window can hold a session twice (the same database reached by two paths, seen on the corpus: 514 rows
    for 511 sessions); the export says and sends each once."""
    rows_path = tmp_path / "rows.jsonl"
    assert collect(capsys, demo_root, "--rows", str(rows_path))[0] == 0
    rows = rows_of(rows_path)
    assert export(rows + rows[:3], receiver.url) == (8, 56)
    assert len(receiver.metric_points()) == 56
