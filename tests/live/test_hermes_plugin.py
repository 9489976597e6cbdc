"""The Hermes plugin through Hermes's own plugin loader (hermes_cli.plugins) and its own CLI.

These need hermes-agent importable, so they run in a virtual environment holding hermes-agent and xshare
(.ci/hermes.sh makes one) and skip everywhere else."""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hermes_fixtures import HermesDb, call, read_result

plugins = pytest.importorskip("hermes_cli.plugins", reason="hermes-agent is not installed here")

from xshare.agents.hermes.state_db import measure_hermes  # noqa: E402
from xshare.live import hermes_plugin  # noqa: E402

SESSION = "20260301_100000_abcdef"


@pytest.fixture
def hermes_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "hermes-home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    monkeypatch.setenv("HERMES_SESSION_ID", SESSION)
    for name in ("HERMES_SAFE_MODE", "HERMES_ENABLE_PROJECT_PLUGINS"):
        monkeypatch.delenv(name, raising=False)
    db = HermesDb(home / "state.db", 22)
    db.session(SESSION, "cli", tokens=(3000, 6000, 1000, 50), api_calls=2)
    db.message(SESSION, "user", "where is the config read?")
    db.message(SESSION, "assistant", None, tool_calls=[call("read_file", {"path": "config.py"}, "c1")])
    db.message(SESSION, "tool", read_result("1|import os\n2|CONFIG = os.environ['X']"), tool_call_id="c1")
    db.message(SESSION, "assistant", "config.py line 2 reads it.")
    db.close()
    return home


def configure(home: Path, enabled: list[str] | None, disabled: list[str] | None = None) -> None:
    lines = []
    if enabled is not None or disabled is not None:
        lines.append("plugins:")
        lines.append(f"  enabled: [{', '.join(enabled or [])}]")
        lines.append(f"  disabled: [{', '.join(disabled or [])}]")
    (home / "config.yaml").write_text("\n".join(lines) + "\n")


def loaded_manager():
    """A fresh pass of Hermes's own discovery over the current config."""
    plugins.discover_plugins(force=True)
    return plugins.get_plugin_manager()


def test_entry_point_names_the_module() -> None:
    found = {ep.name: ep.value for ep in importlib.metadata.entry_points(group="hermes_agent.plugins")}
    assert found.get("xshare") == "xshare.hermes_plugin", "pyproject.toml lacks the hermes_agent.plugins entry point"


def test_registered_when_enabled(hermes_home: Path) -> None:
    configure(hermes_home, enabled=["xshare"])
    manager = loaded_manager()
    loaded = manager._plugins["xshare"]
    assert loaded.enabled and loaded.error is None
    assert loaded.manifest.source == "entrypoint"
    assert "xshare" in manager._plugin_commands
    assert "xshare" in manager._cli_commands
    assert {"post_api_request", "on_session_end"} <= set(loaded.hooks_registered)


@pytest.mark.parametrize("enabled, disabled", [(None, None), ([], None), (["xshare"], ["xshare"])])
def test_not_registered_unless_enabled(hermes_home: Path, enabled, disabled) -> None:
    configure(hermes_home, enabled=enabled, disabled=disabled)
    manager = loaded_manager()
    loaded = manager._plugins.get("xshare")
    assert loaded is not None and not loaded.enabled  # discovered, not loaded
    assert "xshare" not in manager._plugin_commands
    assert "xshare" not in manager._cli_commands
    assert all(getattr(callback, "__module__", "") != "xshare.live.hermes_plugin"
               for callbacks in manager._hooks.values() for callback in callbacks)


def test_slash_command_answers_with_the_report_row(hermes_home: Path) -> None:
    configure(hermes_home, enabled=["xshare"])
    loaded_manager()
    # the agent loop's hooks, as Hermes invokes them
    for _ in range(2):
        plugins.invoke_hook("post_api_request", session_id=SESSION, task_id="t1", telemetry_schema_version=1,
                            usage={"input_tokens": 1500, "cache_read_tokens": 3000, "cache_write_tokens": 500,
                                   "prompt_tokens": 5000})
    plugins.invoke_hook("on_session_end", session_id=SESSION, task_id="t1", completed=True)
    handler = plugins.get_plugin_command_handler("xshare")
    text = plugins.resolve_plugin_command_result(handler(""))
    rows, _ = measure_hermes([hermes_home / "state.db"], hermes_plugin._counter)
    row = next(row for row in rows if row["id"] == SESSION)
    assert f"Exploration: {row['exploration_share_of_context']:.1%} of the recorded context" in text
    assert f"{row['exploration_share_of_prompt']:.1%} of the billed prompt" in text
    assert f"API calls: {row['api_calls']:,}" in text and "prompt tokens billed: 10,000" in text
    assert "Seen live by the plugin: 2 main-loop calls, 10,000 prompt tokens" in text
    saved = hermes_plugin.live_dir() / f"{SESSION}.json"
    assert saved.is_file()


