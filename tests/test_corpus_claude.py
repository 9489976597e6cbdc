"""The report over real Claude Code transcripts (../shared/corpus/claude), checked against a count
written here from scratch: distinct requestId (else message.id) per file, the row with the largest
output_tokens, prompt = input + cache_read + cache_creation; main files whose first entrypoint is sdk-*
are automated. A request is billed once across the root (issue 19): never where its row names another
session as `requestSessionId` (a fork's copy), else by the file whose row for it is earliest, then a main
transcript before a subagent's before an internal agent's, then the first path. Skipped when the corpus
is absent."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import CORPUS, needs_corpus
from xshare.cli import main

ROOTS = sorted(path for path in (CORPUS / "claude").glob("*") if path.is_dir()) if CORPUS.is_dir() else []
INTERNAL = ("agent-acompact-", "agent-aprompt_suggestion-", "agent-aside_question-")


RANK = {"claude-code/subagent": 1, "claude-code/internal": 2}


def independent_count(root: Path) -> tuple[Counter, Counter]:
    holders: dict[str, list[tuple]] = {}  # request -> (time, rank, path, group, tokens) of each file not copying it
    for path in sorted((root / "projects").rglob("*.jsonl")):
        relative = path.relative_to(root / "projects").parts
        if not (len(relative) == 2 or (len(relative) >= 4 and relative[2] == "subagents")):
            continue
        if path.name.startswith(INTERNAL):
            group = "claude-code/internal"
        elif path.name.startswith("agent-"):
            group = "claude-code/subagent"
        else:
            group = "claude-code/interactive"
        best: dict[str, tuple[int, int]] = {}
        first: dict[str, str] = {}
        copies: set[str] = set()
        entrypoint = None
        for line in path.read_bytes().splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if entrypoint is None and isinstance(row, dict) and isinstance(row.get("entrypoint"), str):
                entrypoint = row["entrypoint"]
            message = row.get("message") if isinstance(row, dict) else None
            if row.get("type") != "assistant" or not isinstance(message, dict):
                continue
            usage = message.get("usage")
            if message.get("model") == "<synthetic>" or row.get("isApiErrorMessage") or not isinstance(usage, dict):
                continue
            key = row.get("requestId") or message.get("id") or row.get("uuid")
            origin = row.get("requestSessionId")
            if isinstance(origin, str) and origin != row.get("sessionId"):
                copies.add(key)
            first.setdefault(key, row["timestamp"] if isinstance(row.get("timestamp"), str) else "\uffff")
            tokens = sum(usage.get(name) or 0 for name in
                         ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"))
            output = usage.get("output_tokens") or 0
            if key not in best or output > best[key][1]:
                best[key] = (tokens, output)
        if group == "claude-code/interactive" and (entrypoint or "").startswith("sdk-"):
            group = "claude-code/automated"  # claude -p and the Agent SDKs
        for key, (tokens, _) in best.items():
            if key not in copies:
                holders.setdefault(key, []).append((first[key], RANK.get(group, 0), str(path), group, tokens))
    calls, prompt = Counter(), Counter()
    for candidates in holders.values():
        *_, group, tokens = min(candidates)
        calls[group] += 1
        prompt[group] += tokens
    return calls, prompt


@needs_corpus
@pytest.mark.parametrize("root", ROOTS, ids=[f"root{index}" for index in range(len(ROOTS))])
def test_calls_and_billed_prompt_per_group_match_an_independent_count(root: Path, capsys):
    assert main(["report", "--all", "--json", "--estimate", "--no-cache", "--claude-root", str(root)]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    calls, prompt = independent_count(root)
    assert set(report["groups"]) >= {group for group, count in calls.items() if count}
    for group in report["groups"]:
        assert report["groups"][group]["api_calls"] == calls[group], group
        assert report["groups"][group]["prompt_tokens_billed"] == prompt[group], group
        share = report["groups"][group]["exploration_share_of_context"]
        assert share is None or 0 <= share <= 1
    assert "Traceback" not in captured.err
    # stdout is aggregates only: no session id, no project folder name
    names = {path.stem for path in (root / "projects").rglob("*.jsonl")}
    names |= {path.name for path in (root / "projects").iterdir()}
    assert not [name for name in names if name in captured.out]
