"""Codex CLI as every command sees it (agents/protocol.py): its reader (reader.py) behind the common adapter."""

from __future__ import annotations

from xshare.agents.codex import reader
from xshare.agents.common import recognise
from xshare.agents.common.file_agent import FileAgent
from xshare.agents.protocol import Adapter

ADAPTER = FileAgent(reader, recognise.codex)
_CHECKED: Adapter = ADAPTER  # mypy holds it to the protocol (the registry checks only names)
