# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""Controller side of task_sync: hash the source tree, ask the target what it holds, send one archive if needed.

Round trips: one when the target already holds the content; otherwise one more transfer and one more module run.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import tempfile

from ansible.errors import AnsibleError
from ansible.module_utils.common.text.converters import to_text
from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _task_sync as ts
from ansible_collections.aisbench.agent_runtime.plugins.plugin_utils._action import CollectionAction

MODULE = "aisbench.agent_runtime.task_sync"


class ActionModule(CollectionAction):
    NAME = "task_sync"
    TRANSFERS_FILES = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        args = dict(self._task.args)
        unknown = self._unknown_options(args, ["src", "dest"])
        if unknown:
            return self._fail(result, unknown)
        src, dest = args.get("src"), args.get("dest")
        if not src or not isinstance(src, str):
            return self._fail(result, "src is required: a directory on the controller")
        if not dest or not isinstance(dest, str) or not dest.startswith("/") or ".." in dest.split("/") \
                or dest.rstrip("/") == "":
            return self._fail(result, "dest=%s must be an absolute directory path on the target without '..' (not /)"
                              % dest)
        try:
            source = self._find_needle("files", src)
        except AnsibleError:
            source = src
        if not os.path.isdir(source):
            return self._fail(result, "src=%s is not a directory on the controller" % src)
        try:
            manifest = ts.tree_manifest(source)
        except ts.SyncError as exc:
            return self._fail(result, "src=%s: %s" % (src, exc))
        digest = ts.manifest_digest(manifest)
        module_args = {"src": source, "dest": dest, "digest": digest, "want_manifest": bool(self._play_context.diff)}
        local_dir = None
        try:
            probe = self._execute_module(module_name=MODULE, module_args=module_args, task_vars=task_vars)
            if probe.get("failed") or not probe.get("needs_archive"):
                result.update(probe)
                return result
            changes = ts.manifest_changes(probe.get("previous_manifest"), manifest)
            if self._play_context.diff:
                result["diff"] = self._diff(dest, probe.get("previous_manifest"), manifest, changes)
            result.update(changes={key: len(value) for key, value in changes.items()})
            if self._task.check_mode:
                probe.pop("previous_manifest", None)
                probe.pop("needs_archive", None)
                result.update(probe, changed=True, files=len(manifest))
                return result
            local_dir = tempfile.mkdtemp(prefix="aisbench-task-sync-")
            archive = os.path.join(local_dir, "tasks.tar.gz")
            ts.write_archive(source, manifest, archive)
            remote_archive = self._send_file(archive, "tasks.tar.gz")
            module_args.update(archive=remote_archive, want_manifest=False)
            applied = self._execute_module(module_name=MODULE, module_args=module_args, task_vars=task_vars)
            result.update(applied)
            return result
        except ts.SyncError as exc:
            return self._fail(result, to_text(exc))
        finally:
            self._clean_up(local_dir)

    @staticmethod
    def _diff(dest, before, after, changes):
        lines_before = ["%s %s" % (path, (before or {})[path][2][:12] or "dir") for path in sorted(before or {})]
        lines_after = ["%s %s" % (path, after[path][2][:12] or "dir") for path in sorted(after)]
        return {"before_header": "%s (%d entries)" % (dest, len(before or {})),
                "after_header": "%s (%d added, %d changed, %d removed)" % (
                    dest, len(changes["added"]), len(changes["changed"]), len(changes["removed"])),
                "before": "\n".join(lines_before) + "\n", "after": "\n".join(lines_after) + "\n"}
