"""Hermes state.db fixtures written with sqlite3: our own invented sessions, in the column sets of each schema.

The column lists follow ../shared/docs/hermes.md §2 and the schema dumps beside it (fresh order: each
version's CREATE TABLE). `upgraded_from` builds the tables of an older version and adds the rest with
ALTER TABLE, as Hermes's `_reconcile_columns()` does, so columns sit in another physical order.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

T0 = 1_780_000_000.0  # 2026-05-28T20:26:40Z
JSON = "\x00json:"
SUMMARY = (
    "[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns were compacted into the summary below. "
    "Invented handoff text for a test."
)
END_MARKER = "--- END OF CONTEXT SUMMARY — respond to the message below, not the summary above ---"

_SESSIONS_6 = (
    "id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, model TEXT, model_config TEXT, system_prompt TEXT, "
    "parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL, end_reason TEXT, message_count INTEGER "
    "DEFAULT 0, tool_call_count INTEGER DEFAULT 0, input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0, "
    "cache_read_tokens INTEGER DEFAULT 0, cache_write_tokens INTEGER DEFAULT 0, reasoning_tokens INTEGER DEFAULT 0, "
    "billing_provider TEXT, billing_base_url TEXT, billing_mode TEXT, estimated_cost_usd REAL, actual_cost_usd REAL, "
    "cost_status TEXT, cost_source TEXT, pricing_version TEXT, title TEXT"
).split(", ")
_MESSAGES_6 = (
    "id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, role TEXT NOT NULL, content TEXT, "
    "tool_call_id TEXT, tool_calls TEXT, tool_name TEXT, timestamp REAL NOT NULL, token_count INTEGER, "
    "finish_reason TEXT, reasoning TEXT, reasoning_details TEXT, codex_reasoning_items TEXT"
).split(", ")
# version -> (sessions columns added, messages columns added, tables added)
_ADDED = {
    8: (["api_call_count INTEGER DEFAULT 0"], ["reasoning_content TEXT"],
        ["state_meta (key TEXT PRIMARY KEY, value TEXT)"]),
    11: (["handoff_state TEXT", "handoff_platform TEXT", "handoff_error TEXT"], ["codex_message_items TEXT"], []),
    12: ([], ["platform_message_id TEXT"], []),
    13: ([], ["observed INTEGER DEFAULT 0"], []),
    14: (
        ["cwd TEXT", "rewind_count INTEGER NOT NULL DEFAULT 0", "archived INTEGER NOT NULL DEFAULT 0"],
        ["active INTEGER NOT NULL DEFAULT 1"],
        ["compression_locks (session_id TEXT PRIMARY KEY, holder TEXT NOT NULL, acquired_at REAL NOT NULL, "
         "expires_at REAL NOT NULL)"],
    ),
    17: (
        ["session_key TEXT", "chat_id TEXT", "chat_type TEXT", "thread_id TEXT", "git_branch TEXT",
         "git_repo_root TEXT", "compression_failure_cooldown_until REAL", "compression_failure_error TEXT"],
        ["compacted INTEGER NOT NULL DEFAULT 0"],
        [],
    ),
    19: (["display_name TEXT", "origin_json TEXT", "expiry_finalized INTEGER DEFAULT 0"], [], []),
    20: (
        [],
        ["effect_disposition TEXT"],
        ["session_model_usage (session_id TEXT NOT NULL, model TEXT NOT NULL, billing_provider TEXT NOT NULL "
         "DEFAULT '', billing_base_url TEXT NOT NULL DEFAULT '', billing_mode TEXT NOT NULL DEFAULT '', "
         "api_call_count INTEGER NOT NULL DEFAULT 0, input_tokens INTEGER NOT NULL DEFAULT 0, output_tokens INTEGER "
         "NOT NULL DEFAULT 0, cache_read_tokens INTEGER NOT NULL DEFAULT 0, cache_write_tokens INTEGER NOT NULL "
         "DEFAULT 0, reasoning_tokens INTEGER NOT NULL DEFAULT 0, first_seen REAL, last_seen REAL, "
         "PRIMARY KEY (session_id, model, billing_provider, billing_base_url, billing_mode))"],
    ),
    22: (["profile_name TEXT", "compression_fallback_streak INTEGER NOT NULL DEFAULT 0"], ["api_content TEXT"], []),
    30: (
        ["created_source TEXT", "system_prompt_hash TEXT", "last_activity_at REAL", "pinned INTEGER DEFAULT 0"],
        ["_compressed_summary INTEGER NOT NULL DEFAULT 0", "display_kind TEXT"],
        ["system_prompts (hash TEXT PRIMARY KEY, prompt TEXT)"],
    ),
}
VERSIONS = (6, 8, 11, 12, 13, 14, 17, 19, 20, 22, 30)
# schema 22: '' is the main loop; title_generation, compression, vision, ... are auxiliary calls
USAGE_TABLE_22 = (
    "session_model_usage (session_id TEXT NOT NULL, model TEXT NOT NULL, billing_provider TEXT NOT NULL DEFAULT '', "
    "billing_base_url TEXT NOT NULL DEFAULT '', billing_mode TEXT NOT NULL DEFAULT '', task TEXT NOT NULL DEFAULT '', "
    "api_call_count INTEGER NOT NULL DEFAULT 0, input_tokens INTEGER NOT NULL DEFAULT 0, output_tokens INTEGER NOT "
    "NULL DEFAULT 0, cache_read_tokens INTEGER NOT NULL DEFAULT 0, cache_write_tokens INTEGER NOT NULL DEFAULT 0, "
    "reasoning_tokens INTEGER NOT NULL DEFAULT 0, first_seen REAL, last_seen REAL, "
    "PRIMARY KEY (session_id, model, billing_provider, billing_base_url, billing_mode, task))"
)


def _columns_at(version: int) -> tuple[list[str], list[str], list[str], list[tuple[int, list[str], list[str]]]]:
    sessions, messages, tables = list(_SESSIONS_6), list(_MESSAGES_6), []
    steps = []
    for step, (s_add, m_add, t_add) in sorted(_ADDED.items()):
        if step <= version:
            steps.append((step, s_add, m_add))
            tables += t_add
    return sessions, messages, tables, steps


def call(name: str, arguments: dict, call_id: str) -> dict:
    """A tool call as the live agent stores it (nested shape)."""
    return {"id": call_id, "call_id": call_id, "response_item_id": f"fc_{call_id}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}


def fallback_call(name: str, arguments: dict) -> dict:
    """The flush path's shape: no ids, no function wrapper."""
    return {"name": name, "arguments": json.dumps(arguments)}


