"""tests/unit and tests/integration: in CI (CI=true) a skip fails unless it is on the allow-list (ci_skip_policy.py)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# pytest finds hooks by name in a conftest module.
from ci_skip_policy import pytest_runtest_makereport, pytest_terminal_summary  # noqa: E402,F401  pylint: disable=wrong-import-position,unused-import
