# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""Controller side of file_bundle: pack the files into one tar archive, send it once, unpack it on the target.

Round trips: one transfer and one module run, whatever the number of files. Check mode sends no file: the module
compares the files' SHA-256 digests with what dest holds.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import os
import tarfile
import tempfile

from ansible.errors import AnsibleError
from ansible_collections.aisbench.agent_runtime.plugins.plugin_utils._action import CollectionAction

MODULE = "aisbench.agent_runtime.file_bundle"


def file_digest(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class ActionModule(CollectionAction):
    NAME = "file_bundle"
    TRANSFERS_FILES = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        args = dict(self._task.args)
        unknown = self._unknown_options(args, ["src", "dest", "mode"])
        if unknown:
            return self._fail(result, unknown)
        sources, dest = args.get("src"), args.get("dest")
        if not isinstance(sources, list) or not sources or not all(isinstance(src, str) and src for src in sources):
            return self._fail(result, "src must be a non-empty list of files on the controller")
        if not isinstance(dest, str) or not dest.startswith("/"):
            return self._fail(result, "dest=%s must be an absolute directory path on the target" % dest)
        found = []
        for src in sources:
            try:
                path = self._find_needle("files", src)
            except AnsibleError:
                path = src
            if not os.path.isfile(path):
                return self._fail(result, "src %s is not a file on the controller" % src)
            found.append(path)
        names = [os.path.basename(path) for path in found]
        if len(set(names)) != len(names):
            return self._fail(result, "the base names in src repeat: %s" % ", ".join(sorted(
                {name for name in names if names.count(name) > 1})))
        if self._task.check_mode:
            # Nothing is sent: the module compares the files' digests with dest and says which it would write.
            digests = dict(zip(names, [file_digest(path) for path in found]))
            module_args = dict(args, src=found, digests=digests)
            result.update(self._execute_module(module_name=MODULE, module_args=module_args, task_vars=task_vars))
            return result
        local_dir = tempfile.mkdtemp(prefix="aisbench-file-bundle-")
        try:
            archive = os.path.join(local_dir, "bundle.tar")
            # Uncompressed: .deb files and images are compressed already.
            with tarfile.open(archive, "w:", dereference=True) as bundle:
                for path, name in zip(found, names):
                    bundle.add(path, arcname=name, recursive=False)
            remote_archive = self._send_file(archive, "bundle.tar")
            module_args = dict(args, src=found, archive=remote_archive)
            result.update(self._execute_module(module_name=MODULE, module_args=module_args, task_vars=task_vars))
            result["sent_bytes"] = os.path.getsize(archive)
            return result
        finally:
            self._clean_up(local_dir)
