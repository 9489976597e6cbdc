#!/usr/bin/env bash
# Tests against real Hermes-Agent releases, each in a throwaway virtual environment under $1:
#   1. installs pinned hermes-agent releases (0.13.0 = schema 11, 0.16.0 = schema 14, 0.19.0 = schema 22);
#   2. with each, writes $1/dbs/<version>/state.db through Hermes's own SessionDB
#      (tests/support/hermes_fixtures.py build_with_sessiondb), plus, with 0.19.0, ../shared/tools/make_hermes_db.py's
#      database when that script is beside the repository;
#   3. in the 0.19.0 environment, installs this checkout (pip install -e) and pytest, and runs
#      tests/live/test_hermes_plugin.py (Hermes's own plugin loader and CLI), the SessionDB database test and
#      tests/agents/hermes/test_realhost.py (real `hermes chat` sessions, one-shot, classic and TUI in tmux, against a
#      fake model server on 127.0.0.1; about 40 s; the tmux ones skip without tmux) and tests/agents/hermes/test_wire.py
#      (the wire check: reads, greps, a 60-step session, a --resume turn, each request billed its o200k count;
#      about 50 s).
# A second run reuses the environments and the databases (rebuilt only when the fixture code changed).
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 WORK_DIR   (throwaway virtual environments and databases go there)" >&2
    exit 2
fi
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"
work=$(cd "$1" && pwd)
python=${PYTHON:-python3}
versions="0.13.0 0.16.0 0.19.0"
plugin_version=0.19.0
# Work from outside the checkout: Python would otherwise find the checkout's own xshare.egg-info first.
cd "$work"

say() { echo "hermes.sh: $*"; }
run() { say "run: $*"; "$@"; }

for version in $versions; do
    venv="$work/venv-$version"
    if "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('hermes-agent') != '$version')" \
        2>/dev/null; then
        say "hermes-agent $version already installed in $venv"
    else
        run "$python" -m venv --clear "$venv"
        run "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "hermes-agent==$version"
    fi
    db="$work/dbs/$version/state.db"
    if [ -f "$db" ] && [ "$db" -nt "$repo/tests/support/hermes_fixtures.py" ]; then
        say "$db is up to date"
    else
        run "$venv/bin/python" -c 'import sys; sys.path.insert(0, sys.argv[1]); import hermes_fixtures
print(hermes_fixtures.build_with_sessiondb(sys.argv[2]))' "$repo/tests/support" "$work/dbs/$version"
    fi
done

generator="$repo/../shared/tools/make_hermes_db.py"
if [ -f "$generator" ]; then
    out="$work/dbs/$plugin_version-make_hermes_db"
    if [ -f "$out/state.db" ] && [ "$out/state.db" -nt "$generator" ]; then
        say "$out/state.db is up to date"
    else
        say "run: $work/venv-$plugin_version/bin/python $generator $out"
        "$work/venv-$plugin_version/bin/python" "$generator" "$out" >/dev/null
    fi
else
    say "no $generator here; only the databases of tests/support/hermes_fixtures.py"
fi

venv="$work/venv-$plugin_version"
installed=$("$venv/bin/python" -c 'import importlib.metadata as m
try:
    print(m.distribution("xshare").read_text("direct_url.json") or "")
except m.PackageNotFoundError:
    print("")' 2>/dev/null || true)
if [[ "$installed" == *"file://$repo"* ]] && "$venv/bin/python" -c "import pytest" 2>/dev/null; then
    say "xshare (editable, $repo) and pytest already installed in $venv"
else
    run "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$repo" pytest
    touch "$venv/.xshare-installed"
fi
# the entry point comes from the installed metadata; refresh it when pyproject.toml changed since
if [ "$repo/pyproject.toml" -nt "$venv/.xshare-installed" ]; then
    run "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -e "$repo"
    touch "$venv/.xshare-installed"
fi

export XSHARE_TEST_HERMES_DBS="$work/dbs"
export XSHARE_TEST_HERMES_VENV="$venv"
run "$venv/bin/python" -m pytest -q -p no:cacheprovider --rootdir "$repo" \
    "$repo/tests/live/test_hermes_plugin.py" "$repo/tests/agents/hermes/test_reader.py::test_databases_written_by_hermes_sessiondb" \
    "$repo/tests/agents/hermes/test_realhost.py" "$repo/tests/agents/hermes/test_wire.py"
