"""Tests for xshare.demo: the transcript writer's shapes and the demo corpus layout."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest

from xshare.demo import (
    TranscriptWriter,
    project_dir_name,
    text,
    thinking,
    tool_use,
    write_demo_corpus,
)

START = datetime(2026, 11, 2, 9, 0, tzinfo=timezone.utc)
PROMPT_KEYS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def rows_of(w: TranscriptWriter) -> list[dict]:
    return [json.loads(line) for line in w.lines()]


def calls_of(rows: list[dict]) -> dict[str, list[dict]]:
    """Assistant rows grouped by requestId (else message.id), in order of first appearance."""
    out: dict[str, list[dict]] = {}
    for r in rows:
        if r.get("type") == "assistant" and r["message"]["model"] != "<synthetic>":
            out.setdefault(r.get("requestId") or r["message"]["id"], []).append(r)
    return out


def prompt(usage: dict) -> int:
    return sum(usage[k] for k in PROMPT_KEYS)


def final_usage(call_rows: list[dict]) -> dict:
    return max((r["message"]["usage"] for r in call_rows), key=lambda u: u["output_tokens"])


def new_writer(**kw) -> TranscriptWriter:
    return TranscriptWriter("5b0e8c2a-3d51-4f7e-9a40-1c2d3e4f5a6b", "/home/dev/demo", start=START, **kw)


# --- the writer ---------------------------------------------------------------------------------------------
def test_one_row_per_block_sharing_ids_and_growing_output():
    w = new_writer()
    w.user("look around")
    ids = w.call(thinking("hmm"), text("Reading two files."), tool_use("Read", {"file_path": "/a"}),
                 tool_use("Read", {"file_path": "/b"}))
    rows = [r for r in rows_of(w) if r["type"] == "assistant"]
    assert len(rows) == 4 and len(ids) == 2
    assert all(len(r["message"]["content"]) == 1 for r in rows)
    assert [r["message"]["content"][0]["type"] for r in rows] == ["thinking", "text", "tool_use", "tool_use"]
    assert len({r["requestId"] for r in rows}) == 1 and rows[0]["requestId"].startswith("req_")
    assert len({r["message"]["id"] for r in rows}) == 1 and rows[0]["message"]["id"].startswith("msg_")
    assert len({r["uuid"] for r in rows}) == 4
    outs = [r["message"]["usage"]["output_tokens"] for r in rows]
    assert outs == sorted(outs) and outs[0] <= 9 and outs[-1] > outs[0]
    assert len({tuple(r["message"]["usage"][k] for k in PROMPT_KEYS) for r in rows}) == 1
    assert [r["message"]["stop_reason"] for r in rows] == [None, None, None, "tool_use"]
    assert [r["message"]["content"][0]["id"] for r in rows[2:]] == ids
    assert all(i.startswith("toolu_") for i in ids)
    assert rows[0]["message"]["content"][0]["signature"]


def test_usage_cache_accounting():
    w = new_writer(system_tokens=15_000)
    w.user("hi")
    w.call(text("hello"))
    w.user("read it")
    tid = w.use("Read", {"file_path": "/home/dev/demo/a.py"})
    w.read_result(tid, "/home/dev/demo/a.py", "x = 1\n" * 300)
    w.call(text("done"))
    w.idle(6)
    w.user("again")
    w.call(text("ok"))
    calls = [final_usage(c) for c in calls_of(rows_of(w)).values()]
    for u in calls:
        nested = u["cache_creation"]
        assert nested["ephemeral_5m_input_tokens"] + nested["ephemeral_1h_input_tokens"] == \
            u["cache_creation_input_tokens"]
        assert 1 <= u["input_tokens"] <= 10
        assert all(isinstance(u[k], int) for k in (*PROMPT_KEYS, "output_tokens"))
    assert calls[0]["cache_read_input_tokens"] == 0 and prompt(calls[0]) >= 15_000
    for prev, cur in zip(calls[:2], calls[1:3], strict=True):  # warm cache: read = previous prompt
        assert cur["cache_read_input_tokens"] == prompt(prev)
    assert prompt(calls[2]) - prompt(calls[1]) > 1800 / 3.4 * 0.9  # the Read result grew the prompt
    assert calls[3]["cache_read_input_tokens"] == 0  # idle gap over 5 minutes: cache rebuilt


def test_tool_results_match_tool_uses():
    w = new_writer(version="2.1.90")
    w.user("go")
    uses_in = [tool_use("Read", {"file_path": "/f"}), tool_use("Bash", {"command": "ls"}),
               tool_use("Grep", {"pattern": "x"}), tool_use("Glob", {"pattern": "*"})]
    r_id, b_id, g_id, l_id = w.call(*uses_in)
    w.read_result(r_id, "/f", "alpha\nbeta\n", reminder="Be careful.")
    w.bash_result(b_id, "", "boom", exit_code=2)
    w.grep_result(g_id, {"/f": [(2, "beta")]}, mode="content")
    w.glob_result(l_id, ["/f"])
    rows = rows_of(w)
    uses = {b["id"]: r["uuid"] for r in rows if r["type"] == "assistant" for b in r["message"]["content"]}
    results = [r for r in rows if r["type"] == "user" and isinstance(r["message"]["content"], list)]
    assert [r["message"]["content"][0]["tool_use_id"] for r in results] == [r_id, b_id, g_id, l_id]
    for r in results:
        assert r["sourceToolAssistantUUID"] == uses[r["message"]["content"][0]["tool_use_id"]]
    read, bash, grep, glob = results
    body = read["message"]["content"][0]["content"]
    assert body.startswith("1\talpha\n2\tbeta") and body.endswith("</system-reminder>")
    assert read["toolUseResult"] == {"type": "text", "file": {"filePath": "/f", "content": "alpha\nbeta",
                                                              "numLines": 2, "startLine": 1, "totalLines": 2}}
    assert bash["message"]["content"][0]["is_error"] is True
    assert bash["toolUseResult"].startswith("Error: Exit code 2")
    assert grep["toolUseResult"]["mode"] == "content" and grep["toolUseResult"]["numLines"] == 1
    assert set(glob["toolUseResult"]) == {"filenames", "durationMs", "numFiles", "truncated"}


def test_old_builds_arrows_null_stop_reason_no_nested_cache():
    w = new_writer(version="1.0.38")
    w.user("go")
    (tid,) = w.call(text("Reading."), tool_use("Read", {"file_path": "/f"}))
    w.read_result(tid, "/f", "alpha\n")
    rows = rows_of(w)
    assert all(r["message"]["stop_reason"] is None for r in rows if r["type"] == "assistant")
    assert all("cache_creation" not in r["message"]["usage"] for r in rows if r["type"] == "assistant")
    assert rows[-1]["message"]["content"][0]["content"] == "     1→alpha"
    assert "entrypoint" not in rows[0] and "sourceToolAssistantUUID" not in rows[-1]


def test_parent_chain_and_compaction_rows():
    w = new_writer()
    w.hook_success("hello from a hook")
    w.user("first")
    w.call(text("one"))
    w.progress({"type": "hook_progress", "hookEvent": "Stop"})
    leaf = w.rows[-2]["uuid"]
    w.compact("Summary: we said one.", pre_tokens=1234)
    w.user("second")
    w.call(text("two"))
    rows = rows_of(w)
    seen: set[str] = set()
    for r in rows:
        if r.get("parentUuid") is not None:
            assert r["parentUuid"] in seen
        seen.add(r.get("uuid", ""))
    i = next(i for i, r in enumerate(rows) if r.get("subtype") == "compact_boundary")
    boundary, summary = rows[i], rows[i + 1]
    assert boundary["type"] == "system" and boundary["parentUuid"] is None
    assert boundary["logicalParentUuid"] == leaf and boundary["content"] == "Conversation compacted"
    assert boundary["compactMetadata"] == {"trigger": "manual", "preTokens": 1234}
    assert summary["isCompactSummary"] is True and summary["parentUuid"] == boundary["uuid"]
    assert summary["message"]["content"] == "Summary: we said one."
    before, after = (final_usage(c) for c in calls_of(rows).values())
    assert after["cache_read_input_tokens"] == 0  # a compaction rebuilds the cache


def test_microcompaction_clears_named_results():
    w = new_writer()
    w.user("go")
    tid = w.use("Bash", {"command": "cat big.txt"})
    w.bash_result(tid, "y" * 6800)
    w.call(text("seen"))
    before = w.prompt_estimate()
    w.microcompact([tid])
    row = json.loads(w.lines()[-1])
    meta = row["microcompactMetadata"]
    assert row["subtype"] == "microcompact_boundary" and row["content"] == "Context microcompacted"
    assert meta["compactedToolIds"] == [tid] and meta["tokensSaved"] == 2000 and meta["preTokens"] == before
    assert set(meta) == {"trigger", "preTokens", "tokensSaved", "compactedToolIds", "clearedAttachmentUUIDs"}
    assert w.prompt_estimate() == before - 2000


def test_gateway_synthetic_and_api_errors():
    w = new_writer(gateway=True, model="glm-4.6")
    w.user("go")
    w.synthetic("API Error: 529 overloaded", api_error_status=529)
    w.call(text("fine"))
    w.synthetic("No response requested.")
    rows = [r for r in rows_of(w) if r["type"] == "assistant"]
    assert all("requestId" not in r for r in rows)
    err, real, synth = rows
    assert err["isApiErrorMessage"] is True and err["message"]["model"] == "<synthetic>"
    assert synth["message"]["model"] == "<synthetic>" and "isApiErrorMessage" not in synth
    u = real["message"]["usage"]
    assert u["cache_read_input_tokens"] == u["cache_creation_input_tokens"] == 0 and u["input_tokens"] > 1000


def test_sidechain_rows_and_explicit_usage():
    w = new_writer(sidechain=True, agent_id="a0123456789abcdef")
    w.user("task prompt")
    w.call(text("x"), usage={"input_tokens": 7, "cache_creation_input_tokens": 100,
                             "cache_read_input_tokens": 900, "output_tokens": 42})
    rows = rows_of(w)
    assert rows[0]["parentUuid"] is None
    assert all(r["isSidechain"] is True and r["agentId"] == "a0123456789abcdef" for r in rows)
    u = rows[-1]["message"]["usage"]
    assert (u["input_tokens"], u["cache_creation_input_tokens"], u["cache_read_input_tokens"],
            u["output_tokens"]) == (7, 100, 900, 42)


def test_attachments_noise_and_write(tmp_path: Path):
    w = new_writer()
    w.hook_success("ctx")
    w.hook_context(["extra"])
    w.skill_listing({"a": "b"})
    w.nested_memory("/home/dev/demo/CLAUDE.md", "# notes")
    w.file_attachment("/home/dev/demo/x.py", "print(1)\n")
    w.user("go", reminder="remember")
    w.meta("<local-command-caveat>x</local-command-caveat>")
    w.queue_operation("enqueue", "go")
    w.file_history_snapshot()
    w.turn_duration()
    w.last_prompt("go")
    w.ai_title("A title")
    kinds = [r["attachment"]["type"] for r in rows_of(w) if r["type"] == "attachment"]
    assert kinds == ["hook_success", "hook_additional_context", "skill_listing", "nested_memory", "file"]
    types = {r["type"] for r in rows_of(w)}
    assert {"queue-operation", "file-history-snapshot", "system", "last-prompt", "ai-title"} <= types
    assert all("\n" not in line for line in w.lines())
    path = w.write(tmp_path / "deep" / "s.jsonl")
    data = path.read_bytes()
    assert data.endswith(b"\n") and data.decode("utf-8").split("\n")[:-1] == w.lines()


def test_project_dir_name():
    assert project_dir_name("/home/dev/todo-api") == "-home-dev-todo-api"
    assert project_dir_name("/Users/a/my.proj") == "-Users-a-my-proj"


# --- the demo corpus ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_demo_corpus(tmp_path_factory.mktemp("claude"))


def load(path: Path) -> tuple[list[dict], list[str]]:
    good, bad = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            good.append(json.loads(line))
        except json.JSONDecodeError:
            bad.append(line)
    return good, bad


def test_corpus_is_deterministic(corpus: Path, tmp_path: Path):
    again = write_demo_corpus(tmp_path)
    files = sorted(p.relative_to(corpus) for p in corpus.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    assert all((corpus / f).read_bytes() == (again / f).read_bytes() for f in files)


def test_corpus_layout(corpus: Path):
    assert corpus.name == "projects"
    assert {p.name for p in corpus.iterdir()} == {"-home-dev-todo-api", "-home-dev-tally"}
    uid = r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
    agent = r"a[0-9a-f]{16}\.(jsonl|meta\.json)|acompact-[0-9a-f]{16}\.jsonl"
    layout = re.compile(rf"-home-dev-[a-z-]+/{uid}(\.jsonl|/subagents/agent-({agent}))")
    files = [p.relative_to(corpus).as_posix() for p in corpus.rglob("*") if p.is_file()]
    assert all(layout.fullmatch(f) for f in files), files
    assert sum(f.endswith(".jsonl") and "/" not in f.split("/", 1)[1] for f in files) == 6
    assert sum(p.stat().st_size for p in corpus.rglob("*") if p.is_file()) < 2_000_000


def test_every_line_but_the_deliberate_ones_is_json(corpus: Path):
    bad = {p.name: load(p)[1] for p in corpus.rglob("*.jsonl")}
    broken = {k: v for k, v in bad.items() if v}
    assert len(broken) == 2 and all(len(v) == 1 for v in broken.values())
    cut = [p for p in corpus.rglob("*.jsonl") if not p.read_bytes().endswith(b"\n")]
    assert len(cut) == 1 and bad[cut[0].name] == [cut[0].read_text().split("\n")[-1]]


def test_corpus_content(corpus: Path):
    rows = {p: load(p)[0] for p in corpus.rglob("*.jsonl")}
    every = [r for rs in rows.values() for r in rs]
    names = {b["name"] for r in every if r.get("type") == "assistant" for b in r["message"]["content"]
             if b["type"] == "tool_use"}
    assert {"Read", "Grep", "Glob", "Bash", "Edit", "Write", "MultiEdit", "WebFetch", "WebSearch",
            "TodoWrite", "Task"} <= names and any(n.startswith("mcp__") for n in names)
    commands = {b["input"]["command"].split()[0] for r in every if r.get("type") == "assistant"
                for b in r["message"]["content"] if b.get("name") == "Bash"}
    assert {"rg", "sed", "git", "ls", "pytest", "go"} <= commands
    blob = "\n".join(json.dumps(r) for r in every)
    assert blob.count("Code matching this prompt") >= 2
    for needle in ('"compact_boundary"', '"isCompactSummary": true', '"microcompact_boundary"',
                   '"<synthetic>"', '"isApiErrorMessage": true', '"hook_success"', '"SessionStart"',
                   '"hook_additional_context"', '"skill_listing"', '"nested_memory"', '"agent_progress"',
                   '"queue-operation"', '"ai-title"', '"file-history-snapshot"', '"last-prompt"',
                   '"turn_duration"', '"isMeta": true'):
        assert needle in blob, needle
    stamps = [r["timestamp"] for r in every if "timestamp" in r]
    assert min(stamps) >= "2026-11-02" and max(stamps) < "2026-11-21"
    total = sum(len(calls_of(rs)) for rs in rows.values())
    assert 150 <= total <= 400


def test_corpus_parent_chains_and_unique_ids(corpus: Path):
    owner: dict[str, str] = {}  # requestId -> file (only internal agents may replay a parent's)
    for path in sorted(corpus.rglob("*.jsonl")):
        seen: set[str] = set()
        rows = load(path)[0]
        for r in rows:
            if r.get("parentUuid") is not None:
                assert r["parentUuid"] in seen, (path.name, r["uuid"])
            if "uuid" in r:
                assert r["uuid"] not in seen
                seen.add(r["uuid"])
        calls = calls_of(rows)
        ids = [b["id"] for c in calls.values() for r in c for b in r["message"]["content"] if "id" in b]
        assert len(ids) == len(set(ids))
        for key in calls:
            first = owner.setdefault(key, path.name)
            assert first == path.name or "acompact" in first + path.name
        inline = {r["uuid"] for r in rows if r.get("isSidechain")} if "subagents" not in str(path) else set()
        assert not inline & {r.get("leafUuid") for r in rows}


def test_corpus_subagents(corpus: Path):
    metas = list(corpus.rglob("agent-a*.meta.json"))
    assert len(metas) == 1
    meta = json.loads(metas[0].read_text())
    agent = metas[0].name.removeprefix("agent-").removesuffix(".meta.json")
    sub_rows, _ = load(metas[0].with_name(f"agent-{agent}.jsonl"))
    assert sub_rows[0]["parentUuid"] is None
    assert all(r["isSidechain"] and r["agentId"] == agent for r in sub_rows if "uuid" in r)
    parent, _ = load(metas[0].parent.parent.with_suffix(".jsonl"))
    task = [r for r in parent if r["type"] == "user" and isinstance(r.get("toolUseResult"), dict)
            and r["toolUseResult"].get("agentId") == agent]
    assert len(task) == 1 and task[0]["message"]["content"][0]["tool_use_id"] == meta["toolUseId"]
    last = final_usage(list(calls_of(sub_rows).values())[-1])
    assert task[0]["toolUseResult"]["totalTokens"] == prompt(last) + last["output_tokens"]
    (compact,) = corpus.rglob("agent-acompact-*.jsonl")
    ac_rows, _ = load(compact)
    main, _ = load(compact.parent.parent.with_suffix(".jsonl"))
    ac_ids, main_ids = list(calls_of(ac_rows)), set(calls_of(main))
    assert len(ac_ids) > 10 and set(ac_ids[:-1]) <= main_ids and ac_ids[-1] not in main_ids
    assert all(r["agentId"] == compact.stem.removeprefix("agent-") for r in ac_rows)


def test_corpus_legacy_session(corpus: Path):
    (path,) = [p for p in corpus.glob("*/*.jsonl") if '"version":"1.0.' in p.read_text()]
    rows, _ = load(path)
    assistant = [r for r in rows if r.get("type") == "assistant"]
    assert all(r["message"]["stop_reason"] is None for r in assistant)
    assert all("cache_creation" not in r["message"]["usage"] for r in assistant)
    assert any(r["isSidechain"] for r in rows if "isSidechain" in r)
    assert not any("agentId" in r for r in rows)
    reads = [r for r in rows if r.get("type") == "user" and "file" in (r.get("toolUseResult") or {})]
    assert reads and all("→" in r["message"]["content"][0]["content"] for r in reads)


def test_corpus_reads_files_of_real_size(corpus: Path):
    """Modules of hundreds of lines, so a Read costs what it does in real sessions (thousands of tokens)."""
    rows = [r for p in corpus.rglob("*.jsonl") for r in load(p)[0]]
    files = [r["toolUseResult"]["file"] for r in rows
             if r.get("type") == "user" and isinstance(r.get("toolUseResult"), dict) and "file" in r["toolUseResult"]]
    whole = sorted(len(f["content"]) for f in files if f["startLine"] == 1 and f["numLines"] == f["totalLines"])
    assert len(whole) >= 20 and whole[len(whole) // 2] >= 3_500 and whole[-5] >= 8_000
    assert sum(f["totalLines"] >= 150 for f in files) >= 10


def test_demo_shares_are_in_the_realistic_band(corpus: Path, capsys: pytest.CaptureFixture[str]):
    """Real interactive sessions spend roughly 12-30% of their context on exploration; so does the demo."""
    from xshare.cli import main

    assert main(["report", "--all", "--json", "--claude-root", str(corpus)]) == 0
    group = json.loads(capsys.readouterr().out)["groups"]["claude-code/interactive"]
    assert 0.15 <= group["exploration_share_of_context"] <= 0.30
    recorded_over_billed = group["exploration_share_of_prompt"] / group["exploration_share_of_context"]
    assert 0.85 <= recorded_over_billed <= 1
