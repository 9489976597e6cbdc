"""The plugin's Python and its pinned packages (issue 18): requirements.txt against pyproject.toml, the pin
tool against a fake index, the entry points on old interpreters (a static check, and a real run on every
python3.6 ... 3.9 this machine has), a plugin env whose interpreter cannot start, a half-built or orphaned
env, an unwritable data folder, and uv's install of a Python (needs an index: XSHARE_TEST_OFFLINE=1 skips)."""

from __future__ import annotations

import ast
import glob
import hashlib
import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from xshare.install import plugin_env, plugin_env_build, plugin_python, plugin_uv

REPO = Path(__file__).resolve().parents[2]
BIN = REPO / "bin" / "xshare"
STATUSLINE = REPO / "statusline" / "statusline.py"
TOOL = REPO / "tools" / "pin_requirements.py"
OFFLINE = os.environ.get("XSHARE_TEST_OFFLINE") == "1"


def old_pythons() -> list[str]:
    """Every python3.6 ... python3.9 on this machine (the PATH, pyenv), one per minor version."""
    found = {}
    for minor in (6, 7, 8, 9):
        candidates = [shutil.which(f"python3.{minor}")] + sorted(
            glob.glob(os.path.expanduser(f"~/.pyenv/versions/3.{minor}.*/bin/python3.{minor}")))
        for path in filter(None, candidates):
            try:  # the interpreter itself, not a launcher script (pyenv's shims need bash and a PATH)
                real = subprocess.run([path, "-c", "import sys; print(sys.executable)"], capture_output=True,
                                      text=True, timeout=30).stdout.strip()
            except (OSError, subprocess.SubprocessError):
                continue
            if real and f"3.{minor}" in real:
                found[f"3.{minor}"] = real
                break
    return [found[key] for key in sorted(found)]


OLD = old_pythons()


def lock_blocks(text: str) -> dict[str, tuple[str, list[str]]]:
    """name -> (version, hashes) for every requirement in a pip requirements file."""
    blocks = {}
    for line in text.replace("\\\n", " ").splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split()[0].split("==")
            blocks[name] = (version, re.findall(r"--hash=sha256:([0-9a-f]+)", line))
    return blocks


# --- the pins --------------------------------------------------------------------------------------------

def test_requirements_pin_with_hashes_what_pyproject_declares():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    declared = [Requirement(item) for item in
                tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]]
    blocks = lock_blocks((REPO / plugin_env.REQUIREMENTS).read_text())
    for requirement in declared:
        version, hashes = blocks[requirement.name]
        assert requirement.specifier.contains(version), f"{requirement} does not hold the pin {version}"
    # beside the declared ones (fastokens among them, where it has a wheel: tests/install/test_fast_marker.py)
    # only tiktoken's regex (requests is left out: xshare never downloads a vocabulary)
    assert set(blocks) == {requirement.name for requirement in declared} | {"regex"}
    for name, (_, hashes) in blocks.items():
        assert hashes and all(len(digest) == 64 for digest in hashes) and len(set(hashes)) == len(hashes), name
    assert plugin_env.pins((REPO / plugin_env.REQUIREMENTS).read_text()) == [f"{n}=={v}" for n, (v, _) in
                                                                          blocks.items()]
    (uv,) = lock_blocks((REPO / plugin_uv.REQUIREMENTS).read_text()).values()
    assert uv[1]


def test_every_pin_has_wheels_for_every_python_the_plugin_may_pick():
    """The plugin env installs wheels only: a pin without a wheel for a Python it may run (regex 2026.11 has
    none for 3.10, Ubuntu 22.04's python3) would fail to build there."""
    comments = re.findall(r"^# (\S+)==\S+: \d+ wheels, CPython (.*); \d+ sdist$",
                          (REPO / plugin_env.REQUIREMENTS).read_text(), re.M)
    assert len(comments) == 4
    for name, versions in comments:
        stable = re.search(r"3\.(\d+) and later \(abi3\)", versions)  # fastokens: one wheel per platform
        missing = {version for version in set(plugin_env.VERSIONS) - set(versions.split(", "))
                   if not (stable and int(version.split(".")[1]) >= int(stable.group(1)))}
        assert not missing, f"{name} has no wheel for Python {', '.join(sorted(missing))}"
    assert plugin_uv.PYTHON_VERSION in plugin_env.VERSIONS


