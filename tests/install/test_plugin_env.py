"""The plugin's own env: a real venv with tiktoken and orjson built under a temporary ${CLAUDE_PLUGIN_DATA},
the switch bin/xshare makes to it, a rebuild on a new plugin version, and the offline failure path.

Building needs pip to reach an index (PyPI, or the machine's configured one); it is built once per test
session. XSHARE_TEST_OFFLINE=1 skips the tests that build, and they skip by themselves when pip reports
that it could not find the packages."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from xshare.install import plugin_env
from xshare.install.plugin_env_build import build, start_build
from xshare.state.store import locked

REPO = Path(__file__).resolve().parents[2]
BIN = REPO / "bin" / "xshare"
OFFLINE_SIGNS = ("No matching distribution", "Could not find a version", "connection", "Network is unreachable",
                 "Temporary failure in name resolution")


def fake_plugin(folder: Path, version: str, requirements: str | None = None) -> Path:
    """A plugin root as far as the env cares: its manifest and its pinned requirements."""
    (folder / ".claude-plugin").mkdir(parents=True)
    (folder / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "xshare", "version": version}))
    (folder / plugin_env.REQUIREMENTS).write_text(requirements if requirements is not None else
                                                  (REPO / plugin_env.REQUIREMENTS).read_text())
    return folder


def hook_log_lines(xshare_home: Path) -> list[str]:
    log = xshare_home / "logs" / "hook.log"
    return log.read_text().splitlines() if log.exists() else []


def run_bin(args: list[str], home: Path, stdin: str = "", **extra: str) -> subprocess.CompletedProcess:
    """bin/xshare the way a hook starts it, but with no site-packages at all (like a bare system python3)."""
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", ""), "XSHARE_HOME": str(home / "xshare"),
           "LANG": "C.UTF-8", "XSHARE_WORKER": "0", "XSHARE_NO_BACKGROUND": "1", **extra}  # nothing outlives a test
    return subprocess.run([sys.executable, "-I", "-S", str(BIN), *args], input=stdin, capture_output=True,
                          text=True, env=env, timeout=300)


@pytest.fixture(scope="session")
def built_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ${CLAUDE_PLUGIN_DATA} holding a complete env for this checkout, built once with real pip."""
    if os.environ.get("XSHARE_TEST_OFFLINE") == "1":
        pytest.skip("XSHARE_TEST_OFFLINE=1: building the plugin env needs a package index")
    data = tmp_path_factory.mktemp("plugin-data")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XSHARE_HOME", str(data.parent / "build-xshare-home"))
        ready = build(str(REPO), str(data))
    if not ready:
        reason = (plugin_env.last_failure(str(data)) or {}).get("reason", "")
        if any(sign.lower() in reason.lower() for sign in OFFLINE_SIGNS):
            pytest.skip(f"pip cannot reach a package index here: {reason}")
        pytest.fail(f"the plugin env did not build: {reason}")
    return data


# --- where it lives and what it must hold (no build) -----------------------------------------------------

def test_data_dir_comes_from_claude_code_or_from_the_cache_layout(tmp_path: Path, monkeypatch):
    cached = tmp_path / ".claude" / "plugins" / "cache" / "my.market" / "xshare" / "0.1.0"
    cached.mkdir(parents=True)
    assert plugin_env.data_dir(str(cached)) == str(tmp_path / ".claude" / "plugins" / "data" / "xshare-my-market")
    assert plugin_env.data_dir(str(tmp_path)) is None  # a checkout: no env, plain python3
    assert plugin_env.ready_python(str(tmp_path)) is None and plugin_env.interpreter(str(tmp_path)) == sys.executable
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(tmp_path / "given"))
    assert plugin_env.data_dir(str(cached)) == str(tmp_path / "given")


@pytest.mark.skipif(os.name == "nt", reason="a POSIX venv layout with a symlinked interpreter")
def test_ready_only_with_a_stamp_and_an_interpreter_that_still_runs(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(tmp_path))
    (tmp_path / "venv" / "bin").mkdir(parents=True)
    python = tmp_path / "venv" / "bin" / "python"
    python.symlink_to(sys.executable)
    assert plugin_env.ready_python() is None  # half built: no stamp yet
    (tmp_path / "venv" / plugin_env.STAMP).write_text("{}")
    assert plugin_env.ready_python() == str(python) == plugin_env.interpreter()
    python.unlink()
    python.symlink_to(tmp_path / "python3.99")  # the base Python it was made from is gone (an upgrade)
    assert plugin_env.ready_python() is None and plugin_env.interpreter() == sys.executable


