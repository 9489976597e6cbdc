"""Gemini CLI's tools by category, so its reader and `classify --jsonl` know which calls explore (judged by
measure/tool_tables.py)."""

from __future__ import annotations

from xshare.measure.tool_tables import tool_table

TOOLS = tool_table("gemini", exploration="read_file read_many_files grep_search search_file_content glob "
                                         "list_directory ls grep",
                   edit="replace write_file edit smart_edit", web="google_web_search web_fetch web_search",
                   shell={"run_shell_command": "command"})