@pytest.mark.parametrize("text", ["", "tiktoken>=0.7 --hash=sha256:" + "0" * 64, "tiktoken==0.14.0\n",
                                  "tiktoken==0.14.0 --hash=sha256:" + "0" * 64 + "\norjson\n"])
def test_nothing_is_installed_from_a_file_with_an_unpinned_or_unhashed_requirement(tmp_path: Path, text: str):
    assert plugin_env.pins(text) == []
    root = tmp_path / "plugin"
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text('{"version": "1.0.0"}')
    (root / plugin_env.REQUIREMENTS).write_text(text)
    assert plugin_env.wanted(str(root)) is None and plugin_env_build.start_build(str(root)) is False


class FakeIndex(http.server.BaseHTTPRequestHandler):
    """A PEP 691 index serving two releases of `demo`, one of its files yanked, and the files themselves."""
    files: dict[str, bytes] = {}

    def do_GET(self):  # noqa: N802  (http.server's name)
        if self.path == "/simple/demo/":
            entries = [{"filename": name, "hashes": {"sha256": hashlib.sha256(data).hexdigest()},
                        "url": f"http://127.0.0.1:{self.server.server_port}/files/{name}",
                        "yanked": name.endswith("cp312-cp312-win_amd64.whl")} for name, data in self.files.items()]
            body = json.dumps({"files": entries}).encode()
        elif self.path.startswith("/files/") and self.path[7:] in self.files:
            body = self.files[self.path[7:]]
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_the_pin_tool_lists_every_file_of_the_release_and_checks_them(tmp_path: Path):
    FakeIndex.files = {name: name.encode() * 3 for name in (
        "demo-1.0.tar.gz", "demo-1.0-cp310-cp310-manylinux_2_17_x86_64.whl", "demo-2.0.tar.gz",
        "demo-2.0-cp311-abi3-macosx_11_0_arm64.whl", "demo-2.0-cp312-cp312-win_amd64.whl",
        "demo-2.0-cp310-cp310-manylinux_2_17_x86_64.whl")}
    server = http.server.HTTPServer(("127.0.0.1", 0), FakeIndex)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    index = f"http://127.0.0.1:{server.server_port}/simple/"
    lock = tmp_path / "requirements.txt"
    lock.write_text("# header kept\n# --- pins (generated) ---\n# a note kept above the pin\ndemo==1.0\n")
    try:
        try:  # a namespace with no network at all (not even the loopback) cannot reach the fake index
            socket.create_connection(("127.0.0.1", server.server_port), timeout=5).close()
        except OSError:
            pytest.skip("no loopback to serve the fake index on")
        local = {**os.environ, "no_proxy": "127.0.0.1", "NO_PROXY": "127.0.0.1"}  # never through a proxy

        def tool(*args: str) -> subprocess.CompletedProcess:
            return subprocess.run([sys.executable, str(TOOL), str(lock), "--index", index, *args],
                                  capture_output=True, text=True, timeout=60, env=local)

        assert tool("--check").returncode == 1
        assert tool().returncode == 0
        blocks = lock_blocks(lock.read_text())
        assert blocks["demo"] == ("1.0", [hashlib.sha256(name.encode() * 3).hexdigest() for name in sorted(
            FakeIndex.files) if name.startswith("demo-1.0")])
        assert lock.read_text().startswith("# header kept\n# --- pins (generated) ---\n# a note kept above the pin\n")
        assert "# demo==1.0: 1 wheels, CPython 3.10; 1 sdist" in lock.read_text()
        assert tool("--check").returncode == 0
        upgraded = tool("--upgrade", "--verify")
        assert upgraded.returncode == 0, upgraded.stderr
        version, hashes = lock_blocks(lock.read_text())["demo"]
        assert version == "2.0" and len(hashes) == 3  # the yanked wheel is left out
        assert "CPython 3.10, 3.11 and later (abi3); 1 sdist" in lock.read_text()
        FakeIndex.files["demo-2.0.tar.gz"] = b"replaced upstream"  # a file that changed is noticed
        assert tool("--check").returncode == 1
    finally:
        server.shutdown()


