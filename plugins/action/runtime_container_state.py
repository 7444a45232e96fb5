# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""Controller side of runtime_container_state: the SHA-1 of what each file entry with a src would write (a controller
file, or every file of a controller directory tree as ansible.builtin.copy's src=DIR/ writes them), so that the
module's one read says which writes would change something. Rendered content comes with its sha1 from the role (the
content itself, which may be a secret, never reaches this task)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import os

from ansible.errors import AnsibleError
from ansible_collections.aisbench.agent_runtime.plugins.plugin_utils._action import CollectionAction

MODULE = "aisbench.agent_runtime.runtime_container_state"
KNOWN = ["docker_host", "container", "image", "data_container", "socket", "dirs", "files"]


def sha1_of_file(path):
    digest = hashlib.sha1()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def tree_entries(entry, root):
    """ansible.builtin.copy's src=DIR/ dest=DEST/: every file under root, at the same relative path under dest."""
    out = []
    for folder, subdirs, names in os.walk(root, followlinks=True):
        subdirs.sort()
        for name in sorted(names):
            path = os.path.join(folder, name)
            out.append(dict(entry, dest=os.path.join(entry["dest"], os.path.relpath(path, root)), sha1=sha1_of_file(path)))
    return out


class ActionModule(CollectionAction):
    NAME = "runtime_container_state"

    def _expand(self, entry):
        entry = dict(entry)
        src = entry.pop("src", None)
        if src is None:
            return [entry]
        try:
            path = self._find_needle("files", src)
        except AnsibleError:
            path = src
        if os.path.isdir(path):
            return tree_entries(entry, path)
        if not os.path.isfile(path):
            raise ValueError("src %s of %s is not a file or directory on the controller" % (src, entry.get("key")))
        return [dict(entry, sha1=sha1_of_file(path))]

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        args = dict(self._task.args)
        unknown = self._unknown_options(args, KNOWN)
        if unknown:
            return self._fail(result, unknown)
        files = args.get("files") or []
        if not isinstance(files, list) or not all(isinstance(entry, dict) and entry.get("key") and entry.get("dest")
                                                  for entry in files):
            return self._fail(result, "files must be a list of mappings with key and dest")
        try:
            args["files"] = [expanded for entry in files for expanded in self._expand(entry)]
        except ValueError as exc:
            return self._fail(result, str(exc))
        result.update(self._execute_module(module_name=MODULE, module_args=args, task_vars=task_vars))
        self._remove_tmp_path(self._connection._shell.tmpdir)
        return result
