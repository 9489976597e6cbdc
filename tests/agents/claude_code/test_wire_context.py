"""The wire check, issue 19's scenarios: reminders sent in role-`system` turns, images, PDFs and notebooks,
subagents, hooks, Task tools, skills, nested CLAUDE.md files, background tasks, large outputs, long turns.

Each drives the real Claude Code 2.1.332 against tests/support/fake_anthropic.py, then compares every transcript
the scenario wrote with the requests it made (the requests whose ids its assistant rows record): calls and
bill equal, and xshare's share of the bill and of its modelled context within 0.1 pp of the wire's for
exploration, edits, other shell and re-sent reads (tests/agents/claude_code/test_wire.py's `agreement`).
Skips without the CLI.
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from pathlib import Path

import pytest
from claude_host import ClaudeHost, claude_missing, wait_until

from tests.agents.claude_code import test_wire
from tests.agents.claude_code.test_wire import agreement, body, module_text

host = test_wire.host  # the same fixture: a fake server and a fresh Claude Code installation per scenario
pytestmark = [pytest.mark.realhost, pytest.mark.skipif(claude_missing() is not None, reason=str(claude_missing()))]


def recorded_requests(host: ClaudeHost, transcript: Path) -> list:
    """The requests a transcript recorded (its assistant rows carry the server's request ids)."""
    ids = {json.loads(line).get("requestId") for line in transcript.read_text().splitlines() if '"requestId"' in line}
    return [request for request in host.fake.requests if request.request_id in ids]


def every_file_agrees(host: ClaudeHost) -> list[dict]:
    """Every transcript of the scenario, main sessions and subagents, against its own requests; and no
    request left out (compaction calls aside, which these scenarios do not make)."""
    files = host.transcripts() + sorted((host.config / "projects").glob("*/*/subagents/agent-*.jsonl"))
    rows = [agreement(host, recorded_requests(host, transcript), transcript) for transcript in files]
    assert sum(row["api_calls"] for row in rows) == len(host.fake.requests)
    return rows


def png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + bytes((x * 7 + y * 3) % 256 for x in range(width * 3)) for y in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def pdf(pages: int) -> bytes:
    objects = ["<< /Type /Catalog /Pages 2 0 R >>",
               f"<< /Type /Pages /Kids [{' '.join(f'{3 + 2 * n} 0 R' for n in range(pages))}] /Count {pages} >>"]
    for n in range(pages):
        text = f"BT /F1 18 Tf 72 700 Td (Page {n + 1}: the retry budget is {n * 3} seconds) Tj ET"
        objects += [f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * n} 0 R >>",
                    f"<< /Length {len(text)} >>\nstream\n{text}\nendstream"]
    out, offsets = b"%PDF-1.4\n", []
    for number, text in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{text}\nendobj\n".encode()
    table = "".join(f"{offset:010d} 00000 n \n" for offset in offsets)
    return out + (f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n{table}trailer\n<< /Size {len(objects) + 1} "
                  f"/Root 1 0 R >>\nstartxref\n{len(out)}\n%%EOF\n").encode()


def notebook() -> str:
    figure = base64.b64encode(png(120, 80)).decode()
    return json.dumps({"cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Retry budget\n", "How long we wait."]},
        {"cell_type": "code", "execution_count": 1, "metadata": {}, "source": ["print(sum(range(40)))"],
         "outputs": [{"name": "stdout", "output_type": "stream", "text": ["780\n"]},
                     {"output_type": "display_data", "metadata": {}, "data": {"image/png": figure,
                                                                               "text/plain": ["<Figure>"]}}]}],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4, "nbformat_minor": 5})


def test_a_png_a_pdf_a_notebook_and_an_at_mentioned_picture(host: ClaudeHost):
    project = host.project
    (project / "chart.png").write_bytes(png(300, 200))
    (project / "wide.png").write_bytes(png(2400, 1000))  # Claude Code shrinks it; the API scales it again
    (project / "report.pdf").write_bytes(pdf(3))
    (project / "analysis.ipynb").write_text(notebook())
    _, first = host.claude_p("XREAD chart.png\nXREAD wide.png\nXREAD report.pdf\nXREAD analysis.ipynb")
    _, second = host.claude_p("what does @chart.png show?", "--continue")
    sent = json.dumps([body(request) for request in first + second])
    assert '"type": "image"' in sent and '"type": "document"' in sent
    (row,) = every_file_agrees(host)
    # the pictures and the PDF are most of what was read: the reads are most of the bill
    assert row["billed_tokens"]["exploration"] > 0.3 * row["prompt_tokens_billed"]