# --- entry points on old interpreters ----------------------------------------------------------------------

def test_the_files_an_old_python_starts_parse_as_old_python():
    for name in plugin_python.STARTS_ON_OLD + plugin_python.BUILDS_ON_OLD:
        source = (REPO / name).read_text()
        ast.parse(source, name, feature_version=(3, 7 if name in plugin_python.STARTS_ON_OLD else 9))
    with pytest.raises(SyntaxError):  # the check can fail: 3.10's syntax is refused
        ast.parse("match x:\n    case 1:\n        pass\n", feature_version=(3, 9))
    for name in plugin_python.STARTS_ON_OLD:  # none of them postpones annotations (3.7+): 3.6 must get its line
        futures = [alias.name for node in ast.walk(ast.parse((REPO / name).read_text()))
                   if isinstance(node, ast.ImportFrom) and node.module == "__future__" for alias in node.names]
        assert futures == [], name


def unions_evaluated_at_definition(source: str) -> list[int]:
    """Lines where an annotation evaluated when its function is defined uses `X | Y` (3.10+): without
    postponed annotations it raises TypeError on import, which no parser and no vermin check sees."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            annotations = [arg.annotation for arg in (*node.args.posonlyargs, *node.args.args,
                                                     *node.args.kwonlyargs, node.args.vararg, node.args.kwarg)
                           if arg is not None] + [node.returns]
            found += [item.lineno for item in annotations if item is not None for part in ast.walk(item)
                      if isinstance(part, ast.BinOp) and isinstance(part.op, ast.BitOr)]
        elif isinstance(node, ast.AnnAssign) and any(isinstance(part, ast.BinOp) for part in ast.walk(node.annotation)):
            found.append(node.lineno)
    return found


def test_the_files_an_old_python_starts_evaluate_no_union_annotations():
    for name in plugin_python.STARTS_ON_OLD:
        assert unions_evaluated_at_definition((REPO / name).read_text()) == [], name
    assert unions_evaluated_at_definition('def f(x: "str | None") -> int | None:\n    pass\n') == [1]


def test_vermin_finds_nothing_newer_than_the_oldest_python_each_file_must_start_on(tmp_path: Path):
    pytest.importorskip("vermin")

    def vermin(target: str, *files: str) -> subprocess.CompletedProcess:
        command = [sys.executable, "-c", "import sys, vermin; sys.exit(vermin.main())"]
        return subprocess.run([*command, "--no-tips", "--violations", "-q", f"-t={target}", *files],
                              capture_output=True, text=True, cwd=REPO, timeout=120)

    started = vermin("3.6-", *plugin_python.STARTS_ON_OLD)
    assert started.returncode == 0, started.stdout
    built = vermin("3.9-", *plugin_python.STARTS_ON_OLD, *plugin_python.BUILDS_ON_OLD)
    assert built.returncode == 0, built.stdout
    bad = tmp_path / "bad.py"
    bad.write_text("pairs = list(zip([1], [2], strict=True))\n")
    assert vermin("3.9-", str(bad)).returncode != 0


def run(python: str, script: Path, args: list[str], home: Path, path: str, stdin: str = "",
        **extra: str) -> subprocess.CompletedProcess:
    """The script the way Claude Code starts it, with only `path` on the PATH and no usual folders searched."""
    env = {"HOME": str(home), "PATH": path, "XSHARE_HOME": str(home / "xshare"), "LANG": "C.UTF-8",
           "XSHARE_WORKER": "0", "XSHARE_NO_BACKGROUND": "1", plugin_env.SEARCH: "", **extra}
    return subprocess.run([python, "-I", "-S", str(script), *args], input=stdin, capture_output=True, text=True,
                          env=env, timeout=120)


def hook_log(home: Path | None = None) -> list[str]:
    """The hook log's lines: a child's (run() puts its state in `home`/xshare) or this process's."""
    log = (home / "xshare" if home else Path(os.environ["XSHARE_HOME"])) / "logs" / "hook.log"
    return log.read_text().splitlines() if log.exists() else []


