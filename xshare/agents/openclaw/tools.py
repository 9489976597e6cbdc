"""OpenClaw's tools by category, so its reader and `classify --jsonl` know which calls explore (judged by
measure/tool_tables.py). 2026.9 calls most tools through `tool_call` (Tool Search), judged as the tool it
calls; `process` drives a running command."""

from __future__ import annotations

from xshare.measure.tool_tables import tool_table

TOOLS = tool_table("openclaw", exploration="read grep find ls dir_list dir_fetch file_fetch",
                   edit="write edit apply_patch file_write", web="web_fetch web_search browser",
                   shell={"exec": "command", "bash": "command", "process": ""}, wrapper="tool_call")
