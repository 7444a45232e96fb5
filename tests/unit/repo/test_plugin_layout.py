# -*- coding: utf-8 -*-
"""What the collection exposes: every filter documented under its own name (what ansible-doc shows), and no public
module_utils or plugin_utils file (they are the collection's internals, `_`-prefixed as in community.docker)."""

import ast
import importlib
import os

import yaml

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
FILTER_DIR = os.path.join(ROOT, "plugins", "filter")


def python_documentation(path):
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "DOCUMENTATION" for t in node.targets):
            return yaml.safe_load(node.value.value)
    return None


def filters_by_file():
    found = {}
    for name in sorted(os.listdir(FILTER_DIR)):
        if name.endswith(".py"):
            module = importlib.import_module("ansible_collections.aisbench.agent_runtime.plugins.filter." + name[:-3])
            found[name] = sorted(module.FilterModule().filters())
    return found


def test_every_filter_has_its_own_documentation():
    """ansible-doc reads a filter file's DOCUMENTATION for every filter in it and looks for NAME.yml only when the file
    has none: a file with several filters documents each in its own NAME.yml."""
    problems = []
    for source, names in filters_by_file().items():
        in_python = python_documentation(os.path.join(FILTER_DIR, source))
        if in_python is not None and (len(names) != 1 or in_python.get("name") != names[0]):
            problems.append("%s: DOCUMENTATION in the .py hides the docs of %s" % (source, ", ".join(names)))
            continue
        for name in names:
            if in_python is not None:
                continue
            path = os.path.join(FILTER_DIR, name + ".yml")
            if not os.path.isfile(path):
                problems.append("%s: filter %s has no %s.yml" % (source, name, name))
                continue
            with open(path, encoding="utf-8") as handle:
                doc = yaml.safe_load(handle)
            if (doc.get("DOCUMENTATION") or {}).get("name") != name or "RETURN" not in doc or "EXAMPLES" not in doc:
                problems.append("%s.yml: DOCUMENTATION.name, EXAMPLES and RETURN for %s" % (name, name))
    assert problems == []


def test_no_filter_doc_without_its_filter():
    names = set(name for names in filters_by_file().values() for name in names)
    orphans = sorted(name[:-4] for name in os.listdir(FILTER_DIR) if name.endswith(".yml") and name[:-4] not in names)
    assert orphans == []


def test_module_utils_and_plugin_utils_are_private():
    public = []
    for package in ("module_utils", "plugin_utils"):
        for name in sorted(os.listdir(os.path.join(ROOT, "plugins", package))):
            if name.endswith(".py") and not name.startswith("_"):
                public.append("plugins/%s/%s" % (package, name))
    assert public == []


def test_no_module_imports_plugin_utils():
    """plugin_utils is controller code: a module on a target cannot import it (module_utils may not either)."""
    offenders = []
    for package in ("modules", "module_utils"):
        directory = os.path.join(ROOT, "plugins", package)
        for name in sorted(os.listdir(directory)):
            if name.endswith(".py"):
                with open(os.path.join(directory, name), encoding="utf-8") as handle:
                    if "plugin_utils" in handle.read():
                        offenders.append("plugins/%s/%s" % (package, name))
    assert offenders == []
