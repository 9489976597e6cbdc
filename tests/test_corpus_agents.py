"""The report over the real Codex, Gemini, OpenCode and OpenClaw samples (../shared/corpus), checked per
agent and source against counts written here from scratch, from the formats' documented rules:
  Codex: a token_count whose total_token_usage differs from the previous one is a call; its prompt is
    last_token_usage.input_tokens. Gemini: each gemini message with tokens (the last record of an id in
    .jsonl, the last whole list of a $set) is a call; its prompt is tokens.input. OpenCode: each step-finish
    part is a call; its prompt is input + cache.read + cache.write. OpenClaw: each assistant message's usage
    is a call; its prompt is input + cacheRead + cacheWrite.
A call whose prompt is zero billed nothing and is not counted. Skipped when the corpus is absent."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import CORPUS, needs_corpus
from xshare.cli import main


def _homes(agent: str) -> list[Path]:
    folder = CORPUS / agent
    return sorted(path for path in folder.iterdir() if path.is_dir()) if folder.is_dir() else []


def _json_lines(path: Path):
    for line in path.read_bytes().splitlines():
        try:
            yield json.loads(line)
        except ValueError:
            continue


def count_codex(home: Path, calls: Counter, prompt: Counter) -> None:
    for path in list((home / "sessions").rglob("rollout-*.jsonl")) + list((home / "sessions").glob("*.json")):
        group, previous, found = "interactive", None, []
        if path.suffix == ".jsonl":
            for row in _json_lines(path):
                payload = row.get("payload") if isinstance(row, dict) else None
                if not isinstance(payload, dict):
                    continue
                if row.get("type") == "session_meta" and not found and previous is None:
                    source = payload.get("source")
                    group = "subagent" if isinstance(source, dict) else "automated" if source in ("exec", "mcp") \
                        else "interactive"
                info = payload.get("info") if payload.get("type") == "token_count" else None
                if isinstance(info, dict) and info.get("total_token_usage") != previous:
                    previous = info["total_token_usage"]
                    found.append(info["last_token_usage"]["input_tokens"])
        calls[f"codex/{group}"] += sum(1 for tokens in found if tokens > 0)
        prompt[f"codex/{group}"] += sum(found)


def count_gemini(home: Path, calls: Counter, prompt: Counter) -> None:
    for path in (home / "tmp").glob("*/chats/session-*"):
        if path.suffix == ".json":
            document = json.loads(path.read_bytes())
            messages, kind = document.get("messages", []), document.get("kind")
        else:
            by_id, kind = {}, None
            for record in _json_lines(path):
                if "$set" in record and "messages" in record["$set"]:
                    by_id = {index: message for index, message in enumerate(record["$set"]["messages"])}
                elif "sessionId" in record and kind is None:
                    kind = record.get("kind")
                elif "id" in record and "type" in record:
                    by_id[record["id"]] = record
            messages = list(by_id.values())
        group = "gemini/interactive" if kind in (None, "main") else "gemini/subagent"
        for message in messages:
            tokens = message.get("tokens") if message.get("type") == "gemini" else None
            if tokens and tokens.get("input", 0) > 0:
                calls[group] += 1
                prompt[group] += tokens["input"]


def count_opencode(home: Path, calls: Counter, prompt: Counter) -> None:
    for path in home.glob("opencode*.db"):
        connection = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
        parents = dict(connection.execute("SELECT id, parent_id FROM session"))
        for session_id, data in connection.execute("SELECT session_id, data FROM part"):
            part = json.loads(data)
            if part.get("type") != "step-finish":
                continue
            tokens = part["tokens"]
            billed = tokens["input"] + tokens["cache"]["read"] + tokens["cache"]["write"]
            group = "opencode/subagent" if parents.get(session_id) else "opencode/interactive"
            if billed > 0:
                calls[group] += 1
                prompt[group] += billed
        connection.close()


def count_openclaw(home: Path, calls: Counter, prompt: Counter) -> None:
    """Every assistant entry with usage once: a live file and its reset archive (a copy taken before the
    reset) hold the same entries, by id."""
    seen: set[tuple[str, str]] = set()
    for path in sorted(home.glob("agents/*/sessions/*.jsonl*")):
        if path.name.endswith(".lock"):
            continue
        session = path.name.split(".jsonl", 1)[0]
        for entry in _json_lines(path):
            if isinstance(entry.get("id"), str):
                if (session, entry["id"]) in seen:
                    continue
                seen.add((session, entry["id"]))
            message = entry.get("message") if entry.get("type") == "message" else None
            usage = message.get("usage") if isinstance(message, dict) and message.get("role") == "assistant" else None
            if isinstance(usage, dict):
                billed = usage.get("input", 0) + usage.get("cacheRead", 0) + usage.get("cacheWrite", 0)
                if billed > 0:
                    calls["openclaw/interactive"] += 1
                    prompt["openclaw/interactive"] += billed


COUNTERS = {"codex": ("--codex-home", count_codex), "gemini": ("--gemini-home", count_gemini),
            "opencode": ("--opencode-db", count_opencode), "openclaw": ("--openclaw-home", count_openclaw)}


@needs_corpus
@pytest.mark.parametrize("agent", sorted(COUNTERS))
def test_report_equals_an_independent_count(agent: str, capsys: pytest.CaptureFixture):
    flag, count = COUNTERS[agent]
    homes = _homes(agent)
    if not homes:
        pytest.skip(f"no {agent} sample in the corpus")
    calls, prompt = Counter(), Counter()
    arguments = ["report", "--all", "--json", "--estimate", "--no-cache"]
    for other_flag, _ in COUNTERS.values():
        if other_flag != flag:
            arguments += [other_flag, str(CORPUS / "absent")]
    for home in homes:
        count(home, calls, prompt)
        arguments += [flag, str(home)]
    assert main(arguments) == 0
    groups = json.loads(capsys.readouterr().out)["groups"]
    mine = {key: group for key, group in groups.items() if key.startswith(f"{agent}/")}
    assert {key: group["api_calls"] for key, group in mine.items() if group["api_calls"]} == dict(calls)
    assert {key: group["prompt_tokens_billed"] for key, group in mine.items() if group["api_calls"]} == dict(prompt)
    for group in mine.values():
        if group["api_calls"]:
            assert 0.5 < group["recorded_over_billed"] <= 1.0  # the modelled context stays within the bill


@needs_corpus
def test_all_four_agents_in_one_report(capsys: pytest.CaptureFixture):
    arguments = ["report", "--all", "--json", "--estimate", "--no-cache"]
    for agent, (flag, _) in COUNTERS.items():
        for home in _homes(agent):
            arguments += [flag, str(home)]
    assert main(arguments) == 0
    report = json.loads(capsys.readouterr().out)
    assert {name: report["sources"][name] for name in ("Codex CLI", "Gemini CLI", "OpenCode", "OpenClaw")} == \
        dict.fromkeys(("Codex CLI", "Gemini CLI", "OpenCode", "OpenClaw"), "read")
    agents = {group["agent"] for group in report["groups"].values()}
    assert {"codex", "gemini", "opencode", "openclaw"} <= agents
    assert report["groups"]["codex/interactive"]["usage_unknown_sessions"] > 0  # the August 2025 rollouts
