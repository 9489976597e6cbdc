"""ARCHITECTURE.md's "How to add an agent" holds: a seventh agent is one folder (its adapter, reader, test of
its files and tools) and one line of the agents' table, and `report`, `sessions`, `session ID`, `session PATH`
and `classify --jsonl` reach it with no other change. The agent (Tern Code, JSONL chats) and its format are
invented here; its folder is written to a temporary place, its line added to the table before the CLI loads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SESSION = "tern-0001"
FILE_TEXT = "x = 1\n" * 400  # 2,400 characters: 600 tokens at --estimate's characters / 4

# the folder a seventh agent needs, file by file (agents/<name>/ in the package)
FOLDER = {
    "__init__.py": "",
    "tools.py": '''
from xshare.measure.tool_tables import tool_table

TOOLS = tool_table("tern", exploration="read_file grep", edit="edit", shell={"run_shell_command": "command"})
''',
    "recognise.py": '''
from pathlib import Path

from xshare.agents.common.sniff import first_record, sniff


def recognises(path: Path) -> bool:
    record = first_record(sniff(path))
    return record is not None and record.get("type") == "tern_session"
''',
    "reader.py": '''
from collections import Counter
from pathlib import Path

from tern.tools import TOOLS
from xshare.agents.common.replay import Replay, json_objects

AGENT, NAME, FLAG, KIND = "tern", "Tern Code", "tern_home", "files"


def default_homes() -> list[Path]:
    return [Path.home() / ".tern"]


def describe(homes: list[Path]) -> list[str]:
    return [f"Tern Code chats under {home}" for home in homes]


def discover(homes: list[Path]) -> list[Path]:
    return sorted(path for home in homes for path in (home / "chats").glob("*.jsonl"))


def read(path: Path, counter, problems: Counter, ledgers: dict | None = None) -> list[dict]:
    replay = Replay(TOOLS, counter, problems, ledgers is not None)
    session_id = path.stem
    for record in json_objects(path.read_bytes(), problems, "Tern Code chat"):
        if record["type"] == "tern_session":
            session_id = record["id"]
        elif record["type"] == "user":
            replay.add("conversation", record["text"])
        elif record["type"] == "assistant":  # what it produced, then the call that billed it
            replay.output("conversation", record.get("text", ""))
            for call in record.get("calls", []):
                replay.tool_call(call["id"], call["name"], call["args"])
            usage = record["usage"]
            replay.call(usage["input"] + usage["cached"], {"input": usage["input"], "cache_read": usage["cached"],
                                                          "output": usage["output"]}, replay.seen(record["time"]))
        elif record["type"] == "tool":
            replay.tool_result(record["id"], record["output"])
    row = replay.row(session_id, "interactive")
    if ledgers is not None:
        ledgers[row["id"]] = replay.ledger
    return [row]
''',
    "adapter.py": '''
from tern import reader
from tern.recognise import recognises
from tern.tools import TOOLS
from xshare.agents.common.file_agent import FileAgent

ADAPTER = FileAgent(reader, recognises, TOOLS)
''',
}
# its line in agents/table.py
TABLE_LINE = 'AgentLine("tern", "Tern Code", "--tern-home", "PATH", "a Tern Code home (repeatable)", "tern.adapter")'


def chat(home: Path) -> Path:
    """One session: a prompt, a call that reads a file, the file's text, a second call that carries it."""
    records = [
        {"type": "tern_session", "id": SESSION},
        {"type": "user", "text": "what does a.py set x to?"},
        {"type": "assistant", "time": "2026-11-30T10:00:00Z", "usage": {"input": 1000, "cached": 0, "output": 20},
         "calls": [{"id": "c1", "name": "read_file", "args": {"path": "a.py"}}]},
        {"type": "tool", "id": "c1", "output": FILE_TEXT},
        {"type": "assistant", "time": "2026-11-30T10:00:05Z", "text": "x is 1.",
         "usage": {"input": 700, "cached": 1000, "output": 5}},
    ]
    path = home / "chats" / f"{SESSION}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def xshare(tmp_path: Path, *argv: str, stdin: str = "") -> subprocess.CompletedProcess:
    """The CLI with the seventh agent's folder importable and its line added to the table."""
    program = (f"import sys; sys.path.insert(0, {str(tmp_path / 'agent')!r}); from xshare.agents import table; "
               f"from xshare.agents.table import AgentLine; table.AGENTS = (*table.AGENTS, {TABLE_LINE}); "
               "from xshare.cli import main; raise SystemExit(main(sys.argv[1:]))")
    return subprocess.run([sys.executable, "-c", program, *argv], input=stdin, capture_output=True, text=True,
                          timeout=120, cwd=REPO, env={**os.environ})


def test_a_seventh_agent_is_one_folder_and_one_table_line(isolated_home: Path, tmp_path: Path):
    folder = tmp_path / "agent" / "tern"
    folder.mkdir(parents=True)
    for name, text in FOLDER.items():
        (folder / name).write_text(text.lstrip())
    path = chat(tmp_path / "tern-home")
    home = ["--tern-home", str(tmp_path / "tern-home"), "--estimate"]

    done = xshare(tmp_path, "report", "--all", "--no-history", "--json", *home)
    assert done.returncode == 0, done.stderr
    group = json.loads(done.stdout)["groups"]["tern/interactive"]
    assert group["sessions"] == 1 and group["api_calls"] == 2 and group["prompt_tokens_billed"] == 2700
    # the file's 600 tokens and the call that read it (`read_file {"path": "a.py"}`, 7), carried by the second call
    assert group["billed_tokens"]["exploration"] == 607
    assert group["exploration_share_of_prompt"] == 607 / 2700

    done = xshare(tmp_path, "sessions", "--all", "--json", *home)
    assert done.returncode == 0, done.stderr
    assert [(entry["id"], entry["agent"], entry["api_calls"]) for entry in json.loads(done.stdout)["sessions"]] == [
        (SESSION, "tern", 2)]

    by_id = xshare(tmp_path, "session", "tern-00", "--json", *home)  # a prefix of its id
    by_path = xshare(tmp_path, "session", str(path), "--json", *home)  # its file, told by its content
    assert by_id.returncode == by_path.returncode == 0, by_id.stderr + by_path.stderr
    assert json.loads(by_id.stdout) == json.loads(by_path.stdout)
    assert json.loads(by_id.stdout)["prompt_tokens_billed"] == 2700

    calls = [{"agent": "tern", "tool": "read_file", "input": {"path": "a.py"}},
             {"agent": "tern", "tool": "run_shell_command", "input": {"command": "rm -rf build"}}]
    done = xshare(tmp_path, "classify", "--jsonl", stdin="".join(json.dumps(call) + "\n" for call in calls))
    assert done.returncode == 0 and done.stdout.split() == ["exploration", "shell"], done.stderr