def test_three_subagents_in_one_reply_one_reading_40_files(host: ClaudeHost):
    source = host.project / "src"
    source.mkdir()
    for number in range(40):
        (source / f"mod_{number}.py").write_text(module_text(3 + number % 5))
    forty = " ;; ".join(f"XREAD {source / f'mod_{number}.py'}" for number in range(40))
    host.claude_p(f"XAGENT {forty}\nXAGENT XBASH ls src\nXAGENT XREAD {host.project / 'notes.txt'}")
    agents = sorted((host.config / "projects").glob("*/*/subagents/agent-*.jsonl"))
    assert len(agents) == 3
    rows = every_file_agrees(host)
    assert max(row["billed_tokens"]["exploration"] for row in rows) > 0.3 * max(
        row["prompt_tokens_billed"] for row in rows if row["billed_tokens"]["exploration"])


def test_task_tools_hooks_an_output_style_and_an_appended_system_prompt(host: ClaudeHost):
    hooks = host.root / "hooks"
    hooks.mkdir()
    (hooks / "start.sh").write_text("#!/bin/sh\necho 'Project context: " + "the service is called relay. " * 40 + "'\n")
    (hooks / "prompt.sh").write_text("#!/bin/sh\necho 'Reminder from the prompt hook: keep answers short.'\n")
    for script in hooks.iterdir():
        script.chmod(0o755)
    (host.config / "settings.json").write_text(json.dumps({"outputStyle": "Explanatory", "hooks": {
        "SessionStart": [{"hooks": [{"type": "command", "command": str(hooks / "start.sh")}]}],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": str(hooks / "prompt.sh")}]}]}}))
    tools = ("--tools", "Read,Bash,TaskCreate,TaskUpdate,TaskList,TaskGet",
             "--append-system-prompt", "Always name the file you read.")
    create = json.dumps({"subject": "read notes", "description": "read the notes file"})
    _, first = host.claude_p(f"XMCP TaskCreate {create}\nXREAD notes.txt", *tools)
    _, second = host.claude_p('XMCP TaskUpdate {"taskId": "1", "status": "completed"}\nXBASH cat app.py',
                              "--continue", *tools)
    system = json.dumps(body(first[0])["system"])
    assert "Always name the file you read." in system
    system_turns = [message for request in first + second for message in body(request)["messages"]
                    if message["role"] == "system"]
    assert any("Explanatory output style is active" in json.dumps(turn) for turn in system_turns)
    assert not any("<system-reminder>" in json.dumps(turn) for turn in system_turns)  # sent unwrapped
    (row,) = every_file_agrees(host)
    assert row["billed_tokens"]["other"] > 0 and row["billed_tokens"]["exploration"] > 0


def test_nested_claude_md_files_and_a_skill(host: ClaudeHost):
    project = host.project
    (project / "CLAUDE.md").write_text("# Project rules\n" + "Keep handlers small. " * 30 + "\n")
    deep = project / "services" / "relay"
    deep.mkdir(parents=True)
    (deep / "CLAUDE.md").write_text("# Relay rules\n" + "Retries back off exponentially. " * 30 + "\n")
    (deep / "relay.py").write_text(module_text(30))
    skill = project / ".claude" / "skills" / "retry-budget"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: retry-budget\ndescription: How to size a retry budget.\n---\n"
                                    + "Budget three tries, then give up. " * 40 + "\n")
    _, requests = host.claude_p(f'XMCP Skill {{"skill": "retry-budget"}}\nXREAD {deep / "relay.py"}')
    sent = json.dumps(body(requests[-1]))
    assert "Retries back off exponentially" in sent and "Budget three tries" in sent
    every_file_agrees(host)


def test_background_bash_with_monitor_and_task_stop(host: ClaudeHost):
    background = json.dumps({"command": "for i in 1 2 3 4 5 6 7 8; do echo tick $i; sleep 1; done",
                             "run_in_background": True, "description": "ticks"})
    monitor = json.dumps({"description": "beats", "timeout_ms": 5000,
                          "command": "for i in 1 2; do echo beat $i; sleep 1; done"})
    _, requests = host.claude_p(f"XSTEPS\nXMCP Bash {background}\nXMCP Monitor {monitor}\n"
                                'XMCP TaskStop {"task_id": "{task}"}\nXREAD notes.txt',
                                "--tools", "Read,Bash,Monitor,TaskStop")
    results = json.dumps(body(requests[-1]))
    assert "Successfully stopped task" in results
    (transcript,) = host.transcripts()
    # the run may end before the monitor's events come: wait until the transcript has settled
    assert wait_until(lambda: len(host.fake.requests) == len(recorded_requests(host, transcript)), timeout=30)
    every_file_agrees(host)


def test_two_megabyte_outputs(host: ClaudeHost):
    (host.project / "big.log").write_text("".join(f"line {n}: the retry budget is {n % 97} seconds\n"
                                                  for n in range(50_000)))  # about 2 MB
    _, requests = host.claude_p("XBASH cat big.log\nXBASH seq 1 300000\nXREAD big.log")
    assert len(requests) == 2
    every_file_agrees(host)


def test_121_calls_in_one_turn(host: ClaudeHost):
    _, requests = host.claude_p("XSTEPS\nXREPEAT 120 XBASH sed -n {k}p app.py", timeout=600)
    assert len(requests) == 121
    (row,) = every_file_agrees(host)
    assert row["api_calls"] == 121
