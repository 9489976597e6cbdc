#!/usr/bin/env bash
# The suite as a fresh machine runs it (issue 8, section 1): this checkout's tracked files, with their
# current content, copied into an empty temporary folder (no ../shared beside it, no .venv, no caches),
# installed NOT editable into a new virtual environment (so the tests use what a wheel carries, the
# packaged vocabulary included), then pytest with the network cut off: in a network namespace of its own
# (unshare -n) where this machine allows one, else with every proxy pointing at a closed port.
# Extra arguments go to pytest. Tests that drive real hosts (-m realhost) and those that build the plugin's
# environment with pip (XSHARE_TEST_OFFLINE=1: they need a package index) are left to the main run.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/xshare-fresh.XXXXXX")
cleanup() {
    case "$work" in */xshare-fresh.??????) rm -rf -- "$work" ;; esac  # only the folder mktemp made
}
trap cleanup EXIT
say() { echo "fresh-clone.sh: $*"; }
started=$SECONDS

# tracked files with their working-tree content (a stash commit; HEAD when nothing changed), untracked ones never
snapshot=$(git -C "$repo" stash create)
mkdir "$work/xshare"
git -C "$repo" archive "${snapshot:-HEAD}" | tar -x -C "$work/xshare"
say "copied $(git -C "$repo" ls-files | wc -l) tracked files to $work/xshare; nothing beside it"

"$python" -m venv "$work/venv"
# first the README's Quickstart install, `pip install .` with no extras: it has fastokens wherever fastokens has a
# wheel (its marker holds), and a report says which counter counted its texts (issue 34); the test extras after it
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check "$work/xshare"
"$work/venv/bin/python" - <<'EOF'
import importlib.metadata
import importlib.util
import sys

from pip._vendor.packaging.requirements import Requirement

fast = [Requirement(line) for line in importlib.metadata.requires("xshare") or () if line.startswith("fastokens")]
wanted = any(item.marker is None or item.marker.evaluate({"extra": ""}) for item in fast)
if not fast or wanted != (importlib.util.find_spec("fastokens") is not None):
    sys.exit(f"fresh-clone.sh: pip install . {'left out' if wanted else 'installed'} fastokens, its marker "
             f"{'holds' if wanted else 'does not hold'} here")
print(f"fresh-clone.sh: pip install . {'installed fastokens' if wanted else 'left fastokens out (no wheel here)'}")
EOF
counted=$(cd "$work" && XSHARE_HOME="$work/state" "$work/venv/bin/xshare" report --demo 2>/dev/null | grep '^Tokenizer: ' || true)
case "$counted" in
    "Tokenizer: o200k_base, counted by "*) say "a report on the demo says which counter counted: $counted" ;;
    *) say "a report on the demo does not say which counter counted: ${counted:-no Tokenizer line}"; exit 1 ;;
esac
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check "$work/xshare[test]"
say "installed into a fresh venv in $((SECONDS - started)) s"

cut_network=()
if unshare -n true 2>/dev/null; then
    # a machine with no network still has its loopback (tests run local servers on 127.0.0.1): bring it up
    # in the new namespace where `ip` can, and nothing else
    cut_network=(unshare -n sh -c 'ip link set lo up 2>/dev/null; exec "$@"' sh)
    say "pytest runs in a network namespace with only the loopback up"
else
    say "no network namespace here: proxies point at a closed port instead"
fi
closed=http://127.0.0.1:9
cd "$work"  # not inside the copy: `import xshare` must find the installed package, not the source folder
env -u XSHARE_VOCAB -u XSHARE_TEST_HERMES_DBS -u PYTHONPATH TIKTOKEN_CACHE_DIR="$work/no-tiktoken-cache" XSHARE_TEST_OFFLINE=1 \
    http_proxy=$closed https_proxy=$closed HTTP_PROXY=$closed HTTPS_PROXY=$closed ALL_PROXY=$closed no_proxy= \
    "${cut_network[@]}" "$work/venv/bin/python" -m pytest -q -p no:cacheprovider -m "not realhost" \
    "$work/xshare/tests" "$@"
say "passed in $((SECONDS - started)) s"
