"""Codex CLI's tools by category, so its reader and `classify --jsonl` know which calls explore (judged by
measure/tool_tables.py). Its shell tools name their command's argument; `write_stdin` drives a running one."""

from __future__ import annotations

from xshare.measure.tool_tables import tool_table

TOOLS = tool_table("codex", edit="apply_patch", web="web_search web_fetch",
                   shell={"shell": "command", "shell_command": "command", "exec_command": "cmd",
                          "local_shell": "command", "container.exec": "command", "write_stdin": ""})