@pytest.mark.skipif(not OLD, reason="no python3.6 ... python3.9 on this machine")
@pytest.mark.parametrize("python", OLD, ids=lambda path: "python" + re.search(r"3\.\d+", path).group())
def test_an_old_python3_with_no_newer_one_says_what_is_missing_in_one_line(python: str, tmp_path: Path,
                                                                             isolated_home: Path):
    nothing = str(tmp_path / "empty-bin")
    minor = re.search(r"3\.\d+", python).group()
    cli = run(python, BIN, ["report", "--demo"], isolated_home, nothing)
    assert cli.returncode == 1 and cli.stdout == "" and "Traceback" not in cli.stderr
    (line,) = cli.stderr.splitlines()
    assert line.startswith("xshare needs Python 3.10 or newer;") and f" is {minor}." in line
    payload = json.dumps({"hook_event_name": "PostToolBatch", "session_id": "s"})
    for _ in range(3):  # one line in the log, not one per tool batch
        hook = run(python, BIN, ["hook"], isolated_home, nothing, payload)
        assert (hook.returncode, hook.stdout, hook.stderr) == (0, "", "")
    (logged,) = hook_log(isolated_home)
    assert logged.endswith(line)
    status = run(python, STATUSLINE, [], isolated_home, nothing, "{}")
    assert status.returncode == 0 and status.stderr == ""
    assert status.stdout.splitlines() == [f"xshare: needs Python {'3.10+'} (python3 is {minor}); install one "
                                          "(python.org, or brew install python@3.13)"]
    slash = run(python, BIN, ["slash", "--", "--all"], isolated_home, nothing)
    assert slash.returncode == 0 and slash.stdout.strip() == line


@pytest.mark.skipif(not OLD, reason="no python3.6 ... python3.9 on this machine")
@pytest.mark.parametrize("python", OLD, ids=lambda path: "python" + re.search(r"3\.\d+", path).group())
def test_an_old_python3_hands_over_to_the_newest_python_found(python: str, tmp_path: Path, isolated_home: Path):
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / f"python3.{sys.version_info[1]}").symlink_to(sys.executable)  # the one this test runs on
    (folder / "python3.15").write_text("not a python\n")  # newer by name, but cannot start: skipped
    (folder / "python3.15").chmod(0o755)
    for script, args in ((BIN, ["report", "--demo"]), (STATUSLINE, [])):
        done = run(python, script, args, isolated_home, str(folder), "{}")
        assert done.returncode == 0 and "Traceback" not in done.stderr and "needs Python" not in done.stdout
    handed = run(python, BIN, ["report", "--demo"], isolated_home, str(folder))
    clean = run(sys.executable, BIN, ["report", "--demo"], isolated_home, str(folder))
    assert "Exploration share" in handed.stdout and (handed.stdout, handed.stderr) == (clean.stdout, clean.stderr)
    version = run(python, BIN, ["--version"], isolated_home, str(folder))
    assert version.stdout.startswith("xshare ")
    assert hook_log(isolated_home) == []


