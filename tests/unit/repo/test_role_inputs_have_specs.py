"""Every `<role>_...` variable a role reads is an input in its meta/argument_specs.yml (so validated and in
docs/roles/), unless the role sets it itself (set_fact, register, vars:, loop_var), it names a plugin, or it is a YAML anchor."""

import pathlib
import re

import pytest
import yaml

from test_role_variable_names import ROLES, role_set_names, role_vars_names

ROOT = pathlib.Path(__file__).resolve().parents[3]
PLUGIN_NAMES = {path.stem for kind in ("filter", "test") for path in (ROOT / "plugins" / kind).glob("*.yml")}


def local_names(node):
    """Names a task list defines for its own tasks: `vars:` keys and loop variables, blocks included."""
    if isinstance(node, list):
        for item in node:
            yield from local_names(item)
    elif isinstance(node, dict):
        if isinstance(node.get("vars"), dict):
            yield from node["vars"]
        loop_var = (node.get("loop_control") or {}).get("loop_var") if isinstance(node.get("loop_control"), dict) else None
        if loop_var:
            yield loop_var
        for key in ("block", "rescue", "always"):
            yield from local_names(node.get(key))


def role_inputs(role):
    specs = yaml.safe_load((ROOT / "roles" / role / "meta" / "argument_specs.yml").read_text())["argument_specs"]
    return {name for entry in specs.values() for name in (entry.get("options") or {})}


def role_reads(role):
    """(name, file) for every `<role>_...` name in the role's tasks, handlers, defaults, vars and templates."""
    for path in sorted((ROOT / "roles" / role).glob("*/*")):
        if path.parent.name in ("tasks", "handlers", "defaults", "vars", "templates") and path.is_file():
            for name in re.findall(r"(?<![\w.&*])(%s_\w+)" % re.escape(role), path.read_text()):
                yield name, path.relative_to(ROOT)


def test_the_check_sees_the_night_role():
    assert "aisbench_nightly" in ROLES
    assert {"aisbench_nightly_night", "aisbench_nightly_model_gateway_key_name"} <= role_inputs("aisbench_nightly")


@pytest.mark.parametrize("role", ROLES)
def test_every_input_a_role_reads_has_a_spec(role):
    own = set(role_set_names(role)) | role_vars_names(role) | PLUGIN_NAMES
    for path in sorted((ROOT / "roles" / role).glob("*/*.yml")):
        if path.parent.name in ("tasks", "handlers"):
            own.update(local_names(yaml.safe_load(path.read_text())))
    inputs = role_inputs(role)
    unspecified = sorted({"%s (%s)" % (name, where) for name, where in role_reads(role) if name not in inputs | own})
    assert unspecified == [], "%s reads variables its argument specs do not list: %s" % (role, unspecified)


@pytest.mark.parametrize("role", ROLES)
def test_every_default_is_a_specified_input(role):
    path = ROOT / "roles" / role / "defaults" / "main.yml"
    defaults = set(yaml.safe_load(path.read_text()) or {}) if path.exists() else set()
    assert sorted(defaults - role_inputs(role)) == []
