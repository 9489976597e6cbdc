"""Kilo CLI as every command sees it (agents/protocol.py): its reader (reader.py) behind the common adapter."""

from __future__ import annotations

from xshare.agents.common.file_agent import FileAgent
from xshare.agents.kilo import reader
from xshare.agents.kilo.projects import project_names
from xshare.agents.kilo.recognise import recognises
from xshare.agents.kilo.tools import TOOLS
from xshare.agents.protocol import Adapter

ADAPTER = FileAgent(reader, recognises, TOOLS, project_names)
_CHECKED: Adapter = ADAPTER  # mypy holds it to the protocol (the registry checks only names)
