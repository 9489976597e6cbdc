"""Claude Code: find transcripts, and turn their lines into ledger events, incrementally.

One transcript file is one session. Its bytes can arrive in any number of pieces (the live hook reads
only what was appended); a line is taken once it is complete, so any split gives the same ledger.

Row types Claude Code 2.1.3xx added, none of which adds context by itself:
- `cost-state`: Claude Code's own cumulative usage totals for the session, per model (`modelUsage`), written
  at the end of each turn and carried on across --continue/--resume. They include the subagents' calls and
  the compaction calls, which no transcript records; the last one is kept (see unrecorded.py). A fork
  (--fork-session: assistant rows copied with `requestSessionId` naming the parent) starts from its
  parent's totals, so a fork's are not used.
- `api-request`: one per recorded request (`id` = the assistant rows' `requestRef`, `querySource`,
  `params`, `shapeHash`, and the messages as `api-request-blob` hashes: `keep` N of `base`, then `tail`).
- `api-request-shape`: the system prompt and tool schemas a request sent (`shape.system`, `shape.tools`).
- `api-request-blob`: one message as sent; it repeats what the user/assistant/attachment rows hold.
- `atis-latch`, `tools-used`: bookkeeping (a latch value; the names of the tools used so far).
Rows carry `entrypoint`: `cli` (the TUI), `sdk-cli` (`claude -p`), `sdk-ts`/`sdk-py` (the SDKs), ...;
sessions started through an SDK entry point are automated, not interactive.

What the reader keeps of every row or call is held as text up to 32,768 ids a map, then by 64-bit digests in
sorted arrays (xshare/measure/digests.py KeyMap, with its collision bound), so a session of any length costs a
few dozen bytes a call: the rows seen (8 bytes a row), each call's usage (8 + 24), the request ids (8), each
tool call's category (8 + 1), the results each row holds (8 + 8 a result) and each call's time (copies.py,
8 + 8). Saved and resumed by saved.py.
"""

from __future__ import annotations

from collections import Counter

from xshare.agents.claude_code import lines, saved
from xshare.agents.claude_code.content import (
    OPEN_REMINDER,
    is_prompt,
    json_text,
    media_blocks,
    notification_as_sent,
    result_text,
    texts,
    trailing_reminders,
)
from xshare.agents.claude_code.copies import Copies, call_key, request_of
from xshare.agents.claude_code.costs import cost_totals
from xshare.agents.claude_code.files import (  # discovery lives there; these names are this module's API too
    AGENT,
    AUTOMATED,
    INTERACTIVE,
    INTERNAL,
    INTERNAL_PREFIXES,
    SUBAGENT,
    TranscriptFile,
    default_roots,
    describe,
    discover,
    family_files,
    resolve_root,
)
from xshare.agents.claude_code.incremental import IncrementalLines
from xshare.agents.claude_code.reread import media_file, sent_texts
from xshare.agents.claude_code.usage import call_usage
from xshare.measure.classify import classify_tool, command_of
from xshare.measure.digests import KeptKeys, KeyMap
from xshare.measure.ledger import CATEGORIES, REREAD, ROUNDING_PER_MESSAGE, USAGE_FIELDS, Ledger, session_row
from xshare.measure.media import MAX_IMAGE_TOKENS, media_tokens
from xshare.measure.timestamps import refused
from xshare.state.store import LOADS_VIEWS, loads

TYPE_CHECKING = False  # typing.TYPE_CHECKING without loading typing (the live paths read here); checkers see True
if TYPE_CHECKING:
    from xshare.agents.common.counting import TokenCounter
    from xshare.measure.row import SessionRow

__all__ = ["AGENT", "AUTOMATED", "INTERACTIVE", "INTERNAL", "INTERNAL_PREFIXES", "SUBAGENT", "ClaudeTranscript",
           "TranscriptFile", "call_usage", "default_roots", "describe", "discover", "family_files", "resolve_root"]
# `claude -p` writes sdk-cli, the Agent SDKs sdk-ts and sdk-py: a program, not a person, drives these
AUTOMATED_ENTRYPOINT_PREFIX = "sdk-"
NEURALMIND_MARKER = "Code matching this prompt"
KNOWN_TYPES = frozenset(
    "assistant user attachment system progress queue-operation file-history-snapshot file-history-delta "
    "last-prompt ai-title custom-title permission-mode summary mode agent-name agent-color agent-setting "
    "pr-link tag turn_end atis-latch api-request api-request-shape api-request-blob tools-used cost-state".split()
)
_ROW_KINDS = ("assistant", "user", "attachment", "system")
REUSED_ID = ("calls whose request id an earlier call of the file had (another message id or prompt: a proxy's "
             "constant id?), each counted as its own call")


