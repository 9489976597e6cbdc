"""The package's layout holds (issue 20): subpackages by feature, no import circle (imports inside functions
count), no private name used across modules, no module over 500 lines, at most a dozen modules at the top;
the hot paths import little; the names users' installs hold (xshare/statusline.py, xshare.hermes_plugin)
still work; every module a `-c` program or the package data names exists."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from xshare.agents.table import AGENTS

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "xshare"
MAX_LINES, MAX_TOP = 500, 12
# what a module of the hot paths may import at its start: the state folder's guards and the agents' table
# (agents/table.py), never the readers, the tokenizer, the report or the HTML (the status line runs after
# every message, the hook after every tool)
# (and Claude Code's live state's file names: agents/claude_code/live_state.py, which loads no reader)
LIGHT = ("xshare.agents.table", "xshare.agents.claude_code", "xshare.agents.claude_code.live_state")
HEAVY = ("xshare.agents.", "xshare.measure", "xshare.sessions", "xshare.report", "xshare.html", "xshare.demo",
         "xshare.export", "tiktoken", "orjson", "opentelemetry", "google.protobuf")


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports_of(name: str, path: Path, known: dict[str, Path]) -> list[tuple[str, str | None]]:
    """(module, imported name or None) for every import of the package's own modules, in functions too."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, None) for alias in node.names if alias.name in known]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([node.module] if node.module else []))
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.append((full, None) if full in known else (base, alias.name))
    return [(module, what) for module, what in found if module in known and module != name]


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_circle_counting_imports_inside_functions():
    known = modules()
    graph = {name: {module for module, _ in imports_of(name, path, known)} for name, path in known.items()}
    assert circles(graph) == []
    graph["xshare.measure.ledger"].add("xshare.report.render")  # the check itself finds one
    assert circles(graph)


def test_no_private_name_used_across_modules():
    known = modules()
    used = []
    for name, path in known.items():
        for module, what in imports_of(name, path, known):
            if what and what.startswith("_") and not what.startswith("__"):
                used.append(f"{name} imports {module}.{what}")
        aliases = {}
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                aliases |= {alias.asname or alias.name: f"{node.module}.{alias.name}" for alias in node.names
                            if f"{node.module}.{alias.name}" in known}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
                    and node.attr.startswith("_") and not node.attr.startswith("__")):
                used.append(f"{name} uses {aliases[node.value.id]}.{node.attr}")
    assert used == []


def test_no_module_over_500_lines_and_a_dozen_at_the_top():
    long = {name: n for name, path in modules().items() if (n := len(path.read_text().splitlines())) > MAX_LINES}
    assert long == {}
    top = sorted(path.name for path in PACKAGE.glob("*.py") if path.name != "__init__.py")
    assert len(top) <= MAX_TOP, top


def test_subpackage_inits_import_nothing():
    """The hook and the status line import xshare.live, xshare.state, xshare.install: their __init__ must
    cost nothing (xshare.demo's may re-export: only tests and --demo import it)."""
    for init in PACKAGE.rglob("__init__.py"):
        if init.parent.name in ("demo",):
            continue
        body = ast.parse(init.read_text()).body
        assert all(isinstance(node, (ast.Expr, ast.Assign)) for node in body), init


@pytest.mark.parametrize("module", ["xshare.live.status_render", "xshare.live.hook", "xshare.install.plugin_python",
                                    "xshare.cli"])
def test_the_hot_paths_import_little(module):
    code = f"import sys; sys.path.insert(0, {str(REPO)!r}); import {module}; print('\\n'.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    loaded = done.stdout.split()
    assert [name for name in loaded if name.startswith(HEAVY) and name not in LIGHT] == []


@pytest.mark.parametrize("module", ["xshare.live.status_render", "xshare.live.hook"])
def test_the_status_line_and_the_hook_do_not_load_typing_or_traceback(module):
    """typing costs a few milliseconds of every refresh and of every idle hook call: both name their types
    for the checker only; traceback (2 ms) waits for a problem to log."""
    code = (f"import sys; sys.path.insert(0, {str(REPO)!r}); import {module}; "
            "print('typing' in sys.modules, 'traceback' in sys.modules)")
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.split() == ["False", "False"], done


