"""Issue 9, the files, arguments and output part: what xshare writes, which flags it accepts, what it
prints, and how its HTML modules import each other."""

from __future__ import annotations

import ast
from pathlib import Path

import xshare

PACKAGE = Path(xshare.__file__).parent


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at its top or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def test_the_analysis_stands_below_the_page_that_draws_it():
    analysis = imported_modules(PACKAGE / "html_analysis.py")
    page = imported_modules(PACKAGE / "html_page.py")
    assert "xshare.html_analysis" in page  # the page draws what the analysis found
    assert not {"xshare.html", "xshare.html_page"} & analysis
    assert "xshare.html" not in page  # nor does the page reach up to the module that writes it
