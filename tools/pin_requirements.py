#!/usr/bin/env python3
"""Regenerate a pinned requirements file with the sha256 of every file of each pinned release.

    python3 tools/pin_requirements.py requirements.txt                    # same versions, hashes re-read
    python3 tools/pin_requirements.py requirements.txt orjson==3.13.1     # move one pin
    python3 tools/pin_requirements.py requirements.txt --upgrade          # newest final release of each
    python3 tools/pin_requirements.py requirements-uv.txt --check         # exit 1 if the file is out of date

The hashes come from the index's JSON API (PEP 691: every file of a release with its sha256, the values pip
checks downloads against); `--verify` also downloads every file and hashes it here. Every file of the
release is listed, wheels for all platforms and the sdist, so one file serves every machine; the plugin
installs with --only-binary=:all:, so only the wheels are ever used. Stdlib only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import urllib.request
from pathlib import Path

INDEX = "https://pypi.org/simple/"
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")
# an environment marker written after a pin (` ; sys_platform == 'linux'`), kept as written: the package is
# installed only where it holds (fastokens: where a wheel exists, so the wheels-only install never fails)
MARKER = re.compile(r"\s*(;[^\\]*?)\s*\\?$")
# lines kept verbatim from the current file: the header (comments before the first pin)
HEADER_END = "# --- pins (generated) ---"


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def release_files(index: str, name: str) -> list[dict]:
    request = urllib.request.Request(f"{index.rstrip('/')}/{normalized(name)}/",
                                     headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)["files"]


def files_of(files: list[dict], name: str, version: str) -> list[dict]:
    """The files of one release: `name-version-*.whl` and `name-version.tar.gz` (names normalized)."""
    stem = re.sub(r"[-_.]+", "_", name).lower() + "-" + version
    found = [file for file in files
             if re.sub(r"[-_.]+", "_", file["filename"].split("-")[0]).lower() + "-" + file["filename"].split("-")[1]
             .removesuffix(".tar.gz").removesuffix(".zip") == stem and not file.get("yanked")]
    return sorted(found, key=lambda file: file["filename"])


def newest(files: list[dict], name: str) -> str:
    versions = set()
    for file in files:
        parts = file["filename"].removesuffix(".tar.gz").split("-")
        if len(parts) > 1 and re.fullmatch(r"\d+(\.\d+)*", parts[1]) and not file.get("yanked"):
            versions.add(parts[1])
    if not versions:
        raise SystemExit(f"no final release of {name} on the index")
    return max(versions, key=lambda v: tuple(int(part) for part in v.split(".")))


def pythons(files: list[dict]) -> str:
    """The CPython versions the release has wheels for (cp39 ... or py3 for a pure or abi3 wheel)."""
    tags, stable = set(), set()
    for file in files:
        if file["filename"].endswith(".whl"):
            tags.update(re.findall(r"-(cp3\d+|py3)-(?!abi3)", file["filename"]))
            stable.update(re.findall(r"-cp3(\d+)-abi3-", file["filename"]))  # one wheel serves 3.N and later
    cpython = sorted(int(tag[3:]) for tag in tags if tag.startswith("cp"))
    words = [f"3.{minor}" for minor in cpython] + (["any Python 3 (py3)"] if "py3" in tags else [])
    words += [f"3.{min(map(int, stable))} and later (abi3)"] if stable else []
    return ", ".join(words)


def verify(file: dict) -> None:
    digest = hashlib.sha256()
    with urllib.request.urlopen(file["url"], timeout=300) as response:
        for block in iter(lambda: response.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != file["hashes"]["sha256"]:
        raise SystemExit(f"{file['filename']}: the index lists {file['hashes']['sha256']}, the file is "
                         f"{digest.hexdigest()}")


def render(header: list[str], pins: list[tuple[str, str, str, list[str], list[dict]]]) -> str:
    lines = [*header, HEADER_END]
    for name, version, marker, comments, files in pins:
        lines += comments
        wheels = sum(file["filename"].endswith(".whl") for file in files)
        lines.append(f"# {name}=={version}: {wheels} wheels, CPython {pythons(files)}; "
                     f"{len(files) - wheels} sdist")
        lines.append(f"{name}=={version}{' ' + marker if marker else ''} \\")
        hashes = [f"    --hash=sha256:{file['hashes']['sha256']}" for file in files]
        lines += [line + " \\" for line in hashes[:-1]] + hashes[-1:]
    return "\n".join(lines) + "\n"


def parse(text: str) -> tuple[list[str], list[tuple[str, str, str, list[str]]]]:
    """The header and each pin with its marker (or "") and the comment lines written above it by hand (not the
    generated one)."""
    header, pins, comments, in_header = [], [], [], True
    for line in text.splitlines():
        if line == HEADER_END:
            in_header = False
        elif in_header:
            header.append(line)
        elif match := PIN.match(line):
            marker = MARKER.match(line, match.end())
            pins.append((match.group(1), match.group(2), marker.group(1) if marker else "", comments))
            comments = []
        elif line.startswith("#") and not re.match(r"# \S+==\S+: \d+ wheels", line):
            comments.append(line)
    return header, pins


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("pins", nargs="*", help="name==version to set (others keep their version)")
    parser.add_argument("--upgrade", action="store_true", help="the newest final release of every pin")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if the file would change")
    parser.add_argument("--verify", action="store_true", help="download every file and check its sha256")
    parser.add_argument("--index", default=INDEX, help=f"a PEP 691 simple index (default {INDEX})")
    args = parser.parse_args(argv)
    old = args.file.read_text(encoding="utf-8")
    header, pins = parse(old)
    wanted = dict(PIN.match(pin).groups() for pin in args.pins)
    result = []
    for name, version, marker, comments in pins:
        files = release_files(args.index, name)
        version = wanted.pop(name, newest(files, name) if args.upgrade else version)
        chosen = files_of(files, name, version)
        if not chosen:
            raise SystemExit(f"{name}=={version}: no files on {args.index}")
        for file in chosen if args.verify else ():
            verify(file)
        result.append((name, version, marker, comments, chosen))
    if wanted:
        raise SystemExit(f"not in {args.file}: {', '.join(wanted)} (add a line name==version by hand first)")
    new = render(header, result)
    if args.check:
        print(f"{args.file}: {'up to date' if new == old else 'out of date'}")
        return 0 if new == old else 1
    args.file.write_text(new, encoding="utf-8")
    print(f"{args.file}: " + ", ".join(f"{name}=={version} ({len(files)} files)"
                                       for name, version, _, _, files in result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