class HermesDb:
    """A state.db of one schema version. Values for columns the version lacks must be left at their default."""

    def __init__(self, path: Path, version: int = 22, upgraded_from: int | None = None, wal: bool = False,
                 null_active: bool = False) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.version = version
        self.con = sqlite3.connect(self.path, isolation_level=None)
        if wal:
            self.con.execute("PRAGMA journal_mode=WAL")
            self.con.execute("PRAGMA wal_autocheckpoint=0")
        sessions, messages, tables, steps = _columns_at(version)
        base = upgraded_from if upgraded_from is not None else version
        for step, s_add, m_add in steps:
            if step <= base:
                sessions += s_add
                messages += m_add
        self.con.execute(f"CREATE TABLE sessions ({', '.join(sessions)})")
        self.con.execute(f"CREATE TABLE messages ({', '.join(messages)})")
        for step, s_add, m_add in steps:
            if step > base:  # _reconcile_columns(): appended at the end, in the order of the release
                for column in s_add:
                    self.con.execute(f"ALTER TABLE sessions ADD COLUMN {column}")
                for column in m_add:
                    if null_active and column.startswith("active"):
                        column = "active INTEGER"  # older reconcilers added it without its default
                    self.con.execute(f"ALTER TABLE messages ADD COLUMN {column}")
        for table in tables:
            if table.startswith("session_model_usage") and version >= 22:
                table = USAGE_TABLE_22  # schema 22 puts `task` into the table and its key
            self.con.execute(f"CREATE TABLE {table}")
        self.con.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        self.con.execute("INSERT INTO schema_version VALUES (?)", (version,))
        self.con.execute("CREATE INDEX idx_messages_session ON messages(session_id, timestamp)")
        self.session_columns = {row[1] for row in self.con.execute("PRAGMA table_info(sessions)")}
        self.message_columns = {row[1] for row in self.con.execute("PRAGMA table_info(messages)")}
        self.clock = T0

    def _insert(self, table: str, columns: set[str], values: dict, defaults: dict) -> int:
        kept = {}
        for name, value in values.items():
            if name in columns:
                kept[name] = value
            elif value != defaults.get(name):
                raise ValueError(f"schema {self.version} has no {table}.{name} for {value!r}")
        names = ", ".join(f'"{name}"' for name in kept)
        marks = ", ".join("?" for _ in kept)
        cursor = self.con.execute(f"INSERT INTO {table} ({names}) VALUES ({marks})", tuple(kept.values()))
        return cursor.lastrowid

    def session(self, sid: str, source: str = "cli", *, model: str = "test/model", model_config: dict | None = None,
                parent: str | None = None, end_reason: str | None = None, started: float | None = None,
                ended: float | None = None, tokens: tuple[int, int, int, int] = (0, 0, 0, 0),
                api_calls: int | None = None, usage_row: bool = True, **extra) -> None:
        """tokens = (input, cache_read, cache_write, output), the session's cumulative counters."""
        values = {
            "id": sid, "source": source, "model": model,
            "model_config": json.dumps(model_config) if model_config is not None else None,
            "parent_session_id": parent, "started_at": self.clock if started is None else started,
            "ended_at": ended, "end_reason": end_reason, "input_tokens": tokens[0], "cache_read_tokens": tokens[1],
            "cache_write_tokens": tokens[2], "output_tokens": tokens[3], **extra,
        }
        if "api_call_count" in self.session_columns:  # schema 8 on; older databases never counted calls
            values["api_call_count"] = api_calls
        self._insert("sessions", self.session_columns, values, {"api_call_count": None, "last_activity_at": None})
        if usage_row and "session_model_usage" in self.tables():
            self.con.execute(
                "INSERT INTO session_model_usage (session_id, model, api_call_count, input_tokens, cache_read_tokens, "
                "cache_write_tokens, output_tokens) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (sid, model, api_calls or 0, *tokens),
            )

    def auxiliary(self, sid: str, task: str, tokens: tuple[int, int, int, int], calls: int = 1,
                  model: str = "aux/model") -> None:
        """A billed call only session_model_usage records (schema 22 on): tokens = (input, cache_read,
        cache_write, output)."""
        self.con.execute(
            "INSERT INTO session_model_usage (session_id, model, task, api_call_count, input_tokens, "
            "cache_read_tokens, cache_write_tokens, output_tokens) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (sid, model, task, calls, *tokens),
        )

    def tables(self) -> set[str]:
        return {row[0] for row in self.con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    def message(self, sid: str, role: str, content: object = None, *, ts: float | None = None,
                tool_calls: list | None = None, tool_call_id: str | None = None, tool_name: str | None = None,
                active: int | None = None, compacted: int = 0, api_content: str | None = None,
                summary_flag: int = 0) -> int:
        if ts is None:
            self.clock += 2.0
            ts = self.clock
        if isinstance(content, list):
            content = JSON + json.dumps(content)
        values = {
            "session_id": sid, "role": role, "content": content, "timestamp": ts,
            "tool_calls": json.dumps(tool_calls) if tool_calls else None, "tool_call_id": tool_call_id,
            "tool_name": tool_name, "compacted": compacted, "api_content": api_content,
            "_compressed_summary": summary_flag,
        }
        if active is not None:
            values["active"] = active
        return self._insert("messages", self.message_columns, values,
                            {"active": 1, "compacted": 0, "api_content": None, "_compressed_summary": 0})

    def close(self) -> Path:
        self.con.close()
        return self.path


def copy_database(source: Path, folder: Path, suffixes: tuple[str, ...] = ("", "-wal")) -> Path:
    """Copy a database's files (the main file and the sidecars named) into another folder."""
    folder.mkdir(parents=True, exist_ok=True)
    for suffix in suffixes:
        if Path(f"{source}{suffix}").exists():
            shutil.copyfile(f"{source}{suffix}", folder / f"state.db{suffix}")
    return folder / "state.db"


# --- the standard database: every rule the collector implements, in one file ---------------------


def read_result(text: str) -> str:
    return json.dumps({"content": text, "total_lines": 3, "truncated": False})


def terminal_result(text: str) -> str:
    return json.dumps({"output": text, "exit_code": 0, "error": None})


SOURCES = {
    # session id -> (source, expected row source)
    "s-cli": ("cli", "interactive"),
    "s-desktop": ("desktop", "interactive"),
    "s-local": ("local", "interactive"),
    "s-telegram": ("telegram", "interactive"),
    "s-cron": ("cron", "automated"),
    "s-oneshot": ("oneshot", "automated"),
    "s-a2a": ("a2a", "automated"),
    "s-api": ("api_server", "automated"),
    "s-sub": ("subagent", "subagent"),
    "s-tool": ("tool", "benchmark"),
    "s-tui": ("tui", "interactive"),  # `hermes chat --tui`: a person at the keyboard
    "s-discord": ("discord", "discord"),
}


def build_sources(db: HermesDb) -> None:
    """One two-call session per source value, each 1,000 prompt tokens over two calls."""
    for sid, (source, _) in SOURCES.items():
        db.session(sid, source, tokens=(400, 500, 100, 20), api_calls=2)
        db.message(sid, "user", "hello")
        db.message(sid, "assistant", "", tool_calls=[call("read_file", {"path": "a.py"}, f"{sid}-c1")])
        db.message(sid, "tool", read_result("1|x = 1"), tool_call_id=f"{sid}-c1", tool_name="read_file")
        db.message(sid, "assistant", "done")
    # a delegate child by marker only (schema 16 backfill), and a child by parent id only (not a subagent)
    db.session("s-delegate", "cli", model_config={"_delegate_from": "s-cli"}, parent="s-cli", tokens=(10, 0, 0, 1),
               api_calls=1)
    db.message("s-delegate", "user", "look around")
    db.message("s-delegate", "assistant", "nothing here")
    db.session("s-branch", "cli", model_config={"_branched_from": "s-cli"}, parent="s-cli", tokens=(10, 0, 0, 1),
               api_calls=1)
    db.message("s-branch", "user", "branch")
    db.message("s-branch", "assistant", "ok")


def build_with_sessiondb(out_dir: str | Path) -> Path:
    """OUT_DIR/state.db written by the installed hermes-agent's own SessionDB (any release from 0.13 on).

    Run in an interpreter that has hermes-agent and nothing of xshare (.ci/hermes.sh does). Methods and
    arguments a release lacks are skipped, so the same sessions exist in every schema: the two compaction
    layouts where the release has them (in place from 0.18), a delegate child, rotation, cron, a multimodal
    row with a rewind (0.16 on), a third-party `tool` session and absolute token totals.
    """
    import inspect
    import os

    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    os.environ["HERMES_HOME"] = str(out)  # before any hermes import: ~/.hermes is never touched
    for suffix in ("", "-wal", "-shm"):
        Path(f"{out / 'state.db'}{suffix}").unlink(missing_ok=True)
    from hermes_state import SessionDB

    db = SessionDB(db_path=out / "state.db")
    model = "test/model"

    def supported(method, *positional, **named):
        accepted = inspect.signature(method).parameters
        return method(*positional, **{key: value for key, value in named.items() if key in accepted})

    def append(sid: str, role: str, content=None, **named) -> int:
        return supported(db.append_message, sid, role, content, **named)

    def usage(sid: str, fresh: int, cached: int = 0, written: int = 0) -> None:
        supported(db.update_token_counts, sid, input_tokens=fresh, output_tokens=10, cache_read_tokens=cached,
                  cache_write_tokens=written, model=model, api_call_count=1)

    def turn(sid: str, calls: list[tuple[str, dict, str]], text: str | None = None) -> list[dict]:
        """One API call that asked for tools, then the tools' results."""
        made = [call(name, arguments, f"{sid[-4:]}-{index}-{len(str(arguments))}")
                for index, (name, arguments, _) in enumerate(calls)]
        append(sid, "assistant", text, tool_calls=made, finish_reason="tool_calls")
        usage(sid, 900, 4000, 300)
        rows = []
        for made_call, (name, _, result) in zip(made, calls, strict=True):
            append(sid, "tool", result, tool_name=name, tool_call_id=made_call["id"])
            rows.append({"role": "tool", "content": result, "tool_name": name, "tool_call_id": made_call["id"]})
        return [{"role": "assistant", "content": text, "tool_calls": made, "finish_reason": "tool_calls"}, *rows]

    summary = f"{SUMMARY}\nThe user asked about the scheduler; it was read.\n\n{END_MARKER}"

    cli = "20260101_090000_aaaaaa"
    db.create_session(cli, "cli", model=model, model_config={"max_iterations": 60})
    append(cli, "user", "Why does the scheduler skip jobs?")
    turn(cli, [("search_files", {"pattern": "def schedule"}, search_result("sched.py:10")),
               ("read_file", {"path": "sched.py"}, read_result("10|def schedule(): ..."))])
    turn(cli, [("terminal", {"command": "git log --oneline -3 -- sched.py"}, terminal_result("abc skip fix"))])
    tail = turn(cli, [("terminal", {"command": "python -m pytest -q"}, terminal_result("1 failed"))])
    turn(cli, [("patch", {"path": "sched.py", "old_string": "<", "new_string": "<="}, '{"success": true}')])
    if hasattr(db, "archive_and_compact"):  # 0.18+: in place, the protected tail copied after the summary
        db.archive_and_compact(cli, [{"role": "user", "content": summary}, *tail])
    append(cli, "assistant", "Fixed the off-by-one in schedule().", finish_reason="stop")
    usage(cli, 700, 2000)
    db.end_session(cli, "cli_close")

    sub = "20260101_090500_bbbbbb"
    db.create_session(sub, "subagent", model=model, model_config={"_delegate_from": cli}, parent_session_id=cli)
    append(sub, "user", "List the callers of schedule().")
    turn(sub, [("search_files", {"pattern": "schedule("}, search_result("cron.py:3"))])
    append(sub, "assistant", "One caller: cron.py:3.", finish_reason="stop")
    usage(sub, 100, 900)
    db.end_session(sub, "subagent_complete")

    parent, child = "20260101_100000_cccccc", "20260101_101000_dddddd"
    db.create_session(parent, "telegram", model=model)
    append(parent, "user", "what's in my notes?")
    tail = turn(parent, [("terminal", {"command": "ls ~/notes"}, terminal_result("a.md b.md"))])
    append(parent, "assistant", "Two notes.", finish_reason="stop")
    usage(parent, 300, 600)
    db.end_session(parent, "compression")  # rotation: a child continues with the compressed list
    db.create_session(child, "telegram", model=model, parent_session_id=parent)
    for row in [{"role": "user", "content": summary}, *tail]:  # 0.13's flush writes them one by one
        append(child, row["role"], row["content"], tool_calls=row.get("tool_calls"),
               tool_name=row.get("tool_name"), tool_call_id=row.get("tool_call_id"))
    append(child, "user", "read a.md")
    turn(child, [("read_file", {"path": "~/notes/a.md"}, read_result("1|buy milk"))])
    append(child, "assistant", "It says: buy milk.", finish_reason="stop")
    usage(child, 200, 500)

    cron = "cron_report_20260101_120000"
    db.create_session(cron, "cron", model=model)
    append(cron, "user", "[cron] disk report")
    turn(cron, [("terminal", {"command": "df -h /"}, terminal_result("/dev/sda1 50% /"))])
    append(cron, "assistant", "Disk half full.", finish_reason="stop")
    usage(cron, 200, 300)
    db.end_session(cron, "cron_complete")

    desk = "20260101_130000_eeeeee"
    db.create_session(desk, "desktop", model=model)
    append(desk, "user", [{"type": "text", "text": "What is on this screen?"},
                          {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}])
    append(desk, "assistant", "A failing build.", finish_reason="stop")
    usage(desk, 1500)
    undo = append(desk, "user", "remove the build folder")
    turn(desk, [("terminal", {"command": "rm -rf build"}, terminal_result(""))])
    if hasattr(db, "rewind_to_message"):
        db.rewind_to_message(desk, undo)
    append(desk, "user", "just show the log")
    turn(desk, [("read_file", {"path": "build.log"}, read_result("1|error"))])
    append(desk, "assistant", "The log says error.", finish_reason="stop")
    usage(desk, 100, 1500)

    tool = "20260101_140000_ffffff"
    db.create_session(tool, "tool", model=model)
    append(tool, "user", "Summarise: the quick brown fox.")
    append(tool, "assistant", "A fox.", finish_reason="stop")
    usage(tool, 40)
    db.end_session(tool, "oneshot_complete")

    acp = "acp_0a0b0c0d"
    db.create_session(acp, "acp", model=model)
    append(acp, "user", "open sched.py")
    turn_rows = [call("read_file", {"path": "sched.py"}, "acp-1")]
    append(acp, "assistant", None, tool_calls=turn_rows, finish_reason="tool_calls")
    append(acp, "tool", read_result("1|def schedule(): ..."), tool_name="read_file", tool_call_id="acp-1")
    append(acp, "assistant", "Opened.", finish_reason="stop")
    supported(db.update_token_counts, acp, input_tokens=3000, output_tokens=20, cache_write_tokens=2000,
              model=model, api_call_count=2, absolute=True)
    db.close()
    return out / "state.db"


def search_result(match: str) -> str:
    return json.dumps({"total_count": 1, "matches": [match]})


def build_standard(path: Path, version: int = 22, **options) -> Path:
    """The sources set plus the tool-name, multimodal and (where the schema has them) NeuralMind sessions."""
    db = HermesDb(path, version, **options)
    build_sources(db)
    # tool names from tool_calls: NULL tool_name, nested shape and fallback shape
    db.session("s-names", "cli", tokens=(300, 0, 0, 10), api_calls=3)
    db.message("s-names", "user", "find it")
    db.message("s-names", "assistant", None, tool_calls=[
        call("search_files", {"pattern": "def main"}, "n1"),
        call("terminal", {"command": "git log --oneline -3"}, "n2"),
        call("terminal", {"command": "pytest -q"}, "n3"),
    ])
    db.message("s-names", "tool", json.dumps({"matches": ["main.py:1"]}), tool_call_id="n1")
    db.message("s-names", "tool", terminal_result("abc first"), tool_call_id="n2")
    db.message("s-names", "tool", terminal_result("1 passed"), tool_call_id="n3")
    db.message("s-names", "assistant", None, tool_calls=[fallback_call("patch", {"path": "main.py", "old_string": "a",
                                                                                  "new_string": "b"})])
    db.message("s-names", "tool", json.dumps({"success": True}))
    db.message("s-names", "assistant", "patched")
    # multimodal content
    db.session("s-image", "desktop", tokens=(100, 0, 0, 5), api_calls=1)
    db.message("s-image", "user", [{"type": "text", "text": "what is this"},
                                   {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}])
    db.message("s-image", "assistant", "a cat")
    if "api_content" in db.message_columns:
        db.session("s-nm", "cli", tokens=(200, 0, 0, 5), api_calls=1, usage_row=False)
        db.message("s-nm", "user", "fix the parser", api_content="fix the parser\n\nCode matching this prompt: p.py")
        db.message("s-nm", "assistant", "ok")
    return db.close()


def hermes_rotations(path: Path, second: Path) -> None:
    """A weixin session continued twice after compactions (a child, then a grandchild), a subagent it
    delegated to, and a session whose id a second database holds too."""
    db, other = HermesDb(path), HermesDb(second)
    chain = [("w-0001", None), ("w-0002", "w-0001"), ("w-0003", "w-0002")]
    for number, (sid, parent) in enumerate(chain, 1):
        db.session(sid, "weixin", parent=parent, end_reason="compression" if number < 3 else None,
                   tokens=(1000 * number, 0, 0, 40), api_calls=2)
        _exchange(db, sid, f"src/part{number}.py")
    db.session("w-sub", "subagent", parent="w-0001", model_config={"_delegate_from": "w-0001"},
               tokens=(700, 0, 0, 20), api_calls=2)
    _exchange(db, "w-sub", "src/helper.py")
    for database, size in ((db, 900), (other, 1900)):
        database.session("twice-0001", "cli", tokens=(size, 0, 0, 30), api_calls=2)
        _exchange(database, "twice-0001", "README.md")
    db.close()
    other.close()


def _exchange(db: HermesDb, sid: str, read: str) -> None:
    db.message(sid, "user", f"what is in {read}?")
    db.message(sid, "assistant", "", tool_calls=[call("read_file", {"path": read}, f"{sid}-c1")])
    db.message(sid, "tool", read_result("\n".join(f"{n}|line {n}" for n in range(40))), tool_call_id=f"{sid}-c1",
               tool_name="read_file")
    db.message(sid, "assistant", f"{read} holds forty lines.")
