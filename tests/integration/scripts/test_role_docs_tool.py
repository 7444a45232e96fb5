"""The variables tables in docs/roles/ are generated from meta/argument_specs.yml and must be current.
Its pure tests: tests/unit/repo/test_role_docs.py."""
import os
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))


def test_role_docs_match_argument_specs():
    result = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "role_docs.py"), "--check"],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
