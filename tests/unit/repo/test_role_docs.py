"""The variables tables in docs/roles/ are generated from meta/argument_specs.yml and must be current.
Its tests that start a process: tests/integration/scripts/test_role_docs_tool.py."""
import os

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))


def test_every_role_has_argument_specs_and_docs():
    roles = sorted(os.listdir(os.path.join(ROOT, "roles")))
    assert roles, "no roles found"
    for role in roles:
        assert os.path.exists(os.path.join(ROOT, "roles", role, "meta", "argument_specs.yml")), role
        assert os.path.exists(os.path.join(ROOT, "docs", "roles", "%s.md" % role)), role
