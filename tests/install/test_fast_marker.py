"""fastokens is a dependency wherever it has a wheel (issue 34): pyproject.toml's dependency, its `fast` extra
(older docs' `pip install 'xshare[fast]'`) and the plugin's pinned, hash-checked requirements.txt carry one
marker, true on exactly the platforms fastokens 0.3.5 publishes a wheel for, so neither `pip install .` nor the
plugin's wheels-only build ever tries to build it from source; the pin tool keeps the marker."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement

from xshare.install import plugin_env

REPO = Path(__file__).resolve().parents[2]
PINNED = "0.3.5"
# fastokens 0.3.5's wheels (abi3, CPython 3.9 and later), as `pip download --only-binary=:all: --platform P`
# found them for Pythons 3.10-3.14: (sys_platform, platform_machine) -> whether a wheel installs there
WHEELS = {
    ("linux", "x86_64"): True, ("linux", "aarch64"): True, ("linux", "i686"): True, ("linux", "armv7l"): True,
    ("linux", "ppc64le"): True, ("darwin", "arm64"): True, ("darwin", "x86_64"): True, ("win32", "AMD64"): True,
    ("linux", "s390x"): False, ("linux", "riscv64"): False, ("linux", "ppc64"): False, ("linux", "armv6l"): False,
    ("win32", "ARM64"): False, ("win32", "x86"): False, ("freebsd14", "amd64"): False, ("cygwin", "x86_64"): False,
}


def environment(platform: str, machine: str, implementation: str = "CPython") -> dict[str, str]:
    return {"sys_platform": platform, "platform_machine": machine, "platform_python_implementation": implementation,
            "python_version": "3.12", "python_full_version": "3.12.3", "os_name": "nt" if platform == "win32" else
            "posix", "platform_system": "", "platform_release": "", "platform_version": "",
            "implementation_name": implementation.lower(), "implementation_version": "3.12.3", "extra": ""}


def declared() -> list[Requirement]:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    found = [Requirement(item) for item in project["dependencies"] + project["optional-dependencies"]["fast"]]
    return [requirement for requirement in found if requirement.name == "fastokens"]


def pinned() -> tuple[str, Marker]:
    text = (REPO / plugin_env.REQUIREMENTS).read_text()
    (line,) = [line for line in text.splitlines() if line.startswith("fastokens==")]
    requirement = Requirement(line.removesuffix("\\").strip())
    assert requirement.marker is not None, "the plugin's pin of fastokens has no marker: a wheels-only build fails"
    return str(requirement.specifier).removeprefix("=="), requirement.marker


def test_the_default_install_the_fast_extra_and_the_plugin_share_one_marker():
    default, extra = declared()
    version, marker = pinned()
    assert default.marker is not None and default.marker == extra.marker == marker
    assert default.specifier == extra.specifier and default.specifier.contains(version)
    assert version == PINNED, "a new fastokens pin: probe its wheels again and update WHEELS and the marker"


@pytest.mark.parametrize(("platform", "machine"), list(WHEELS), ids=lambda value: str(value))
def test_the_marker_holds_exactly_where_a_wheel_exists(platform: str, machine: str):
    _, marker = pinned()
    assert marker.evaluate(environment(platform, machine)) is WHEELS[platform, machine]
    assert marker.evaluate(environment(platform, machine, "PyPy")) is False  # abi3 is CPython's


def test_every_file_of_the_pinned_release_is_hashed():
    text = (REPO / plugin_env.REQUIREMENTS).read_text().replace("\\\n", " ")
    (line,) = [line for line in text.splitlines() if line.startswith("fastokens==")]
    assert len(set(re.findall(r"--hash=sha256:([0-9a-f]{64})", line))) == 12 + 1  # every wheel and the sdist
    assert "# fastokens==0.3.5: 12 wheels, CPython 3.9 and later (abi3); 1 sdist" in text


def test_this_machine_installs_fastokens_by_default():
    """Where the marker holds (this CI's Linux x86_64), the default install has it: the tests hold it equal to
    tiktoken (tests/measure/test_fast_counter.py), which then runs, not skips."""
    _, marker = pinned()
    if not marker.evaluate():
        pytest.skip("fastokens has no wheel for this platform")
    assert importlib.util.find_spec("fastokens") is not None


def test_the_pin_tool_keeps_a_marker_written_after_a_pin():
    spec = importlib.util.spec_from_file_location("pin_requirements", REPO / "tools" / "pin_requirements.py")
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    text = ("# header\n# --- pins (generated) ---\n# a note\n# demo==1.0: 1 wheels, CPython 3.10; 0 sdist\n"
            "demo==1.0 ; sys_platform == 'linux' and platform_machine == 'x86_64' \\\n    --hash=sha256:" + "a" * 64
            + "\nplain==2.0 \\\n    --hash=sha256:" + "b" * 64 + "\n")
    header, pins = tool.parse(text)
    assert pins == [("demo", "1.0", "; sys_platform == 'linux' and platform_machine == 'x86_64'", ["# a note"]),
                    ("plain", "2.0", "", [])]
    files = {"demo": [{"filename": "demo-1.0-cp310-cp310-manylinux_2_17_x86_64.whl", "hashes": {"sha256": "a" * 64}}],
             "plain": [{"filename": "plain-2.0-py3-none-any.whl", "hashes": {"sha256": "b" * 64}}]}
    rendered = tool.render(header, [(*pin, files[pin[0]]) for pin in pins])
    assert "demo==1.0 ; sys_platform == 'linux' and platform_machine == 'x86_64' \\\n" in rendered
    assert "plain==2.0 \\\n" in rendered
    assert tool.parse(rendered) == (header, pins)
