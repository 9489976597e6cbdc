"""OpenCode's tools by category, so its reader and `classify --jsonl` know which calls explore (judged by
measure/tool_tables.py)."""

from __future__ import annotations

from xshare.measure.tool_tables import tool_table

TOOLS = tool_table("opencode", exploration="read grep glob list ls codesearch lsp",
                   edit="write edit patch multiedit apply_patch", web="webfetch websearch web_fetch web_search",
                   shell={"bash": "command"})