def test_the_search_looks_in_the_usual_folders_and_the_plugins_own_newest_first(tmp_path: Path, monkeypatch):
    def python(folder: Path, name: str) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text("")
        (folder / name).chmod(0o755)
        return folder / name

    brew = python(tmp_path / "brew", "python3.12")
    path_one = python(tmp_path / "path", "python3.11")
    python(tmp_path / "path", "python3.9")  # too old: never a candidate
    (tmp_path / "path" / "python3.14").write_text("")  # not executable: skipped
    uv = python(tmp_path / "data" / "python" / "cpython-3.13.1-macos-aarch64-none" / "bin", "python3.13")
    monkeypatch.setenv("PATH", str(tmp_path / "path"))
    monkeypatch.setenv(plugin_env.SEARCH, str(tmp_path / "brew"))
    assert plugin_env.newer_pythons(str(tmp_path / "data")) == [str(uv), str(brew), str(path_one)]
    (tmp_path / "path" / "python3.12").symlink_to(brew)  # the same file twice is one candidate
    assert plugin_env.newer_pythons(None) == [str(tmp_path / "path" / "python3.12"), str(path_one)]
    monkeypatch.delenv(plugin_env.SEARCH)
    assert "/opt/homebrew/bin" in plugin_env.search_dirs(None)
    assert f"{plugin_env.FRAMEWORKS}/3.13/bin" in plugin_env.search_dirs(None)


# --- an env that is there but cannot be used ---------------------------------------------------------------

def fake_env(data: Path, python: bytes | Path | None, stamp: dict | None = None) -> Path:
    """${CLAUDE_PLUGIN_DATA}/venv with a stamp and a bin/python that is `python` (bytes: a file with those
    bytes, executable; a Path: a symlink to it)."""
    (data / "venv" / "bin").mkdir(parents=True)
    target = data / "venv" / "bin" / "python"
    if isinstance(python, Path):
        target.symlink_to(python)
    elif python is not None:
        target.write_bytes(python)
        target.chmod(0o755)
    if stamp is not None:
        (data / "venv" / plugin_env.STAMP).write_text(json.dumps(stamp))
    return target


def plugin_root(folder: Path) -> Path:
    (folder / ".claude-plugin").mkdir(parents=True)
    (folder / ".claude-plugin" / "plugin.json").write_text('{"name": "xshare", "version": "0.1.0"}')
    shutil.copy(REPO / plugin_env.REQUIREMENTS, folder / plugin_env.REQUIREMENTS)
    return folder


@pytest.mark.skipif(os.name == "nt", reason="POSIX exec errors")
@pytest.mark.parametrize("broken", [b"\x7fELF\x02\x01\x01garbage", b"no shebang, not a program\n", "directory"],
                         ids=["wrong-arch", "not-a-program", "a-folder"])
def test_an_env_whose_python_cannot_start_is_set_aside_and_rebuilt(broken, tmp_path: Path, isolated_home: Path,
                                                                    monkeypatch):
    data = tmp_path / "data"
    root = plugin_root(tmp_path / "plugin")
    monkeypatch.setenv("CLAUDE_PLUGIN_ROOT", str(root))
    if broken == "directory":
        fake_env(data, None, plugin_env.wanted(str(root)))
        (data / "venv" / "bin" / "python").mkdir()
    else:
        fake_env(data, broken, plugin_env.wanted(str(root)))
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(data))
    assert plugin_env.ready_python() is not None and plugin_env.is_current(str(data), plugin_env.wanted(str(root)))
    extra = {"CLAUDE_PLUGIN_DATA": str(data), "CLAUDE_PLUGIN_ROOT": str(root)}
    path = os.environ.get("PATH", "")
    report = run(sys.executable, BIN, ["report", "--demo"], isolated_home, path, **extra)
    clean = run(sys.executable, BIN, ["report", "--demo"], isolated_home, path)
    assert report.returncode == 0 and "Exploration share" in report.stdout
    assert (report.stdout, report.stderr) == (clean.stdout, clean.stderr)  # the same figures, nothing more said
    assert plugin_env.ready_python() is None and (data / "venv" / plugin_env.SET_ASIDE).is_file()
    hook = run(sys.executable, BIN, ["hook"], isolated_home, path, json.dumps({"hook_event_name": "Stop"}), **extra)
    assert (hook.returncode, hook.stdout, hook.stderr) == (0, "", "")
    started = []
    monkeypatch.setattr(plugin_env_build.subprocess, "Popen", lambda command, **kw: started.append(command))
    assert plugin_env_build.start_build(str(root)) is True and started[0][-2:] == [str(root), str(data)]


