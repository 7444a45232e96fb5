"""The variables tables in docs/roles/ are generated from meta/argument_specs.yml and must be current."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_role_docs_match_argument_specs():
    result = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "role_docs.py"), "--check"],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_role_has_argument_specs_and_docs():
    roles = sorted(os.listdir(os.path.join(ROOT, "roles")))
    assert roles, "no roles found"
    for role in roles:
        assert os.path.exists(os.path.join(ROOT, "roles", role, "meta", "argument_specs.yml")), role
        assert os.path.exists(os.path.join(ROOT, "docs", "roles", "%s.md" % role)), role