def test_the_fields_alone_for_another_status_line_import_little(tmp_path: Path):
    """`statusline.py --fields` (what a ccstatusline or claude-powerline widget runs) renders, after every
    message, on the status line's own path: nothing heavy loaded while it reads a summary and prints."""
    from xshare.state.paths import line_file

    summary = {"api_calls": 3, "exploration_share_of_context": 0.2, "last": {"prompt": 900, "usage": {}},
               "last_context": {"exploration": 300, "overhead": 600}}
    line_file("f1e1d5").parent.mkdir(parents=True, exist_ok=True)
    line_file("f1e1d5").write_text(json.dumps(summary))
    code = (f"import sys; sys.path.insert(0, {str(REPO)!r}); from xshare.live.status_render import main; "
            "main(['--fields', 'context,fill,calls', '--no-catch-up']); "
            "print('\\n'.join(sorted(sys.modules)), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], input='{"session_id": "f1e1d5"}',
                          capture_output=True, text=True, timeout=60, env={**os.environ})
    assert done.returncode == 0 and done.stdout.startswith("explore ≈20.0% of context · context now 900"), done
    assert [name for name in done.stderr.split() if name.startswith(HEAVY)] == []


def test_every_program_string_names_a_module_and_function_that_exist():
    """The worker, the status line's catch-up and the plugin env's builders start `python -c` programs that
    import a module by name: a move must not leave one naming a module that is gone."""
    named = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and path.parent.name != "demo":
                named |= set(re.findall(r"from (xshare[\w.]*) import (\w+)", node.value))
    assert len(named) >= 4  # the worker, the catch-up, plugin_env_build, plugin_uv
    for module, name in sorted(named):
        code = f"import {module} as m; assert callable(m.{name})"
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
        assert done.returncode == 0, (module, name, done.stderr)


def test_package_data_and_the_files_old_pythons_start_exist():
    from xshare.install import plugin_python

    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    for name in pyproject["tool"]["setuptools"]["package-data"]["xshare"]:
        assert (PACKAGE / name).is_file(), name
    for name in (*plugin_python.STARTS_ON_OLD, *plugin_python.BUILDS_ON_OLD):
        assert (REPO / name).is_file(), name
    assert pyproject["project"]["entry-points"]["hermes_agent.plugins"]["xshare"] == "xshare.hermes_plugin"


def test_the_hermes_entry_point_name_loads_the_plugin(capsys: pytest.CaptureFixture):
    """Hermes calls xshare.hermes_plugin.register(ctx): the plugin's, given the CLI for `hermes xshare`."""
    from xshare import hermes_plugin
    from xshare.live import hermes_plugin as plugin

    assert hermes_plugin.plugin is plugin
    assert hermes_plugin.run_cli(["classify", "rg foo src"]) == 0
    assert capsys.readouterr().out.startswith("exploration\t")


def test_the_status_line_path_in_users_settings_still_runs(tmp_path: Path):
    """`statusline install` wrote `python3 -I -S <package>/xshare/statusline.py` into settings.json: that file
    must still render, from any folder, with Claude Code's payload on stdin."""
    import xshare
    from xshare.install import statusline_setup

    script = statusline_setup.script_path()  # the installed package's (site-packages on a fresh machine)
    assert script == Path(xshare.__file__).resolve().parent / "statusline.py"
    assert str(script) in statusline_setup.command()
    transcript = tmp_path / "projects" / "-home-dev-app" / "6f1d1a52-3c1e-4d0e-9a55-2f1c8d7e0b11.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text("")
    payload = {"session_id": transcript.stem, "transcript_path": str(transcript), "cwd": "/home/dev/app",
               "model": {"id": "claude-sonnet-4-5", "display_name": "Sonnet 4.5"}, "hook_event_name": "Status"}
    done = subprocess.run([sys.executable, "-I", "-S", str(script), "--no-color", "--no-catch-up"],
                          input=json.dumps(payload), capture_output=True, text=True, timeout=60, cwd=tmp_path,
                          env={**os.environ, "XSHARE_HOME": str(tmp_path / "state")})
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.strip() and "unavailable" not in done.stdout


