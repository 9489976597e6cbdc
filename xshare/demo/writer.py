"""The Claude Code transcript writer: real row shapes, invented content, for tests and the demo.

Every project, file, prompt and id here is invented. The row shapes follow the real JSONL format
(docs/claude-code.md sections 5-6): one row per content block, repeated usage snapshots, tool results
with `toolUseResult`, attachments, compaction and microcompaction markers, subagent files.
"""

from __future__ import annotations

import copy
import json
import random
import re
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

Row = dict[str, Any]
DEFAULT_VERSION = "2.1.90"
CHARS_PER_TOKEN = 3.4  # Anthropic's tokenizer yields more tokens than chars / 4
CACHE_TTL = timedelta(minutes=5)
_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def text(s: str) -> Row:
    """A text content block."""
    return {"type": "text", "text": s}


def thinking(s: str) -> Row:
    """A thinking content block (the writer adds a signature)."""
    return {"type": "thinking", "thinking": s}


def tool_use(name: str, tool_input: Row) -> Row:
    """A tool_use content block (the writer assigns a fresh toolu_ id unless one is given)."""
    return {"type": "tool_use", "name": name, "input": tool_input}


def project_dir_name(cwd: str) -> str:
    """The folder Claude Code stores a working directory's transcripts under."""
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def _reminder(s: str) -> str:
    return f"<system-reminder>\n{s}\n</system-reminder>"


def _chars(content: Any) -> int:
    if isinstance(content, str):
        return len(content)
    return sum(len(b["text"]) if b.get("type") == "text" else len(json.dumps(b)) for b in content)


