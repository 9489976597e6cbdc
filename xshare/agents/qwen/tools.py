"""Qwen Code's tools by category (its ToolNames in 0.24.4), so its reader and `classify --jsonl` know which calls
explore (judged by measure/tool_tables.py)."""

from __future__ import annotations

from xshare.measure.tool_tables import tool_table

TOOLS = tool_table("qwen", exploration="read_file grep_search glob list_directory",
                   edit="edit write_file notebook_edit", web="web_fetch web_search",
                   shell={"run_shell_command": "command"})
