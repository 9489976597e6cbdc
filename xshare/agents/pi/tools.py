"""pi's built-in tools by category, so its reader and `classify --jsonl` know which calls explore (judged by
measure/tool_tables.py). pi 1.6.0 offers read, bash, edit and write by default; grep, find and ls when enabled
(`--tools`). Its `grep` runs ripgrep and `find` runs fd: without them the call fails, but it was still a search."""

from __future__ import annotations

from xshare.measure.tool_tables import tool_table

TOOLS = tool_table("pi", exploration="read grep find ls", edit="edit write", shell={"bash": "command"})
