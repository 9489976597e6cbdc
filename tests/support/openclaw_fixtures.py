"""OpenClaw 2026.9's SQLite store, written as OpenClaw writes it: one transcript entry per row of
`transcript_events`, a row of 1 KiB or more zstd-compressed (level 1, checksum) when that shrinks it by a
tenth, with its size in `event_utf8_bytes`; `session_windows` naming each session's key; cold archives
in `session_transcript_cold_archives`. The compressor is this machine's libzstd (or Python 3.14's
compression.zstd); without one, `compress` returns None and the tests that need it skip.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import importlib
import json
import sqlite3
from pathlib import Path

SCHEMA = """
CREATE TABLE session_windows (session_id TEXT NOT NULL PRIMARY KEY, session_key TEXT NOT NULL,
  previous_session_id TEXT, reason TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
  model_provider TEXT, model TEXT);
CREATE TABLE transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT,
  created_at INTEGER NOT NULL, event_zstd BLOB, event_utf8_bytes INTEGER, navigation_json TEXT,
  PRIMARY KEY (session_id, seq));
CREATE TABLE session_transcript_cold_archives (session_id TEXT NOT NULL PRIMARY KEY, generation TEXT NOT NULL,
  archive_name TEXT NOT NULL UNIQUE, archive_sha256 TEXT NOT NULL, event_count INTEGER NOT NULL,
  raw_bytes INTEGER NOT NULL, archive_bytes INTEGER NOT NULL, last_seq INTEGER NOT NULL,
  archived_at INTEGER NOT NULL, storage TEXT NOT NULL, archive_blob BLOB);
CREATE TABLE auth_profile_store (store_key TEXT NOT NULL PRIMARY KEY, store_json TEXT NOT NULL,
  updated_at INTEGER NOT NULL);
"""
MIN_COMPRESS_BYTES = 1024  # transcript-payload.ts


def compress(data: bytes) -> bytes | None:
    """One zstd frame with its content size, or None when this machine has no zstd compressor."""
    try:
        return importlib.import_module("compression.zstd").compress(data)
    except ImportError:
        pass
    name = ctypes.util.find_library("zstd")
    if not name:
        return None
    library = ctypes.CDLL(name)
    library.ZSTD_compress.restype = ctypes.c_size_t
    library.ZSTD_compress.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    library.ZSTD_compressBound.restype = ctypes.c_size_t
    library.ZSTD_compressBound.argtypes = (ctypes.c_size_t,)
    library.ZSTD_isError.restype = ctypes.c_uint
    library.ZSTD_isError.argtypes = (ctypes.c_size_t,)
    bound = library.ZSTD_compressBound(len(data))
    out = ctypes.create_string_buffer(bound)
    written = library.ZSTD_compress(out, bound, data, len(data), 1)
    return None if library.ZSTD_isError(written) else out.raw[:written]


def jsonl_entries(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def as_version_4(entries: list[dict]) -> list[dict]:
    """The same entries under 2026.9's session header (version 4)."""
    return [{**entry, "version": 4} if entry.get("type") == "session" else entry for entry in entries]


def openclaw_database(home: Path, sessions: dict[str, tuple[str, list[dict]]], squeeze: bool = True,
                      agent: str = "main") -> tuple[Path, int]:
    """agents/<agent>/agent/openclaw-agent.sqlite with these sessions ({id: (session key, entries)});
    returns its path and how many rows were compressed."""
    path = home / "agents" / agent / "agent" / "openclaw-agent.sqlite"
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path)
    connection.executescript(SCHEMA)
    connection.execute("INSERT INTO auth_profile_store VALUES ('main', '{\"token\": \"invented-not-a-secret\"}', 0)")
    packed = 0
    for number, (session_id, (key, entries)) in enumerate(sessions.items()):
        connection.execute("INSERT INTO session_windows VALUES (?, ?, NULL, NULL, ?, ?, 'example', 'claw-model-1')",
                           (session_id, key, 1775044800000 + number, 1775044900000 + number))
        for seq, entry in enumerate(entries):
            text = json.dumps(entry, separators=(",", ":"))
            raw = text.encode()
            small = compress(raw) if squeeze and len(raw) >= MIN_COMPRESS_BYTES and entry.get("type") != "session" \
                else None
            if small is not None and len(small) <= len(raw) - max(64, -(-len(raw) // 10)):
                packed += 1
                connection.execute("INSERT INTO transcript_events VALUES (?, ?, NULL, ?, ?, ?, ?)",
                                   (session_id, seq, 0, small, len(raw), '{"version":1}'))
            else:
                connection.execute("INSERT INTO transcript_events VALUES (?, ?, ?, ?, NULL, ?, NULL)",
                                   (session_id, seq, text, 0, len(raw)))
    connection.commit()
    connection.close()
    return path, packed


def add_cold_archive(path: Path, session_id: str, key: str, entries: list[dict], in_file: bool = False) -> bool:
    """Moves a session to cold storage as OpenClaw's cold-storage worker does (rows out, an archive in);
    False when this machine cannot compress."""
    lines = [json.dumps({"kind": "header", "version": 1, "sessionId": session_id, "generation": "g1"})]
    lines += [json.dumps({"kind": "event", "row": {"seq": seq, "event_json": json.dumps(entry), "created_at": 0}})
              for seq, entry in enumerate(entries)]
    raw = ("\n".join(lines) + "\n").encode()
    blob = compress(raw)
    if blob is None:
        return False
    name = hashlib.sha256(blob).hexdigest() + ".jsonl.zst"
    if in_file:
        cold = path.parent.parent / "sessions" / "cold"
        cold.mkdir(parents=True, exist_ok=True)
        (cold / name).write_bytes(blob)
    connection = sqlite3.connect(path)
    connection.execute("INSERT INTO session_windows VALUES (?, ?, NULL, NULL, 1775044800000, 1775044900000, "
                       "'example', 'claw-model-1')", (session_id, key))
    connection.execute("INSERT INTO session_transcript_cold_archives VALUES (?, 'g1', ?, ?, ?, ?, ?, ?, 0, ?, ?)",
                       (session_id, name, hashlib.sha256(blob).hexdigest(), len(entries), len(raw), len(blob),
                        len(entries) - 1, "file" if in_file else "sqlite", None if in_file else blob))
    connection.commit()
    connection.close()
    return True