def test_wanted_reads_the_plugin_version_and_requirements(tmp_path: Path, monkeypatch):
    want = plugin_env.wanted(str(fake_plugin(tmp_path / "a", "2.0.0")))
    assert want["version"] == "2.0.0" and want["python"] == "{}.{}".format(*sys.version_info[:2])
    assert [item.split("==")[0] for item in want["requirements"]] == ["tiktoken", "regex", "orjson", "fastokens"]
    # a new hash for the same versions is a new env too
    text = (REPO / plugin_env.REQUIREMENTS).read_text()
    changed = fake_plugin(tmp_path / "b", "2.0.0", text.replace("--hash=sha256:", "--hash=sha256:0", 1)[:-1] + "\n")
    assert plugin_env.wanted(str(changed))["lock"] != want["lock"]
    assert plugin_env.wanted(str(changed))["requirements"] == want["requirements"]


@pytest.mark.parametrize("requirements", ["", "# only a comment\n", "tiktoken\norjson\n", "not a requirement [[["])
def test_no_env_is_wanted_from_a_plugin_without_requirements(tmp_path: Path, requirements: str):
    root = fake_plugin(tmp_path / "p", "1.0.0", requirements)
    assert plugin_env.wanted(str(root)) is None
    assert start_build(str(root)) is False


def test_a_plugin_without_a_manifest_wants_nothing(tmp_path: Path):
    (tmp_path / plugin_env.REQUIREMENTS).write_text((REPO / plugin_env.REQUIREMENTS).read_text())
    assert plugin_env.wanted(str(tmp_path)) is None


# --- the offline path (pip cannot reach anything; no network needed) --------------------------------------

def test_a_failed_build_logs_one_line_waits_a_day_and_xshare_still_runs(tmp_path: Path, monkeypatch,
                                                                         isolated_home: Path):
    xshare_home = Path(os.environ["XSHARE_HOME"])
    empty = tmp_path / "no-wheels"
    empty.mkdir()
    for name, value in {"PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(empty),
                        "PIP_INDEX_URL": "http://127.0.0.1:9/"}.items():
        monkeypatch.setenv(name, value)
    root = fake_plugin(tmp_path / "plugin", "0.1.0")
    data = tmp_path / "data"
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(data))

    assert build(str(root), str(data)) is False
    (line,) = hook_log_lines(xshare_home)
    assert "plugin env not built" in line and "pip could not install tiktoken" in line
    failure = plugin_env.last_failure(str(data))
    assert failure["want"] == plugin_env.wanted(str(root)) and "No matching distribution" in failure["reason"]
    assert sorted(path.name for path in data.iterdir()) == ["venv-build.log", "venv-failed.json", "venv.lock"]
    assert plugin_env.ready_python(str(root)) is None

    # the next sessions of the day neither build nor log again
    assert start_build(str(root)) is False and build(str(root), str(data)) is False
    assert len(hook_log_lines(xshare_home)) == 1
    # a day later, or with a new plugin version, it tries again
    failure["time"] -= plugin_env.RETRY_AFTER + 60
    (data / plugin_env.FAILED).write_text(json.dumps(failure))
    assert not plugin_env.failed_recently(str(data), plugin_env.wanted(str(root)))
    newer = plugin_env.wanted(str(fake_plugin(tmp_path / "newer", "0.2.0")))
    assert not plugin_env.failed_recently(str(data), newer)

    done = run_bin(["report", "--demo"], isolated_home, CLAUDE_PLUGIN_DATA=str(data))
    assert done.returncode == 0 and "Tokenizer: chars/4 (tiktoken is not installed)" in done.stdout


# --- a real env -----------------------------------------------------------------------------------------