@pytest.mark.skipif(os.name == "nt", reason="a POSIX venv layout with a symlinked interpreter")
@pytest.mark.parametrize("case", ["python-removed", "half-built", "leftover-temporary"])
def test_an_orphaned_or_half_built_env_is_not_used_and_is_rebuilt(case: str, tmp_path: Path, isolated_home: Path,
                                                                   monkeypatch):
    data = tmp_path / "data"
    root = plugin_root(tmp_path / "plugin")
    old = dict(plugin_env.wanted(str(root)), python="3.9")
    if case == "python-removed":  # built by a Python that was uninstalled since
        fake_env(data, tmp_path / "gone" / "python3.9", old)
    elif case == "half-built":  # the builder was killed before the stamp
        fake_env(data, Path(sys.executable))
    else:
        fake_env(data / "venv.tmp-4242", Path(sys.executable), plugin_env.wanted(str(root)))
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(data))
    assert plugin_env.ready_python(str(root)) is None
    report = run(sys.executable, BIN, ["report", "--demo"], isolated_home, os.environ.get("PATH", ""),
                 CLAUDE_PLUGIN_DATA=str(data))
    clean = run(sys.executable, BIN, ["report", "--demo"], isolated_home, os.environ.get("PATH", ""))
    assert report.returncode == 0 and "Exploration share" in report.stdout
    assert (report.stdout, report.stderr) == (clean.stdout, clean.stderr)
    started = []
    monkeypatch.setattr(plugin_env_build.subprocess, "Popen", lambda command, **kw: started.append(command))
    assert plugin_env_build.start_build(str(root)) is True and len(started) == 1


@pytest.mark.parametrize("how", ["a-file", "read-only"])
def test_an_unwritable_data_folder_is_one_log_line_not_a_build_per_session(how: str, tmp_path: Path,
                                                                            isolated_home: Path, monkeypatch):
    root = plugin_root(tmp_path / "plugin")
    data = tmp_path / "data"
    if how == "a-file":  # a leftover file where the folder should be: refused even for root
        data.write_text("")
    else:
        if os.name == "nt" or os.geteuid() == 0:
            pytest.skip("root writes into a read-only folder anyway")
        data.mkdir()
        data.chmod(0o555)
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(data))
    started = []
    monkeypatch.setattr(plugin_env_build.subprocess, "Popen", lambda command, **kw: started.append(command))
    for _ in range(3):
        assert plugin_env_build.start_build(str(root)) is False
    assert started == []
    (line,) = hook_log()
    assert "the plugin environment cannot be built" in line and str(data) in line and "not writable" in line


# --- uv, where no Python 3.10+ exists ---------------------------------------------------------------------

def no_index(monkeypatch, tmp_path: Path) -> dict[str, str]:
    empty = tmp_path / "no-wheels"
    empty.mkdir(exist_ok=True)
    values = {"PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(empty),
              "PIP_INDEX_URL": "http://127.0.0.1:9/"}
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values


