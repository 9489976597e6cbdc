"""A seventh agent reaches every command through the registry alone: an invented one ("Quill", one JSON chat a
file) added to the registry, with no other change, is listed and paged by `html --index`, shown by the bare
`html` when its session is the latest, found by `session ID`, and summed by `collect`. Nothing outside the
adapters may ask which agent it is dealing with; this fails where something does."""

from __future__ import annotations

import json
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest

from tests.commands.test_cli import run
from tests.html.test_pages import START, assert_page_equals_row, read_page
from xshare.agents.common import counting
from xshare.agents.common.counting import TokenCounter
from xshare.agents.common.replay import Replay
from xshare.agents.common.whole_files import WholeFiles
from xshare.agents.protocol import Ambiguous, Found, Gathered, Looking
from xshare.demo import TranscriptWriter, text
from xshare.measure.ids import normal_id
from xshare.measure.row import SessionRow
from xshare.measure.tool_tables import tool_table
from xshare.sessions import registry
from xshare.state.paths import html_file

SOURCE = "def parse(line):\n    return [int(part) for part in line.split(',')]\n" * 40


class Quill(WholeFiles):
    """An invented agent: `<id>.quill.json` files, each {"id", "turns": [{"time", "prompt", "billed", "read"}]}."""

    agent, name, flag = "quill", "Quill", "quill_home"
    tools = tool_table("quill", exploration="read")
    origin_label, turn_markers = "Quill ", False

    def __init__(self, home: Path) -> None:
        self.home = home

    def default_homes(self) -> list[Path]:
        return [self.home]

    def describe(self, given: list[str] | None) -> list[str]:
        return [f"Quill chats under {self.home}"]

    def discover(self, given: list[str] | None) -> list[Path]:
        return sorted(self.home.glob("*.quill.json"))

    def unread(self, given: list[str] | None) -> list[str]:
        return []

    def recognises(self, path: Path) -> bool:
        return path.name.endswith(".quill.json")

    def read(self, path: Path, counter: TokenCounter, problems: Counter,
             ledgers: dict | None = None) -> list[SessionRow]:
        chat = json.loads(path.read_text(encoding="utf-8"))
        replay = Replay(self.tools, counter, problems, detail=ledgers is not None)
        for turn in chat["turns"]:
            replay.add("conversation", turn["prompt"])
            replay.call(turn["billed"], {"input": turn["billed"], "output": 20}, replay.seen(turn["time"]))
            replay.add("exploration", turn["read"])  # what the model read: present from the next call
        counter.flush()
        row = replay.row(chat["id"], "interactive")
        if ledgers is not None:
            ledgers[row["id"]] = replay.ledger
        return [row]  # type: ignore[list-item]

    def measure(self, looking: Looking) -> Gathered | None:
        if looking.given(self.agent) == []:
            return None
        problems: Counter = Counter()
        rows = [row for path in self.discover(None) for row in self.read(path, looking.counter.made(), problems)]
        return Gathered(rows, problems, looking.choice, bool(rows), self.describe(None))

    def session_ids(self, looking: Looking) -> list[str]:
        return [path.name.removesuffix(".quill.json") for path in self.discover(None)]

    def find(self, session_id: str, looking: Looking, problems: Counter,
             detail: bool = False) -> Found | Ambiguous | None:
        path = self.home / f"{normal_id(session_id)}.quill.json"
        return self.find_path(path, looking, problems, detail) if path.is_file() else None

    def find_path(self, path: Path, looking: Looking, problems: Counter,
                  detail: bool = False) -> Found | Ambiguous | None:
        found = self.read_detail(path, looking, problems)
        return found[0] if found else None


def quill_chat(home: Path, session_id: str, hours: int) -> Path:
    """Two calls: the second carries a file the model read after the first."""
    when = [(START + timedelta(hours=hours, minutes=minute)).isoformat() for minute in (0, 1)]
    turns = [{"time": when[0], "prompt": "find where the parser drops a field", "billed": 3000, "read": SOURCE},
             {"time": when[1], "prompt": "fix it", "billed": 6000, "read": ""}]
    path = home / f"{session_id}.quill.json"
    path.write_text(json.dumps({"id": session_id, "turns": turns}), encoding="utf-8")
    return path


@pytest.fixture
def quill(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Quill:
    """Quill in the registry beside the six, a Claude Code session older than its chats on the machine."""
    home = tmp_path / "quill"
    home.mkdir()
    quill_chat(home, "q-older", 1)
    quill_chat(home, "q-latest", 48)
    claude = TranscriptWriter("c-session", "/home/dev/app", start=START)
    claude.user("hello")
    claude.call(text("hi"))
    claude.write(tmp_path / "claude" / "projects" / "-home-dev-app" / "c-session.jsonl")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    adapter = Quill(home)
    monkeypatch.setattr(registry, "REGISTRY", (*registry.REGISTRY, adapter))
    monkeypatch.setattr(registry, "FLAGS", (*registry.FLAGS, adapter.flag))
    monkeypatch.setitem(registry.BY_AGENT, adapter.agent, adapter)
    return adapter


def quill_row(quill: Quill, session_id: str) -> SessionRow:
    from xshare.measure import tokens

    return quill.read(quill.home / f"{session_id}.quill.json", counting.LazyCounter(tokens.choose()), Counter())[0]


def test_session_finds_its_session_by_id_and_prefix(quill: Quill, capsys):
    row = quill_row(quill, "q-latest")
    assert 0 < row["exploration_share_of_context"] < 1 and row["api_calls"] == 2
    code, out, _ = run(capsys, "session", "--json", "q-latest")
    assert code == 0 and json.loads(out) == json.loads(json.dumps(row))
    code, out, _ = run(capsys, "session", "--json", "q-o")  # a prefix, as git takes one
    assert code == 0 and json.loads(out)["id"] == "q-older"


def test_the_bare_html_pages_the_latest_session_whichever_agent(quill: Quill, capsys):
    code, out, err = run(capsys, "html")
    assert code == 0, err
    assert Path(out.strip()) == html_file("q-latest")
    page = read_page(html_file("q-latest"))
    assert_page_equals_row(page, quill_row(quill, "q-latest"))
    assert "Quill " in html_file("q-latest").read_text(encoding="utf-8")  # its origin label, before its path


def test_the_index_lists_and_pages_its_sessions_beside_claude_codes(quill: Quill, capsys):
    code, out, err = run(capsys, "html", "--index")
    assert code == 0, err
    index = Path(out.strip())
    listed = index.read_text(encoding="utf-8")
    for session_id in ("q-older", "q-latest", "c-session"):
        assert f'data-session="{session_id}"' in listed, session_id
    for session_id in ("q-older", "q-latest"):
        assert_page_equals_row(read_page(index.parent / html_file(session_id).name), quill_row(quill, session_id))
    assert "wrote 3 session page(s)" in err


def test_collect_says_its_share_to_date(quill: Quill, capsys, tmp_path: Path):
    code, out, err = run(capsys, "collect", "--rows", str(tmp_path / "rows.jsonl"), "--all")
    assert code == 0, err
    rows = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text().splitlines()]
    assert {row["id"] for row in rows if row["agent"] == "quill"} == {"q-older", "q-latest"}
    share = quill_row(quill, "q-latest")["exploration_share_of_context"]  # both chats are alike
    assert f"quill/interactive share to date {share:.1%} (2 sessions)" in out