# The layers, top to bottom (ARCHITECTURE.md, "The layers"): a module imports its own layer and those below.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("entry points", ("xshare.cli", "xshare.statusline", "xshare.hermes_plugin", "xshare.__main__")),
    # html/command.py is a command living in html/ (issue 32 moves it to commands/html.py)
    ("commands", ("xshare.commands", "xshare.arguments", "xshare.html.command")),
    ("live", ("xshare.live",)),
    ("output", ("xshare.report", "xshare.html", "xshare.export")),
    ("collection", ("xshare.sessions",)),
    ("an agent", tuple(line.adapter.rpartition(".")[0] for line in AGENTS)),  # agents/<name>/
    ("the agents' shared parts", ("xshare.agents",)),  # agents/common/, agents/protocol.py, agents/table.py
    ("the method", ("xshare.measure",)),
    ("set-up and sample data", ("xshare.install", "xshare.demo")),  # they import the foundation alone
    ("foundation", ("xshare.state", "xshare.printing", "xshare")),
)
# imports up the layers the code still makes, each with why (none today)
UPWARD_ALLOWED: dict[tuple[str, str], str] = {}


def layer_of(module: str) -> tuple[int, str]:
    """(depth, layer) of a module: its longest matching prefix's layer; 0 is the top."""
    depth, prefix = max(((depth, prefix) for depth, (_, prefixes) in enumerate(LAYERS) for prefix in prefixes
                         if module == prefix or module.startswith(prefix + ".")), key=lambda found: len(found[1]))
    return depth, LAYERS[depth][0]


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every import of a module in a layer above the importer's, or of another agent's folder."""
    found = []
    for name, imported in sorted(graph.items()):
        depth, label = layer_of(name)
        for module in sorted(imported):
            above = layer_of(module)[0] < depth
            other_agent = label == layer_of(module)[1] == "an agent" and module.split(".")[2] != name.split(".")[2]
            if (above or other_agent) and (name, module) not in UPWARD_ALLOWED:
                found.append(f"{name} ({label}) imports {module} ({layer_of(module)[1]})")
    return found


def test_no_import_goes_up_the_layers_counting_imports_inside_functions():
    known = modules()
    assert all(layer_of(name) for name in known)  # every module has a layer
    graph = {name: {module for module, _ in imports_of(name, path, known)} for name, path in known.items()}
    assert upward_imports(graph) == []
    graph["xshare.measure.classify"].add("xshare.sessions.registry")  # the check itself finds one
    graph["xshare.agents.codex.reader"].add("xshare.agents.gemini.reader")  # and one agent reaching into another
    assert upward_imports(graph) == [
        "xshare.agents.codex.reader (an agent) imports xshare.agents.gemini.reader (an agent)",
        "xshare.measure.classify (the method) imports xshare.sessions.registry (collection)"]


# Where code outside agents/ may name an agent, and why: these parts are about one agent by what they are.
NAMING_ALLOWED = {
    "xshare.demo": "it writes Claude Code transcripts (the demo's invented sessions)",
    "xshare.live": "the two hosts' plugins: Claude Code's hook and status line, the Hermes plugin",
    "xshare.install": "it sets up Claude Code's plugin and status line",
    "xshare.state.private": "'hermes' there is a folder of xshare's own state (the Hermes plugin's), not an agent",
}


def agent_literals(source: str, words: set[str]) -> list[str]:
    """The string literals of code (not docstrings) that are an agent's id or name, or start with an id and a
    slash (a group's key, "claude-code/interactive"): what a check of which agent it is looks like."""
    tree = ast.parse(source)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
            and any(node.value == word or node.value.startswith(word + "/") for word in words)]


def test_no_agent_is_named_outside_its_folder():
    """Nothing outside agents/ asks which agent it is dealing with: no agent's id or name from the table as a
    literal (its docstrings and comments may speak of it)."""
    words = {line.agent for line in AGENTS} | {line.name for line in AGENTS}
    named = {(name, literal) for name, path in modules().items()
             if not name.startswith("xshare.agents.") and not name.startswith(tuple(NAMING_ALLOWED))
             for literal in agent_literals(path.read_text(encoding="utf-8"), words)}
    assert sorted(named) == []
    check = 'def note(agent):\n    """Hermes\'s, or Claude Code\'s."""\n    return "x" if agent == "hermes" else "y"\n'
    assert agent_literals(check, words) == ["hermes"]  # the check finds a branch, not the docstring