def test_slash_command_before_the_first_message_asks_the_classic_cli(hermes_home: Path, monkeypatch) -> None:
    """The classic CLI sets HERMES_SESSION_ID only when its agent starts, but registers itself with the
    plugin manager (cli.py: `get_plugin_manager()._cli_ref = self`) holding the id it shows from the start."""
    import types

    configure(hermes_home, enabled=["xshare"])
    manager = loaded_manager()
    monkeypatch.delenv("HERMES_SESSION_ID")
    monkeypatch.setattr(hermes_plugin, "_last_session", [None])
    monkeypatch.setattr(manager, "_cli_ref", None)
    handler = plugins.get_plugin_command_handler("xshare")
    assert plugins.resolve_plugin_command_result(handler("")) == "xshare: no session is active yet."
    monkeypatch.setattr(manager, "_cli_ref", types.SimpleNamespace(session_id="20260301_120000_0f0f0f"))
    text = plugins.resolve_plugin_command_result(handler(""))
    assert text == "xshare: nothing recorded in state.db yet for session 20260301_120000_0f0f0f."
    monkeypatch.setattr(manager, "_cli_ref", types.SimpleNamespace(session_id=SESSION))
    assert plugins.resolve_plugin_command_result(handler("")).startswith(f"xshare: session {SESSION} (interactive)")


def _hermes(*arguments: str, home: Path) -> subprocess.CompletedProcess:
    executable = Path(sys.executable).parent / "hermes"
    if not executable.exists():
        executable = shutil.which("hermes")
    if not executable:
        pytest.skip("no hermes executable beside this interpreter")
    env = {**os.environ, "HERMES_HOME": str(home)}
    return subprocess.run([str(executable), *arguments], capture_output=True, text=True, env=env, timeout=300,
                          stdin=subprocess.DEVNULL)


def _toggle(action: str, home: Path) -> None:
    """`hermes plugins enable|disable xshare`; releases before 0.19 only toggle directory plugins from the
    CLI ("not installed or bundled"), so there the config list is edited as their docs say."""
    extra = ["--no-allow-tool-override"] if action == "enable" else []
    done = _hermes("plugins", action, "xshare", *extra, home=home)
    if "unrecognized arguments" in done.stderr:  # before 0.19 enable asks nothing about tool overrides
        done = _hermes("plugins", action, "xshare", home=home)
    if "not installed or bundled" in done.stdout + done.stderr:
        configure(home, enabled=["xshare"] if action == "enable" else [], disabled=[] if action == "enable"
                  else ["xshare"])
        return
    assert done.returncode == 0, done.stderr + done.stdout
    assert "xshare" in (home / "config.yaml").read_text()


def test_hermes_plugins_enable_disable_and_subcommand(hermes_home: Path) -> None:
    configure(hermes_home, enabled=None)
    _toggle("enable", hermes_home)
    done = _hermes("xshare", "classify", "git log --oneline", home=hermes_home)
    assert done.returncode == 0, done.stderr + done.stdout
    assert done.stdout.startswith("exploration\t")
    _toggle("disable", hermes_home)
    done = _hermes("xshare", "classify", "ls", home=hermes_home)
    assert done.returncode != 0 or not done.stdout.startswith("exploration")  # the subcommand is gone


def test_hermes_xshare_report_reads_this_hermes_home(hermes_home: Path) -> None:
    configure(hermes_home, enabled=["xshare"])
    done = _hermes("xshare", "report", "--all", "--json", home=hermes_home)
    if '"Hermes"' not in done.stdout and "Hermes" not in done.stderr:
        pytest.skip("this xshare report does not read Hermes databases yet (sessions.py/cli.py not wired)")
    assert done.returncode == 0, done.stderr
    assert '"hermes/interactive"' in done.stdout
