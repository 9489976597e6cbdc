"""`xshare report`, `session`, `collect` and `classify` end to end: exit codes, privacy, cache."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from xshare.agents.claude_code import many as claude_code
from xshare.agents.table import names_listed
from xshare.cli import main
from xshare.demo import write_demo_corpus


@pytest.fixture
def demo_root(tmp_path: Path) -> Path:
    return write_demo_corpus(tmp_path / "claude")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def private_strings(root: Path) -> set[str]:
    """Session ids, project folder names and prompt text that must never reach stdout."""
    found = {path.stem for path in root.rglob("*.jsonl")} | {path.name for path in root.iterdir()}
    for path in root.rglob("*.jsonl"):
        for line in path.read_bytes().splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            content = row.get("message", {}).get("content") if isinstance(row.get("message"), dict) else None
            if row.get("type") == "user" and isinstance(content, str) and len(content) > 12:
                found.add(content[:40])
    return found


def test_nothing_found_exits_2_and_says_where_it_looked(capsys):
    code, out, err = run(capsys, "report")
    assert code == 2 and out == ""
    assert ".claude/projects" in err and "xshare report --demo" in err


def test_demo_report(capsys):
    code, out, err = run(capsys, "report", "--demo")
    assert code == 0
    assert out.startswith("Exploration share of the token bill: ")
    assert "claude-code / interactive" in out and "claude-code / subagent" in out and "claude-code / internal" in out
    assert "What it means for your bill" in out and "Tokenizer: " in out
    assert "malformed lines skipped: 1" in err and "Traceback" not in err


def test_report_on_a_root_and_its_json(capsys, demo_root: Path):
    code, out, _ = run(capsys, "report", "--all", "--json", "--claude-root", str(demo_root))
    assert code == 0
    report = json.loads(out)
    group = report["groups"]["claude-code/interactive"]
    assert 0 < group["exploration_share_of_prompt"] <= group["exploration_share_of_context"] < 1
    assert group["sessions"] == 6 and report["sessions"] == 8
    assert report["window"]["since"] is None and report["tokenizer"] in ("o200k_base", "chars/4")
    assert set(group["first_time_tokens"]) >= {"exploration", "edit", "shell", "web", "other", "neuralmind"}


def test_stdout_never_holds_ids_paths_or_prompts(capsys, demo_root: Path):
    secrets = private_strings(demo_root)
    assert len(secrets) > 10
    for extra in ([], ["--json"]):
        code, out, _ = run(capsys, "report", "--all", "--claude-root", str(demo_root), *extra)
        assert code == 0
        assert not [secret for secret in secrets if secret in out]
        assert str(demo_root) not in out


def test_window_flags(capsys, demo_root: Path):
    # the demo sessions started 2026-11-02 .. 2026-11-20
    code, out, _ = run(capsys, "report", "--json", "--since", "2026-11-10", "--until", "2026-11-15",
                       "--claude-root", str(demo_root))
    assert code == 0
    assert json.loads(out)["groups"]["claude-code/interactive"]["sessions"] == 1
    code, _, err = run(capsys, "report", "--since", "2026-11-25", "--claude-root", str(demo_root))
    assert code == 2 and "no session started in the window" in err
    code, _, err = run(capsys, "report", "--since", "yesterday-ish", "--claude-root", str(demo_root))
    assert code == 2 and "not a date" in err
    with pytest.raises(SystemExit) as bad:
        main(["report", "--since-days", "many"])
    assert bad.value.code == 2


def test_rows_file(capsys, tmp_path: Path, demo_root: Path):
    rows_path = tmp_path / "rows.jsonl"
    rows_path.write_text('{"agent": "claude-code", "id": "an-earlier-report"}\n')  # a rows file: replaced whole
    code, _, _ = run(capsys, "report", "--all", "--rows", str(rows_path), "--claude-root", str(demo_root))
    assert code == 0
    rows = [json.loads(line) for line in rows_path.read_text().splitlines()]
    assert len(rows) == 8 and "an-earlier-report" not in rows_path.read_text()  # replaced, not appended
    for row in rows:
        assert {"id", "agent", "source", "model", "started_at", "last_activity", "api_calls", "prompt_tokens_billed",
                "context_tokens", "billed_tokens", "first_time_tokens", "tokenizer"} <= set(row)
    assert str(demo_root) not in rows_path.read_text()
    code, _, err = run(capsys, "report", "--all", "--rows", str(tmp_path), "--claude-root", str(demo_root))
    assert code == 1 and "could not write the rows file" in err


def test_session_by_path_and_by_id(capsys, demo_root: Path):
    path = max(demo_root.rglob("*.jsonl"), key=lambda item: item.stat().st_size)
    code, by_path, _ = run(capsys, "session", str(path), "--json")
    assert code == 0
    row = json.loads(by_path)
    code, by_id, _ = run(capsys, "session", row["id"], "--json", "--claude-root", str(demo_root))
    assert code == 0 and json.loads(by_id) == row
    code, text, _ = run(capsys, "session", str(path))
    assert code == 0 and "Exploration:" in text and f"API calls: {row['api_calls']:,}" in text
    code, _, err = run(capsys, "session", "no-such-session", "--claude-root", str(demo_root))
    assert code == 2 and f"no session of {names_listed('or')} matches" in err  # every agent of the table


def test_collect_appends_new_sessions_and_replaces_grown_ones(capsys, tmp_path: Path, demo_root: Path):
    rows_path = tmp_path / "nightly.jsonl"
    code, out, _ = run(capsys, "collect", "--all", "--rows", str(rows_path), "--claude-root", str(demo_root))
    assert code == 0 and "8 sessions added, 0 replaced" in out and len(out.splitlines()) == 1
    code, out, _ = run(capsys, "collect", "--all", "--rows", str(rows_path), "--claude-root", str(demo_root))
    assert "0 sessions added, 0 replaced" in out
    grown = max(demo_root.rglob("*.jsonl"), key=lambda item: item.stat().st_mtime)
    lines = grown.read_bytes().splitlines()
    last = json.loads(next(line for line in reversed(lines) if line.startswith(b'{"') and b'"timestamp"' in line))
    last["uuid"], last["timestamp"] = "later-row", "2026-11-28T10:00:00.000Z"
    with grown.open("ab") as handle:
        handle.write(b"\n" + json.dumps(last).encode() + b"\n")
    code, out, _ = run(capsys, "collect", "--all", "--rows", str(rows_path), "--claude-root", str(demo_root))
    assert "0 sessions added, 1 replaced" in out
    assert len(rows_path.read_text().splitlines()) == 8


def test_a_repeated_report_reads_only_what_changed(capsys, demo_root: Path, monkeypatch: pytest.MonkeyPatch):
    reads = []
    original = claude_code.read_file  # every transcript a report reads goes through it
    monkeypatch.setattr(claude_code, "read_file",
                        lambda file, *rest, **named: reads.append(file.path.name) or original(file, *rest, **named))
    args = ("report", "--all", "--json", "--claude-root", str(demo_root))
    first = json.loads(run(capsys, *args)[1])["groups"]
    assert len(reads) == 8
    reads.clear()
    assert json.loads(run(capsys, *args)[1])["groups"] == first and reads == []
    touched = next(iter(demo_root.rglob("*.jsonl")))
    os.utime(touched, ns=(1, touched.stat().st_mtime_ns + 10**9))
    run(capsys, *args)
    assert reads == [touched.name]
    reads.clear()
    run(capsys, *args, "--no-cache")
    assert len(reads) == 8
    reads.clear()
    run(capsys, *args, "--estimate")  # another tokenizer: every cached row is stale
    assert len(reads) == 8


def test_problems_are_one_line_per_kind(capsys, demo_root: Path):
    victim = next(demo_root.rglob("*.jsonl"))
    with victim.open("ab") as handle:
        handle.write(b"\n" + b"{broken\n" * 50)
    _, _, err = run(capsys, "report", "--all", "--claude-root", str(demo_root))
    lines = [line for line in err.splitlines() if "malformed" in line]
    assert lines == ["xshare: malformed lines skipped: 51"]


def test_classify_commands_and_jsonl(capsys, monkeypatch: pytest.MonkeyPatch):
    code, out, _ = run(capsys, "classify", "rg -n 'a|b' src", "pytest -q")
    assert code == 0
    assert out.splitlines() == ["exploration\trg -n 'a|b' src", "shell\tpytest -q"]
    code, out, _ = run(capsys, "classify", "--why", "cat a.py > b.py")
    category, command, why = out.rstrip("\n").split("\t")
    assert (category, command) == ("shell", "cat a.py > b.py") and "b.py" in why
    import io

    calls = [{"tool": "Read", "input": {"file_path": "a.py"}}, {"tool": "terminal", "input": {"command": "ls"}},
             {"tool": "patch", "input": {}}, {"tool": "WebSearch", "input": {"query": "x"}}]
    stdin = "\n".join(json.dumps(call) for call in calls) + "\nnot json\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code, out, err = run(capsys, "classify", "--jsonl")
    assert out.split() == ["exploration", "exploration", "edit", "web", "invalid"]
    assert "line 5" in err


def test_a_session_without_api_calls_is_counted_with_an_unknown_share(capsys, tmp_path: Path):
    from datetime import datetime, timezone

    from xshare.demo import TranscriptWriter

    writer = TranscriptWriter("quiet", "/home/dev/app", start=datetime(2026, 11, 20, tzinfo=timezone.utc))
    writer.user("/cost")
    writer.synthetic("No response requested.")
    writer.write(tmp_path / "projects" / "-home-dev-app" / "quiet.jsonl")
    code, out, _ = run(capsys, "report", "--all", "--json", "--claude-root", str(tmp_path))
    group = json.loads(out)["groups"]["claude-code/interactive"]
    assert code == 0
    assert (group["sessions"], group["sessions_with_api_calls"], group["api_calls"]) == (1, 0, 0)
    assert group["exploration_share_of_context"] is None and group["median_session_share"] is None


def test_slash_shows_the_report_first_and_its_problems_after_as_one_note(capsys, demo_root: Path):
    """Claude Code prints a `!` command's stderr before its stdout: the slash command keeps problems
    off stderr and puts them, shortened to one line, after the report; `xshare report` still warns on stderr."""
    transcript = max(demo_root.rglob("*.jsonl"), key=lambda path: path.stat().st_size)
    with transcript.open("a", encoding="utf-8") as handle:
        handle.write('{"type": "a-row-kind-from-the-future", "uuid": "f-1"}\n{"type": "another-new-kind"}\n{not json\n')
    code, out, err = run(capsys, "slash", "--session", "no-such-session", "--", "--all", "--claude-root",
                         str(demo_root), "--no-cache")
    assert code == 0 and err == ""
    assert out.startswith("Exploration share of the token bill")
    notes = [line for line in out.splitlines() if line.startswith("Note: ")]
    assert len(notes) == 1 and out.rstrip().endswith(notes[0])
    assert "lines of an unknown type skipped: 2" in notes[0] and "malformed lines skipped" in notes[0]
    assert out.index("This session: no live figures yet") < out.index(notes[0])
    code, out, err = run(capsys, "report", "--all", "--claude-root", str(demo_root), "--no-cache")
    assert code == 0 and "Note: " not in out
    assert "xshare: lines of an unknown type skipped: 2" in err.splitlines()


def test_slash_with_nothing_to_report_explains_instead_of_noting(capsys, tmp_path: Path):
    code, out, err = run(capsys, "slash", "--", "--claude-root", str(tmp_path / "empty"))
    assert code == 0 and err == ""
    first, rest = out.split("\n", 1)  # the named folder that is not there, then what the report says of it
    assert first.startswith("--claude-root ") and first.endswith("empty: no such file or folder")
    assert rest.startswith("No session started in the window") and "Looked for" in rest and "Note: " not in rest


def test_a_prefix_naming_many_sessions_is_refused_alike_by_session_and_html(capsys, isolated_home: Path):
    """`session` and `html` refuse an ambiguous prefix with one and the same line: twenty candidates, and how
    many more there are."""
    from agent_fixtures import codex_session

    for number in range(1, 23):
        codex_session(isolated_home / ".codex", f"0190aaaa-1111-7000-8000-{number:012d}")
    said = []
    for command in ("session", "html"):
        code, out, err = run(capsys, command, "0190aaaa")
        assert code == 2 and out == "" and len(err.splitlines()) == 1
        assert "names 22 sessions" in err and err.rstrip().endswith(" and 2 more")
        said.append(err)
    assert said[0] == said[1]


def test_bare_xshare_names_every_agent_of_the_table_in_lines_under_100_columns(capsys):
    """The description is built from agents/table.py: a seventh agent's line names it there too."""
    code, out, _ = run(capsys)
    description = out.split("\n\n")[0]
    assert code == 0 and names_listed() in " ".join(description.split())
    assert names_listed().startswith("Claude Code, Hermes, Codex CLI, Gemini CLI, OpenCode")
    assert max(len(line) for line in out.splitlines()) < 100
