"""tests/unit and tests/integration: `ansible_collections.aisbench.agent_runtime` importable from this checkout, and in
CI (CI=true) a skip fails unless it is on the allow-list (ci_skip_policy.py)."""
import os
import sys

TESTS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TESTS)
COLLECTIONS = os.path.join(ROOT, ".cache", "collections")
LINK = os.path.join(COLLECTIONS, "ansible_collections", "aisbench", "agent_runtime")

if not os.path.islink(LINK) and not os.path.isdir(LINK):
    os.makedirs(os.path.dirname(LINK), exist_ok=True)
    os.symlink(ROOT, LINK)
if COLLECTIONS not in sys.path:
    sys.path.insert(0, COLLECTIONS)
sys.path.insert(0, TESTS)

# pytest finds hooks by name in a conftest module.
from ci_skip_policy import pytest_runtest_makereport, pytest_terminal_summary  # noqa: E402,F401  pylint: disable=wrong-import-position,unused-import