def test_the_built_env_is_ready_and_holds_the_requirements_but_not_xshare(built_data: Path, tmp_path: Path,
                                                                           monkeypatch):
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(built_data))
    python = plugin_env.ready_python(str(REPO))
    assert python == plugin_env.env_python(str(built_data / "venv"))
    stamp = json.loads((built_data / "venv" / plugin_env.STAMP).read_text())
    assert stamp == plugin_env.wanted(str(REPO)) and plugin_env.is_current(str(built_data), stamp)
    assert not [path.name for path in built_data.iterdir() if ".tmp-" in path.name or ".old-" in path.name]
    probe = subprocess.run([python, "-c", "import tiktoken, orjson; print(orjson.dumps([1]).decode())"],
                           capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert probe.returncode == 0 and probe.stdout.strip() == "[1]", probe.stderr
    # the code runs from the plugin folder, so the env must not hold a second, stale copy of xshare
    assert subprocess.run([python, "-c", "import xshare"], capture_output=True, cwd=tmp_path).returncode == 1
    # exactly the pinned versions and nothing else beside pip (no requests: xshare never downloads a vocabulary)
    listed = subprocess.run([python, "-m", "pip", "list", "--format=json", "--disable-pip-version-check"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=60)
    installed = {item["name"].lower(): item["version"] for item in json.loads(listed.stdout)}
    installed.pop("pip"), installed.pop("setuptools", None)
    assert sorted(f"{name}=={version}" for name, version in installed.items()) == sorted(stamp["requirements"])


def test_bin_xshare_switches_to_the_env_and_the_status_line_uses_it(built_data: Path, isolated_home: Path):
    env_python = plugin_env.env_python(str(built_data / "venv"))
    installed = run_bin(["statusline", "install"], isolated_home, CLAUDE_PLUGIN_DATA=str(built_data))
    assert installed.returncode == 0, installed.stderr
    settings = json.loads((isolated_home / ".claude" / "settings.json").read_text())
    assert settings["statusLine"]["command"].startswith(f'"{env_python}" -I -S ')
    status = run_bin(["statusline", "status"], isolated_home, CLAUDE_PLUGIN_DATA=str(built_data))
    assert f"interpreter: {env_python} (xshare's plugin environment" in status.stdout
    assert "missing" not in status.stdout
    # the env's tiktoken with the vocabulary the package carries: exact counts, no network
    report = run_bin(["report", "--demo"], isolated_home, CLAUDE_PLUGIN_DATA=str(built_data))
    assert report.returncode == 0 and "Tokenizer: o200k_base" in report.stdout
    # without the data folder it stays on the interpreter it was started with
    plain = run_bin(["report", "--demo"], isolated_home)
    assert "Tokenizer: chars/4 (tiktoken is not installed)" in plain.stdout


def test_session_start_rebuilds_for_a_new_version_in_the_background_and_keeps_the_old_env_meanwhile(
        built_data: Path, tmp_path: Path, isolated_home: Path, monkeypatch):
    data = tmp_path / "data"
    data.mkdir()
    shutil.copytree(built_data / "venv", data / "venv", symlinks=True)  # the env of the previous version
    old_python = plugin_env.env_python(str(data / "venv"))
    root = fake_plugin(tmp_path / "plugin-0.1.1", "0.1.1")
    payload = json.dumps({"session_id": "s1", "transcript_path": str(tmp_path / "s1.jsonl"), "cwd": str(tmp_path),
                          "hook_event_name": "SessionStart", "source": "startup"})
    extra = {"CLAUDE_PLUGIN_DATA": str(data), "CLAUDE_PLUGIN_ROOT": str(root)}
    with locked(data / "venv.lock"):  # a build already running: the new one must wait, not clash
        hook = run_bin(["hook"], isolated_home, payload, **extra)
        assert hook.returncode == 0 and hook.stdout == "" and hook.stderr == ""
        assert json.loads((data / "venv" / plugin_env.STAMP).read_text())["version"] == "0.1.0"
        monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(data))
        assert plugin_env.ready_python(str(root)) == old_python  # still in use until the new one is complete
    stamp_file = data / "venv" / plugin_env.STAMP
    deadline = time.monotonic() + 300
    stamp = {}
    while time.monotonic() < deadline and stamp.get("version") != "0.1.1":
        time.sleep(0.5)
        stamp = json.loads(stamp_file.read_text()) if stamp_file.exists() else {}
    assert stamp == plugin_env.wanted(str(root)), (data / "venv-build.log").read_text()
    with locked(data / "venv.lock"):  # the build holds it until it has cleaned up after itself
        pass
    assert sorted(path.name for path in data.iterdir()) == ["venv", "venv-build.log", "venv.lock"]
    assert hook_log_lines(isolated_home / "xshare") == []
    assert plugin_env.ready_python(str(root)) == old_python  # same path, new env behind it
    # the next session finds it current and starts nothing
    assert start_build(str(root)) is False