@pytest.mark.skipif(not [p for p in OLD if "3.9" in p or "3.8" in p], reason="no python3.8 or 3.9 here")
def test_session_start_on_an_old_python_tries_uv_once_a_day_and_says_why_it_failed(tmp_path: Path,
                                                                                  isolated_home: Path, monkeypatch):
    python = [p for p in OLD if "3.9" in p or "3.8" in p][-1]
    root = plugin_root(tmp_path / "plugin")
    shutil.copy(REPO / plugin_uv.REQUIREMENTS, root / plugin_uv.REQUIREMENTS)
    data = tmp_path / "data"
    extra = {"CLAUDE_PLUGIN_DATA": str(data), "CLAUDE_PLUGIN_ROOT": str(root), **no_index(monkeypatch, tmp_path)}
    nothing = str(tmp_path / "empty-bin")
    start = json.dumps({"hook_event_name": "SessionStart", "session_id": "s", "source": "startup"})
    hook = run(python, BIN, ["hook"], isolated_home, nothing, start, **extra)
    assert (hook.returncode, hook.stdout, hook.stderr) == (0, "", "")
    failed = data / plugin_env.UV_FAILED
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not failed.exists() or (data / plugin_env.UV_BUILDING).exists()):
        time.sleep(0.3)
    reason = json.loads(failed.read_text())["reason"]
    assert reason.startswith("pip could not install uv")
    lines = hook_log(isolated_home)
    assert len(lines) == 2 and "installing one with uv failed (pip could not install uv" in lines[1]
    assert not (data / plugin_uv.BOOTSTRAP).exists() and not (data / plugin_env.UV_BUILDING).exists()
    # the next session neither tries again nor logs again; the status line says install one
    assert run(python, BIN, ["hook"], isolated_home, nothing, start, **extra).returncode == 0
    deadline = time.monotonic() + 60  # waits for the line it asserts on, however busy the machine
    while len(hook_log(isolated_home)) < 3 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert hook_log(isolated_home)[:2] == lines and len(hook_log(isolated_home)) == 3  # the missing line, now
    status = run(python, STATUSLINE, [], isolated_home, nothing, "{}", **extra)
    assert "install one" in status.stdout


@pytest.mark.skipif(OFFLINE, reason="XSHARE_TEST_OFFLINE=1: installing uv needs a package index")
def test_uv_is_installed_hash_checked_and_either_installs_a_python_or_says_why(tmp_path: Path, isolated_home: Path,
                                                                              monkeypatch):
    """Real pip installs the pinned uv into the throwaway env; uv then downloads a Python (from GitHub) where
    the network allows, and the env is built with it; where it does not, one line says why."""
    root = plugin_root(tmp_path / "plugin")
    shutil.copy(REPO / plugin_uv.REQUIREMENTS, root / plugin_uv.REQUIREMENTS)
    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.setenv(plugin_env.SEARCH, "")
    ready = plugin_uv.install(str(root), str(data))
    reason = (plugin_env.read_json(str(data / plugin_env.UV_FAILED)) or {}).get("reason", "")
    if reason.startswith("pip could not install uv") and ("No matching distribution" in reason
                                                           or "Could not find a version" in reason):
        pytest.skip(f"pip cannot reach a package index here: {reason}")
    assert not reason.startswith("pip"), reason
    assert not (data / plugin_uv.BOOTSTRAP).exists() and not (data / "uv-cache").exists()
    assert not (data / plugin_env.UV_BUILDING).exists()
    if ready:
        found = plugin_env.newer_pythons(str(data))
        assert found and found[0].startswith(str(data / plugin_env.UV_PYTHONS))
        monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(data))
        assert plugin_env.ready_python(str(root))
        assert not (isolated_home / ".local" / "bin").exists()  # --no-bin: nothing outside the data folder
    else:
        failure = plugin_env.read_json(str(data / plugin_env.UV_FAILED))
        assert failure["reason"].startswith(f"uv could not install Python {plugin_uv.PYTHON_VERSION}")
        (line,) = hook_log()
        assert "installing one with uv failed" in line and plugin_uv.failed_recently(str(data))
