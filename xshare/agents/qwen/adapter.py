"""Qwen Code as every command sees it (agents/protocol.py): its reader (reader.py) behind the common adapter."""

from __future__ import annotations

from xshare.agents.common.file_agent import FileAgent
from xshare.agents.protocol import Adapter
from xshare.agents.qwen import reader
from xshare.agents.qwen.projects import project_names
from xshare.agents.qwen.recognise import recognises
from xshare.agents.qwen.tools import TOOLS

ADAPTER = FileAgent(reader, recognises, TOOLS, project_names)
_CHECKED: Adapter = ADAPTER  # mypy holds it to the protocol (the registry checks only names)
