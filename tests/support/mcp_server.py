"""A tiny MCP server over stdio, for the wire check's MCP scenario: one tool, `read_text`, that returns a
file's text. Newline-delimited JSON-RPC 2.0 (the stdio transport): initialize, tools/list, tools/call;
notifications get no reply. Run as `python3 mcp_server.py`; registered with `claude --mcp-config`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

TOOL = {"name": "read_text", "description": "Return the text of a file.",
        "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}


def answer(request: dict) -> dict | None:
    """The reply to one request; None for a notification."""
    method, ident = request.get("method"), request.get("id")
    if ident is None:
        return None
    if method == "initialize":
        version = (request.get("params") or {}).get("protocolVersion") or "2025-06-18"
        result = {"protocolVersion": version, "capabilities": {"tools": {}},
                  "serverInfo": {"name": "xshare-test-files", "version": "1.0.0"}}
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        params = request.get("params") or {}
        path = (params.get("arguments") or {}).get("path", "")
        try:
            result = {"content": [{"type": "text", "text": Path(path).read_text()}], "isError": False}
        except OSError as error:
            result = {"content": [{"type": "text", "text": f"cannot read {path}: {error}"}], "isError": True}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": f"unknown method {method}"}}
    return {"jsonrpc": "2.0", "id": ident, "result": result}


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            reply = answer(json.loads(line))
        except ValueError:
            reply = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}}
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