class TranscriptWriter:
    """Builds the lines of one Claude Code transcript (a session file or a subagent file)."""

    def __init__(self, session_id: str, cwd: str, *, version: str = DEFAULT_VERSION, start: datetime,
                 sidechain: bool = False, agent_id: str | None = None, model: str | None = None,
                 system_tokens: int = 18_000, git_branch: str = "main", gateway: bool = False,
                 slug: str | None = None) -> None:
        self.session_id, self.cwd, self.version, self.git_branch = session_id, cwd, version, git_branch
        self._v = tuple(int(x) for x in version.split(".")[:3])
        self.sidechain, self.agent_id, self.slug, self.gateway = sidechain, agent_id, slug, gateway
        self.model = model or ("claude-sonnet-4-20250514" if self._v < (2,) else "claude-sonnet-4-6")
        self.system_tokens = system_tokens
        self.arrow_reads = self._v < (2, 1, 86)  # `     N→line` up to 2.1.85, `N<TAB>line` after
        self.null_stop_reason = self._v < (2, 1, 60)  # older builds left stop_reason null on every row
        self.nested_cache = self._v >= (1, 0, 80)  # usage.cache_creation{ephemeral_5m, ephemeral_1h}
        self.start = self.now = start
        self.rows: list[Row | str] = []
        self.calls = self.tool_uses = 0
        self.last_usage: Row = {}
        self._rng = random.Random(f"{session_id}/{agent_id}/{sidechain}/{start.isoformat()}")
        self._leaf: str | None = None
        self._chars = 0  # characters of the conversation now in context
        self._sizes: dict[str, int] = {}  # tool id / attachment uuid -> characters (for microcompaction)
        self._prev_prompt = 0
        self._last_call: datetime | None = None
        self._cold = True
        self._tool_rows: dict[str, str] = {}
        self._prompt_uuid: str | None = None
        self._prompt_time = start

    # ids and clock -------------------------------------------------------------------------------
    def _rand(self, n: int, alphabet: str = _B62) -> str:
        return "".join(self._rng.choice(alphabet) for _ in range(n))

    def new_uuid(self) -> str:
        """A deterministic v4 uuid."""
        return str(uuid.UUID(int=self._rng.getrandbits(128), version=4))

    def hex_id(self, n: int = 16) -> str:
        """Deterministic lowercase hex, e.g. for agent ids."""
        return self._rand(n, "0123456789abcdef")

    def _tick(self, lo: float, hi: float) -> str:
        self.now += timedelta(milliseconds=self._rng.randint(int(lo * 1000), int(hi * 1000)))
        return _iso(self.now)

    def idle(self, minutes: float) -> None:
        """Advance the clock (a gap over 5 minutes makes the next call rebuild the cache)."""
        self.now += timedelta(minutes=minutes)

    def advance_to(self, t: datetime) -> None:
        """Move the clock forward to t (e.g. after a subagent finished)."""
        self.now = max(self.now, t)

    def prompt_estimate(self) -> int:
        """Prompt tokens the next call would be billed for: system overhead + conversation / 3.4."""
        return self.system_tokens + round(self._chars / CHARS_PER_TOKEN)

    # rows ----------------------------------------------------------------------------------------
    def _row(self, kind: str, body: Row, gap: tuple[float, float] = (2.0, 6.0), *, root: bool = False,
             chain: bool = True) -> Row:
        row: Row = {"parentUuid": None if root else self._leaf, "isSidechain": self.sidechain}
        if self.agent_id:
            row["agentId"] = self.agent_id
        row["type"] = kind
        row.update(body)
        row["uuid"], row["timestamp"], row["userType"] = self.new_uuid(), self._tick(*gap), "external"
        if self._v >= (2,):
            row["entrypoint"] = "cli"
        row.update(cwd=self.cwd, sessionId=self.session_id, version=self.version, gitBranch=self.git_branch)
        if self.slug:
            row["slug"] = self.slug
        self.rows.append(row)
        if chain:
            self._leaf = row["uuid"]
        return row

    def user(self, prompt: str, *, reminder: str | None = None, blocks: list[Row] | None = None) -> str:
        """A human prompt (string content, or text blocks when a reminder or extra blocks are given)."""
        content: str | list[Row] = prompt
        if reminder or blocks:
            content = [text(prompt), *(blocks or []), *([text(_reminder(reminder))] if reminder else [])]
        extra = {"permissionMode": "default"} if self._v >= (2,) else {}
        row = self._row("user", {"message": {"role": "user", "content": content}, **extra}, (15, 80))
        self._chars += _chars(content)
        self._prompt_uuid, self._prompt_time = row["uuid"], self.now
        return row["uuid"]

    def meta(self, body: str) -> str:
        """A user row with isMeta true (command caveats, skill expansions)."""
        row = self._row("user", {"message": {"role": "user", "content": body}, "isMeta": True}, (0.01, 0.3))
        self._chars += len(body)
        return row["uuid"]

    def _usage(self, inp: int, create: int, read: int, out: int, final: bool) -> Row:
        u: Row = {"input_tokens": inp, "cache_creation_input_tokens": create, "cache_read_input_tokens": read}
        if self.nested_cache:
            u["cache_creation"] = {"ephemeral_5m_input_tokens": create, "ephemeral_1h_input_tokens": 0}
        u["output_tokens"] = out
        if final and self._v >= (2,):
            u["server_tool_use"] = {"web_search_requests": 0, "web_fetch_requests": 0}
        u["service_tier"] = "standard"
        if self._v >= (2,):
            u["inference_geo"] = "" if final else "not_available"
        if final and self._v >= (2, 1):
            u.update(iterations=[], speed="standard")
        return u

    def call(self, *blocks: Row, usage: Row | None = None, request_id: bool = True,
             null_stop_reason: bool | None = None, model: str | None = None) -> list[str]:
        """One API call written as one row per content block; returns the tool_use ids in order.

        usage: explicit {input_tokens, cache_creation_input_tokens, cache_read_input_tokens, output_tokens}
        (missing keys computed); request_id=False writes message.id only (gateway style)."""
        items = [copy.deepcopy(b) for b in blocks]
        ids = []
        for k, b in enumerate(items):
            if b["type"] == "tool_use":
                items[k] = {"type": "tool_use", "id": b.get("id") or "toolu_01" + self._rand(22), **b}
                ids.append(items[k]["id"])
            elif b["type"] == "thinking":
                b.setdefault("signature", "Eu" + self._rand(86) + "==")
        prompt = self.prompt_estimate()
        cold = self._cold or self._last_call is None or self.now - self._last_call > CACHE_TTL
        read = 0 if cold or self.gateway else min(self._prev_prompt, prompt)
        inp = prompt if self.gateway else min(self._rng.randint(1, 10), max(prompt - read, 1))
        out = 0
        for b in items:
            body = b.get("text") or b.get("thinking") or ""
            args = round(len(json.dumps(b["input"])) / 3) + 12 if "input" in b else 3
            out += round(len(body) / 3.2) + args
            out += self._rng.randint(30, 400) if b["type"] == "thinking" else 0
        u = {"input_tokens": inp, "cache_creation_input_tokens": max(prompt - read - inp, 0),
             "cache_read_input_tokens": read, "output_tokens": max(out, 1), **(usage or {})}
        inp, create, read, out = (u[k] for k in ("input_tokens", "cache_creation_input_tokens",
                                                 "cache_read_input_tokens", "output_tokens"))
        msg_id = "msg_01" + self._rand(22)
        req = "req_011C" + self._rand(20) if request_id and not self.gateway else None
        nulls = self.null_stop_reason if null_stop_reason is None else null_stop_reason
        placeholder = min(out, self._rng.randint(1, 9))
        for i, b in enumerate(items):
            last = i == len(items) - 1
            stop = None if nulls or not last else ("tool_use" if ids else "end_turn")
            m = {"model": model or self.model, "id": msg_id, "type": "message", "role": "assistant",
                 "content": [b], "stop_reason": stop, "stop_sequence": None,
                 "usage": self._usage(inp, create, read, out if last else placeholder, last)}
            row = self._row("assistant", {"message": m, **({"requestId": req} if req else {})},
                            (3, 12) if i == 0 else (0.3, 2.5))
            if b["type"] == "tool_use":
                self._tool_rows[b["id"]] = row["uuid"]
            if b["type"] != "thinking":
                self._chars += _chars([b])
        self._prev_prompt, self._last_call, self._cold = inp + create + read, self.now, False
        self.calls += 1
        self.tool_uses += len(ids)
        self.last_usage = self._usage(inp, create, read, out, True)
        return ids

    def use(self, name: str, tool_input: Row, *, say: str | None = None, think: str | None = None) -> str:
        """One call holding optional thinking and text plus a single tool_use; returns its id."""
        blocks = ([thinking(think)] if think is not None else []) + ([text(say)] if say else [])
        return self.call(*blocks, tool_use(name, tool_input))[0]

    def synthetic(self, message: str, *, api_error_status: int | None = None) -> str:
        """A locally generated `<synthetic>` assistant row (not billed); optionally an API error."""
        m = {"id": self.new_uuid(), "container": None, "model": "<synthetic>", "role": "assistant",
             "stop_reason": "stop_sequence", "stop_sequence": "", "type": "message",
             "usage": self._usage(0, 0, 0, 0, True), "content": [text(message)]}
        body: Row = {"message": m}
        if api_error_status:
            body.update(error="server_error", isApiErrorMessage=True, apiErrorStatus=api_error_status)
        return self._row("assistant", body, (1, 30))["uuid"]

    # tool results --------------------------------------------------------------------------------
    def tool_result(self, tool_id: str, content: str | list[Row], tool_use_result: Any = None, *,
                    is_error: bool = False, reminder: str | None = None,
                    gap: tuple[float, float] = (0.2, 2.0)) -> str:
        """A user row carrying one tool_result block plus the top-level toolUseResult."""
        if reminder:
            content = (content + "\n\n" + _reminder(reminder) if isinstance(content, str)
                       else [*content, text(_reminder(reminder))])
        block: Row = {"tool_use_id": tool_id, "type": "tool_result", "content": content}
        if is_error:
            block["is_error"] = True
        body: Row = {"message": {"role": "user", "content": [block]}}
        if tool_use_result is not None:
            body["toolUseResult"] = tool_use_result
        if self._v >= (2,) and tool_id in self._tool_rows:
            body["sourceToolAssistantUUID"] = self._tool_rows[tool_id]
        row = self._row("user", body, gap)
        self._sizes[tool_id] = _chars(content)
        self._chars += self._sizes[tool_id]
        return row["uuid"]

    def numbered(self, lines: list[str], start: int = 1) -> str:
        """Read-style line numbering for this writer's version."""
        fmt = "{:>6}→{}" if self.arrow_reads else "{}\t{}"
        return "\n".join(fmt.format(n, s) for n, s in enumerate(lines, start))

    def read_result(self, tool_id: str, path: str, content: str, *, offset: int = 1, limit: int | None = None,
                    reminder: str | None = None) -> str:
        """A Read result: numbered text plus toolUseResult{type, file{...}}."""
        lines = content.split("\n")[:-1] if content.endswith("\n") else content.split("\n")
        part = lines[offset - 1: offset - 1 + limit if limit else None]
        tur = {"type": "text", "file": {"filePath": path, "content": "\n".join(part), "numLines": len(part),
                                        "startLine": offset, "totalLines": len(lines)}}
        return self.tool_result(tool_id, self.numbered(part, offset), tur, reminder=reminder)

    def bash_result(self, tool_id: str, stdout: str, stderr: str = "", *, exit_code: int = 0) -> str:
        """A Bash result; a non-zero exit code makes an is_error result as Claude Code writes it."""
        out = "\n".join(s for s in (stdout.rstrip("\n"), stderr.rstrip("\n")) if s)
        if exit_code:
            msg = f"Exit code {exit_code}\n{out}"
            return self.tool_result(tool_id, msg, "Error: " + msg, is_error=True, gap=(1, 9))
        tur = {"stdout": stdout.rstrip("\n"), "stderr": stderr, "interrupted": False, "isImage": False}
        return self.tool_result(tool_id, out, tur, gap=(0.5, 8))

    def grep_result(self, tool_id: str, hits: dict[str, list[tuple[int, str]]], *,
                    mode: str = "files_with_matches") -> str:
        """A Grep result in files_with_matches or content mode; hits = {path: [(line, text)]}."""
        files = [f for f, h in hits.items() if h]
        if mode == "content":
            lines = [f"{f}:{n}:{s}" for f, h in hits.items() for n, s in h]
            tur = {"mode": mode, "numFiles": 0, "filenames": [], "content": "\n".join(lines),
                   "numLines": len(lines)}
            return self.tool_result(tool_id, "\n".join(lines) or "No matches found", tur)
        body = f"Found {len(files)} file{'s' * (len(files) != 1)}\n" + "\n".join(files)
        tur = {"mode": mode, "filenames": files, "numFiles": len(files)}
        return self.tool_result(tool_id, body if files else "No files found", tur)

    def glob_result(self, tool_id: str, filenames: list[str]) -> str:
        """A Glob result: one path per line plus toolUseResult{filenames, durationMs, numFiles, truncated}."""
        tur = {"filenames": filenames, "durationMs": self._rng.randint(8, 120), "numFiles": len(filenames),
               "truncated": False}
        return self.tool_result(tool_id, "\n".join(filenames) or "No files found", tur)

    def edit_result(self, tool_id: str, path: str, old: str, new: str, original: str) -> str:
        """An Edit result with a `cat -n` snippet and a structuredPatch."""
        start = original[: original.find(old)].count("\n") + 1
        lines = original.replace(old, new, 1).split("\n")
        lo = max(start - 3, 1)
        snippet = self.numbered(lines[lo - 1: start + new.count("\n") + 3], lo)
        patch = [{"oldStart": start, "oldLines": old.count("\n") + 1, "newStart": start,
                  "newLines": new.count("\n") + 1,
                  "lines": [f"-{s}" for s in old.split("\n")] + [f"+{s}" for s in new.split("\n")]}]
        tur = {"filePath": path, "oldString": old, "newString": new, "originalFile": original,
               "structuredPatch": patch, "userModified": False, "replaceAll": False}
        msg = (f"The file {path} has been updated. "
               "Here's the result of running `cat -n` on a snippet of the edited file:")
        return self.tool_result(tool_id, f"{msg}\n{snippet}", tur)

    def write_result(self, tool_id: str, path: str, content: str, original: str | None = None) -> str:
        """A Write result (type create, or update when the file existed)."""
        tur: dict[str, object] = {"type": "update" if original else "create", "filePath": path, "content": content,
               "structuredPatch": [], "originalFile": original}
        msg = f"The file {path} has been updated." if original else f"File created successfully at: {path}"
        return self.tool_result(tool_id, msg, tur)

    def task_result(self, tool_id: str, sub: TranscriptWriter, summary: str, *, prompt: str,
                    agent_type: str) -> str:
        """The parent's result of a Task call, summarising the subagent transcript `sub`."""
        u = sub.last_usage
        total = sum(u[k] for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
                                   "output_tokens"))
        ms = int((sub.now - sub.start).total_seconds() * 1000)
        stats = {"content": [text(summary)], "totalDurationMs": ms, "totalTokens": total,
                 "totalToolUseCount": sub.tool_uses, "usage": u}
        content = [text(summary)]
        if sub.agent_id:
            content.append(text(f"agentId: {sub.agent_id} (pass this id to continue the agent later)"))
            head = {"status": "completed", "prompt": prompt, "agentId": sub.agent_id, "agentType": agent_type}
            stats = {**head, **stats}
        self.advance_to(sub.now)
        return self.tool_result(tool_id, content, stats)

    # attachments ---------------------------------------------------------------------------------
    def attachment(self, attachment: Row, chars: int = 0) -> str:
        """An attachment row; chars = how much of it enters the context."""
        row = self._row("attachment", {"attachment": attachment}, (0.01, 0.5))
        self._chars += chars
        self._sizes[row["uuid"]] = chars
        return row["uuid"]

    def hook_success(self, content: str, *, event: str = "SessionStart", source: str = "startup",
                     command: str = "python3 ~/.claude/hooks/session_start.py") -> str:
        """A hook_success attachment (SessionStart by default) whose content enters the context."""
        return self.attachment({"type": "hook_success", "hookName": f"{event}:{source}",
                                "toolUseID": self.new_uuid(), "hookEvent": event, "content": content,
                                "stdout": content, "stderr": "", "exitCode": 0, "command": command,
                                "durationMs": self._rng.randint(40, 900)}, len(content))

    def hook_context(self, content: list[str], *, event: str = "UserPromptSubmit") -> str:
        """A hook_additional_context attachment (content is a list of strings)."""
        return self.attachment({"type": "hook_additional_context", "content": content, "hookName": event,
                                "toolUseID": event, "hookEvent": event}, sum(map(len, content)))

    def skill_listing(self, skills: dict[str, str]) -> str:
        """A skill_listing attachment."""
        body = "\n".join(f"- {k}: {v}" for k, v in skills.items())
        return self.attachment({"type": "skill_listing", "content": body, "skillCount": len(skills),
                                "isInitial": True}, len(body))

    def nested_memory(self, path: str, content: str) -> str:
        """A nested_memory attachment (a CLAUDE.md pulled in on demand)."""
        inner = {"path": path, "type": "Project", "content": content, "contentDiffersFromDisk": False}
        return self.attachment({"type": "nested_memory", "path": path, "content": inner,
                                "displayPath": path.removeprefix(self.cwd + "/")}, len(content))

    def file_attachment(self, path: str, content: str) -> str:
        """A file attachment (an @-mentioned file)."""
        n = content.count("\n") + (not content.endswith("\n"))
        f = {"filePath": path, "content": content, "numLines": n, "startLine": 1, "totalLines": n}
        return self.attachment({"type": "file", "filename": path, "content": {"type": "text", "file": f},
                                "displayPath": path.removeprefix(self.cwd + "/")}, len(content))

    # compaction ----------------------------------------------------------------------------------
    def compact(self, summary: str, *, trigger: str = "manual", pre_tokens: int | None = None) -> str:
        """compact_boundary (parentUuid null) + isCompactSummary user row; context = the summary only."""
        meta = {"trigger": trigger, "preTokens": self.prompt_estimate() if pre_tokens is None else pre_tokens}
        self._row("system", {"logicalParentUuid": self._leaf, "subtype": "compact_boundary",
                             "content": "Conversation compacted", "isMeta": False, "level": "info",
                             "compactMetadata": meta}, (1, 4), root=True)
        row = self._row("user", {"message": {"role": "user", "content": summary},
                                 "isVisibleInTranscriptOnly": True, "isCompactSummary": True}, (0, 0))
        self._chars, self._cold = len(summary), True
        self._sizes.clear()
        return row["uuid"]

    def microcompact(self, tool_ids: list[str], *, attachment_uuids: list[str] | None = None,
                     trigger: str = "auto") -> str:
        """microcompact_boundary clearing old tool results (and attachments) from the context."""
        cleared = list(attachment_uuids or [])
        pre = self.prompt_estimate()
        saved = sum(self._sizes.pop(k, 0) for k in [*tool_ids, *cleared])
        self._chars, self._cold = self._chars - saved, True
        meta = {"trigger": trigger, "preTokens": pre, "tokensSaved": round(saved / CHARS_PER_TOKEN),
                "compactedToolIds": list(tool_ids), "clearedAttachmentUUIDs": cleared}
        return self._row("system", {"subtype": "microcompact_boundary", "content": "Context microcompacted",
                                    "isMeta": False, "level": "info", "microcompactMetadata": meta})["uuid"]

    def replay(self, parent: TranscriptWriter) -> None:
        """Copy the parent's user/assistant rows since its last compaction, as internal agents
        (agent-acompact-*) do, so their requestIds appear in both files; inherit the parent's context."""
        rows = [r for r in parent.rows if isinstance(r, dict)]
        cut = max((i for i, r in enumerate(rows) if r.get("subtype") == "compact_boundary"), default=-1)
        for r in rows[cut + 1:]:
            if r.get("type") in ("user", "assistant"):
                head = {"parentUuid": self._leaf, "isSidechain": True,
                        **({"agentId": self.agent_id} if self.agent_id else {})}
                self.rows.append({**head, **{k: copy.deepcopy(v) for k, v in r.items() if k not in head}})
                self._leaf = r["uuid"]
        self._chars, self._prev_prompt = parent._chars, parent._prev_prompt
        self._last_call, self._cold = parent._last_call, parent._cold
        self.advance_to(parent.now)

    def absorb(self, other: TranscriptWriter) -> None:
        """Append another writer's rows inline (1.0.x wrote Task subagent rows into the main file)."""
        self.rows.extend(other.rows)
        self.advance_to(other.now)

    # noise lines ---------------------------------------------------------------------------------
    def progress(self, data: Row, tool_use_id: str | None = None) -> None:
        """A `progress` row (hook_progress, bash_progress, agent_progress ...); not part of the chain."""
        ids = {"toolUseID": tool_use_id, "parentToolUseID": tool_use_id} if tool_use_id else {}
        self._row("progress", {"data": data, **ids}, (0.05, 1.0), chain=False)

    def queue_operation(self, operation: str, content: str | None = None) -> None:
        """A queue-operation line (enqueue, dequeue, remove, popAll)."""
        extra = {"content": content} if content else {}
        self.rows.append({"type": "queue-operation", "operation": operation, "timestamp": self._tick(0, 0.2),
                          "sessionId": self.session_id, **extra})

    def file_history_snapshot(self) -> None:
        """A file-history-snapshot line for the latest prompt."""
        mid = self._prompt_uuid or self.new_uuid()
        snap = {"messageId": mid, "trackedFileBackups": {}, "timestamp": _iso(self.now)}
        self.rows.append({"type": "file-history-snapshot", "messageId": mid, "snapshot": snap,
                          "isSnapshotUpdate": False})

    def last_prompt(self, prompt: str) -> None:
        """A last-prompt line."""
        self.rows.append({"type": "last-prompt", "lastPrompt": prompt, "leafUuid": self._leaf,
                          "sessionId": self.session_id})

    def ai_title(self, title: str) -> None:
        """An ai-title line."""
        self.rows.append({"type": "ai-title", "aiTitle": title, "sessionId": self.session_id})

    def turn_duration(self) -> None:
        """A system turn_duration row closing a turn."""
        ms = int((self.now - self._prompt_time).total_seconds() * 1000)
        self._row("system", {"subtype": "turn_duration", "durationMs": ms, "messageCount": len(self.rows),
                             "isMeta": False}, (0.01, 0.2))

    def raw(self, line: str | Row) -> None:
        """Append a line verbatim (a dict is JSON-encoded, a str is written as is, even if invalid)."""
        self.rows.append(line)

    def lines(self) -> list[str]:
        """The JSON text of each line, without newlines."""
        return [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False, separators=(",", ":"))
                for r in self.rows]

    def write(self, path: Path, *, cut_last_line: int | None = None) -> Path:
        """Write newline-terminated UTF-8 lines; cut_last_line leaves the last line unfinished."""
        out = self.lines()
        data = "".join(s + "\n" for s in out)
        if cut_last_line is not None:
            data = "".join(s + "\n" for s in out[:-1]) + out[-1][:cut_last_line]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode("utf-8"))
        return path
