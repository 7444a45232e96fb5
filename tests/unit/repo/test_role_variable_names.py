"""One convention for the variables a role sets itself (set_fact, register): `_<role>_...` is private to the
role; an unprefixed `<role>_...` is an output others read, so it is named in the role's documentation."""

import pathlib
import re

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[3]
ROLES = sorted(path.parent.name for path in ROOT.glob("roles/*/tasks"))


def set_names(tasks):
    """The names a list of tasks sets with set_fact or register, blocks included."""
    for task in tasks or []:
        if not isinstance(task, dict):
            continue
        for key in ("block", "rescue", "always"):
            yield from set_names(task.get(key))
        if "register" in task:
            yield task["register"]
        facts = task.get("ansible.builtin.set_fact")
        if isinstance(facts, dict):
            yield from (name for name in facts if name != "cacheable")


def role_set_names(role):
    names = set()
    for path in sorted((ROOT / "roles" / role).glob("*/*.yml")):
        if path.parent.name in ("tasks", "handlers"):
            names.update(set_names(yaml.safe_load(path.read_text())))
    return names


def role_vars_names(role):
    path = ROOT / "roles" / role / "vars" / "main.yml"
    return set(yaml.safe_load(path.read_text()) or {}) if path.exists() else set()


def test_the_roles_are_found():
    assert {"docker_engine", "runtime_container", "baked_images", "preflight"} <= set(ROLES)
    assert "_runtime_container_contract" in role_set_names("runtime_container")


@pytest.mark.parametrize("role", ROLES)
def test_no_double_underscore_names(role):
    doubled = sorted(name for name in role_set_names(role) | role_vars_names(role) if name.startswith("__"))
    assert doubled == [], "%s: private names are _%s_..., not __...: %s" % (role, role, doubled)


@pytest.mark.parametrize("role", ROLES)
def test_unprefixed_names_a_role_sets_are_documented_outputs(role):
    docs = ""
    for path in (ROOT / "docs" / "roles" / ("%s.md" % role), ROOT / "roles" / role / "README.md"):
        if path.exists():
            docs += path.read_text()
    undocumented = sorted(name for name in role_set_names(role)
                          if not name.startswith("_") and not re.search(r"\b%s\b" % re.escape(name), docs))
    assert undocumented == [], (
        "%s sets %s without a leading underscore but its docs do not name them: prefix them _%s_ (private) or "
        "document them as outputs in docs/roles/%s.md" % (role, undocumented, role, role))