class ClaudeTranscript(IncrementalLines):
    """Reads one transcript into a ledger; resumable from `to_state()` at any complete line."""

    def __init__(self, file: TranscriptFile, counter: TokenCounter, detail: bool = False, copied=()) -> None:
        self.file = file
        self.copies = Copies(file.path, file.source == INTERNAL, copied)  # calls another file bills
        self.counter = counter
        self.count = counter.count  # bound once: called for every text
        self.tokenizer = counter.name
        self.ledger = Ledger(detail=detail, rounding=ROUNDING_PER_MESSAGE)
        self.offset = 0
        self.identity: list | None = None  # (device, inode) of the file the offset belongs to
        self.seen_rows = KeyMap()  # every user/assistant/attachment/system row's uuid
        self.tool_categories = KeyMap(1, "b")  # tool id -> its category's index in CATEGORIES
        # call key -> its usage snapshot (call_usage: each number at most MAX_TOKENS, 1e8, so 32 bits hold it)
        self.calls = KeyMap(len(USAGE_FIELDS) + 1, "i")
        self.requests = KeyMap()  # the ids those calls go by, to tell one reused (_count_reuse)
        self.problems: Counter[str] = Counter()
        self.entrypoint: str | None = None
        self.cost: dict | None = None  # the last cost-state's totals
        self.snapshots: list[dict] = []  # what each compaction's (unwritten) call carried
        self.last_call: dict[str, list[int]] = {}  # thread -> [its last billed prompt, tokens added since]
        self.forked = False  # holds calls copied from another session (--fork-session)
        self.fingerprint: list | None = None  # [length, hash] of the first bytes read
        # a call's rows arrive one per content block, each with a usage snapshot: the call is applied to
        # the ledger (its cap decided) once its rows end, from the snapshot kept (largest output, the last
        # of equals); the context its rows add meanwhile waits in `held`, to be added after it
        self.open_call: dict | None = None
        self.held: list[list] = []
        self.unreadable: str | None = None  # why the file could not be read, if it could not
        self.mtime_ns: int | None = None  # the file's modification time when last read (not saved)
        self._lines = lines.LineSplitter(views=LOADS_VIEWS)
        self._labels: dict[str, str] = {}
        self._row_uuid: str | None = None  # the user/assistant row being read: its texts' ledger key
        self.result_rows = KeyMap(multi=True)  # row uuid -> the tool ids of the results it holds
        self.preserved: list[str] = []  # the rows the last compact boundary kept, until its summary

    # --- bytes -> lines: IncrementalLines; a file replaced is read again from its start -------------

    def _start_over(self) -> None:
        fresh = ClaudeTranscript(self.file, self.counter, self.ledger.detail, self.copies.copied)
        fresh.problems = self.problems
        self.__dict__.update(fresh.__dict__)

    # --- lines -> ledger events ---------------------------------------------------------------

    def _line(self, line: bytes | memoryview) -> None:
        try:
            row = loads(line)
        except ValueError:  # rare: the slow path only then (a blank line fails here too, and is skipped)
            row = lines.parse_slowly(line, self.problems)
            if row is lines.SKIP:
                return
        if not isinstance(row, dict):
            self.problems["lines that are not JSON objects skipped"] += 1
            return
        try:
            self._row(row)
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as error:  # a shape no check foresaw: lose the line, never the session
            self.problems[f"lines that could not be read ({error.__class__.__name__}) skipped"] += 1

    def _row(self, row: dict) -> None:
        get = row.get  # one bound method for the dozen lookups of a row
        kind = get("type")
        if not isinstance(kind, str) or kind not in KNOWN_TYPES:
            self.problems["lines of an unknown type skipped"] += 1
            return
        timestamp = get("timestamp")
        if timestamp is not None and self.ledger.seen_time(timestamp) is None:
            self.problems[refused("Claude Code")] += 1  # rare: the text is built only then
        if self.entrypoint is None and isinstance(get("entrypoint"), str):
            self.entrypoint = row["entrypoint"]
        if kind not in _ROW_KINDS:  # progress, snapshots, queue operations...: nothing more to take
            if kind == "cost-state":
                self._cost_state(row)
            return
        uuid = get("uuid")
        if isinstance(uuid, str):
            if not self.seen_rows.put(uuid):
                return  # the same row written twice
        else:
            uuid = None
        # old (1.0.x) files hold their subagents' rows inline, as a separate conversation
        thread = "side" if get("isSidechain") and not self.file.is_sidechain_file else "main"
        if kind == "assistant":
            self._row_uuid = uuid  # the key of the texts it adds
            self._assistant(row, thread)
            return
        if self.open_call is not None:
            self._close_call()  # a call's rows have ended: its cap is decided before anything else happens
        if kind == "user":
            if thread == "side" and get("parentUuid") is None:
                self.ledger.reset_thread("side")  # a new subagent of an old file starts
            self._row_uuid = uuid
            self._user(row, thread)
        elif kind == "attachment":
            self._attachment(row, thread)
        else:
            self._system(row, thread)

    def _assistant(self, row: dict, thread: str) -> None:
        get = row.get
        message = get("message")
        if not isinstance(message, dict) or message.get("model") == "<synthetic>" or get("isApiErrorMessage"):
            return  # generated locally, never billed
        usage = message.get("usage")
        origin = get("requestSessionId")
        if isinstance(origin, str) and origin != get("sessionId"):
            self.forked = True  # a call another session made, copied here with its history
        if usage is not None:
            snapshot = call_usage(usage)
            key = call_key(get("requestId"), message.get("id"), snapshot) or get("uuid")
            if self.copies.is_copy(key, row):
                self._close_call()  # another file bills it; its rows still add context, after this file's call
            elif snapshot is None:
                self.problems["calls with unusable usage (not counted, no cap applied)"] += 1
            else:
                self._call(key, snapshot, message.get("model"), get("timestamp"), thread)
        content = message.get("content")
        if isinstance(content, str):
            self._add("conversation", content, thread)
            return
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                self._add("conversation", block.get("text"), thread)
            elif kind == "tool_use":
                self._tool_use(block, thread)
            elif kind in ("server_tool_use", "web_search_tool_result", "web_fetch_tool_result"):
                self._add("web", json_text(block.get("input") or block.get("content")), thread)
            # thinking is not carried into later calls' context

    def _call(self, key: object, snapshot: list[int], model: object, time: object, thread: str) -> None:
        """A request is written as several rows; it is one call, with the largest output seen (the last
        of equals: the final streamed usage). Its rows in a row are merged before it is applied; a row of
        a call already applied (after other rows came between) only revises its usage."""
        key = key if isinstance(key, str) else None
        call = self.open_call
        if call is not None and key is not None and call["key"] == key and call["thread"] == thread:
            if snapshot[5] >= call["snapshot"][5]:
                call["snapshot"] = snapshot
            return
        previous = self.calls.get(key) if key else None
        if key and previous is not None:
            self._close_call()
            if snapshot[5] >= previous[5] and snapshot != previous:
                self.calls.put(key, snapshot)
                if thread in self.last_call:
                    self.last_call[thread][0] += snapshot[0] - previous[0]
                # a later row of the same request and message: the same model as the call it revises
                self.ledger.revise_call(model if isinstance(model, str) else None,
                                        (previous[0], dict(zip(USAGE_FIELDS, previous[1:], strict=True))),
                                        (snapshot[0], dict(zip(USAGE_FIELDS, snapshot[1:], strict=True))))
            return
        self._close_call()
        self._count_reuse(key)
        self.copies.own(key, time)
        self.open_call = {"key": key, "snapshot": snapshot, "thread": thread,
                          "model": model if isinstance(model, str) else None,
                          "time": time if isinstance(time, str) else None}

    def _count_reuse(self, key: str | None) -> None:
        """A new call whose request id another call had too: a proxy's constant id, said on stderr."""
        if key is not None and not self.requests.put(request_of(key)):
            self.problems[REUSED_ID] += 1

    def _close_call(self) -> None:
        """Apply the open call to the ledger, then the context its rows added."""
        call, held = self.open_call, self.held
        if call is None:
            return
        self.open_call, self.held = None, []
        snapshot, thread = call["snapshot"], call["thread"]
        if call["key"]:
            self.calls.put(call["key"], snapshot)
        self.last_call[thread] = [snapshot[0], 0]
        self.ledger.call(snapshot[0], usage=dict(zip(USAGE_FIELDS, snapshot[1:], strict=True)), thread=thread,
                         model=call["model"], time=call["time"])
        for entry in held:
            self._apply_add(*entry)

    def _tool_use(self, block: dict, thread: str) -> None:
        name = value if isinstance(value := block.get("name"), str) else ""
        tool_input = block.get("input")
        category = classify_tool(name, tool_input)
        tool_id = block.get("id")
        if isinstance(tool_id, str):
            self.tool_categories.put(tool_id, (CATEGORIES.index(category),))
            if self.ledger.detail:
                self._labels[tool_id] = f"{name}: {command_of(name, tool_input) or ''}".rstrip(": ")
        # the arguments (path, pattern, command) count with the call's category
        self._add(category, f"{name} {json_text(tool_input)}", thread)

    def _user(self, row: dict, thread: str) -> None:
        message = row.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if row.get("isCompactSummary"):
            self._snapshot(thread)
            self.ledger.compact(thread, self._kept())
            if thread in self.last_call:  # the next call carries the overhead and what comes from here on
                self.last_call[thread] = [self.ledger.present(thread)[1], 0]
            self._add("conversation", result_text(content), thread)
            return
        base = "injected" if row.get("isMeta") else "conversation"
        if thread == "main" and base == "conversation" and is_prompt(content):
            self.ledger.mark("prompt")  # a turn boundary: a cache rebuild cause (the HTML page, the status line)
        if isinstance(content, str):
            self._text(notification_as_sent(row, content), base, thread)
            return
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                self._text(block.get("text"), base, thread)
            elif block.get("type") == "tool_result":
                self._tool_result(block, thread)
        self._add_media(base, media_blocks(content), thread)  # a pasted image: the prompt's

    def _kept(self) -> KeptKeys:
        """What a compaction keeps: the rows its boundary named and the results those rows hold. Only these
        can be kept again, so the map of results shrinks to them (as small as the context)."""
        self.result_rows = self.result_rows.only(self.preserved)
        tools = self.result_rows.values()  # as text, or digests once the map held too many
        kept = KeptKeys([*self.preserved, *(tool for tool in tools if isinstance(tool, str))],
                        [tool for tool in tools if isinstance(tool, int)])
        self.preserved = []
        return kept

    def _text(self, text: object, base: str, thread: str) -> None:
        if not isinstance(text, str):
            return
        if NEURALMIND_MARKER in text:
            category = "neuralmind"
        elif text.lstrip().startswith(OPEN_REMINDER):
            category = "injected"
        else:
            category = base
        self._add(category, text, thread)

    def _tool_result(self, block: dict, thread: str) -> None:
        tool_id = value if isinstance(value := block.get("tool_use_id"), str) else None
        found = self.tool_categories.get(tool_id) if tool_id is not None else None
        category = CATEGORIES[found[0]] if found is not None else "other"
        if tool_id and self._row_uuid:
            self.result_rows.add(self._row_uuid, tool_id)
        text = result_text(block.get("content"))
        cut = trailing_reminders(text)
        if cut < len(text):
            self._add("injected", text[cut:], thread, tool_id)
            text = text[:cut]
        label = self._labels.get(tool_id) if tool_id else None
        self._add(category, text, thread, tool_id, label)
        # an image or a PDF the tool returned (a Read of one: exploration) is billed by its size
        self._add_media(category, media_blocks(block.get("content")), thread, tool_id, label)

    def _attachment(self, row: dict, thread: str) -> None:
        attachment = row.get("attachment")
        if not isinstance(attachment, dict):
            return
        uuid = value if isinstance(value := row.get("uuid"), str) else None
        mentioned = media_file(attachment)
        if mentioned is not None:  # never its base64 as text: a Read-call reminder, then the picture
            called, block = mentioned
            self._add(REREAD, called, thread, uuid)
            self._add_media("conversation", [block], thread, uuid)
            return
        sent = sent_texts(row)  # as sent; a re-sent file is a Read's call and result (reread.py)
        if sent is not None:
            category, pieces = sent
            for text in pieces:
                neuralmind = category == "injected" and NEURALMIND_MARKER in text
                self._add("neuralmind" if neuralmind else category, text, thread, uuid)
            return
        fields = ("content", "addedBlocks", "addedLines", "planContent", "snippet", "prompt")
        text = "\n".join(part for field in fields for part in texts(attachment.get(field)))
        category = "neuralmind" if NEURALMIND_MARKER in text else "injected"
        self._add(category, text, thread, uuid)

    def _system(self, row: dict, thread: str) -> None:
        if row.get("subtype") == "compact_boundary":
            # 2.1.3xx keeps the running turn's messages across a compaction and re-sends them after the summary
            meta = row.get("compactMetadata")
            kept = meta.get("preservedMessages") if isinstance(meta, dict) else None
            self.preserved = texts(kept.get("uuids")) if isinstance(kept, dict) else []
            return
        if row.get("subtype") != "microcompact_boundary":
            return
        meta = row.get("microcompactMetadata")
        if isinstance(meta, dict):
            ids = texts(meta.get("compactedToolIds")) + texts(meta.get("clearedAttachmentUUIDs"))
            self.ledger.trim(ids, thread)

    def _cost_state(self, row: dict) -> None:
        """Totals so far: they cover every compaction seen before this line."""
        totals = cost_totals(row)
        if totals is not None:
            self.cost = totals
            for snapshot in self.snapshots:
                snapshot["covered"] = True

    def _snapshot(self, thread: str) -> None:
        """What a compaction call carried: everything present just before it, plus the overhead. Its size
        in the provider's tokens: the thread's last bill plus what was added since (else present + overhead)."""
        present, overhead = self.ledger.present(thread)
        last = self.last_call.get(thread)
        size = last[0] + last[1] if last else sum(present.values()) + overhead
        self.snapshots.append({"present": present, "overhead": overhead, "size": size, "covered": False})

    def _add(self, category: str, text: object, thread: str, key: str | None = None, label=None) -> None:
        if isinstance(text, str) and text:
            self._add_tokens(category, self.count(text), thread, key if key is not None else self._row_uuid, label)

    def _add_media(self, category: str, blocks: list[dict], thread: str, key: str | None = None,
                   label=None) -> None:
        for block in blocks:
            tokens, known = media_tokens(block) or (0, True)
            if not known:
                self.problems[f"images whose size could not be read (counted at the cap, {MAX_IMAGE_TOKENS:,} "
                              "tokens)"] += 1
            # the provider's published formula, not a count: it gives way first where a bill has no room
            self._add_tokens(category, tokens, thread, key if key is not None else self._row_uuid, label, True)

    def _add_tokens(self, category: str, tokens: int, thread: str, key: str | None, label,
                    estimated: bool = False) -> None:
        if self.open_call is None:
            self._apply_add(category, tokens, thread, key, label, estimated)
        else:
            self.held.append([category, tokens, thread, key, label, estimated])

    def _apply_add(self, category: str, tokens: int, thread: str, key: str | None, label: str | None,
                   estimated: bool = False) -> None:
        self.ledger.add(category, tokens, key=key, thread=thread, label=label, estimated=estimated)
        if thread in self.last_call:
            self.last_call[thread][1] += tokens

    # --- results and state --------------------------------------------------------------------

    @property
    def source(self) -> str:
        automated = (self.entrypoint or "").startswith(AUTOMATED_ENTRYPOINT_PREFIX)
        return AUTOMATED if automated and self.file.source == INTERACTIVE else self.file.source

    def row(self) -> SessionRow:
        """The file's own row; xshare.agents.claude_code.unrecorded adds the calls Claude Code billed but did not write.
        It closes the open call (the file has ended for now): save `to_state()` before, not after."""
        self._close_call()
        row = session_row(
            self.ledger,
            session_id=self.file.session_id,
            agent=AGENT,
            source=self.source,
            tokenizer=self.tokenizer,
            parent=self.file.parent_id,
        )
        # a fork's totals carry on from its parent's, whose bill is not this file's: not used
        row["cost_state"] = dict(self.cost) if self.cost and not self.forked else None
        row["compaction_snapshots"] = [dict(snapshot) for snapshot in self.snapshots]
        row["unrecorded_calls"] = row["unrecorded_prompt_tokens"] = 0
        return row

    def to_state(self) -> dict:
        return saved.reader_state(self)

    @classmethod
    def from_state(cls, state: dict, file: TranscriptFile, counter: TokenCounter) -> ClaudeTranscript:
        transcript = cls(file, counter)
        saved.restore(transcript, state)
        return transcript
