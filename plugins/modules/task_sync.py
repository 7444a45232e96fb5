#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""Target side of task_sync (the action plugin of the same name does the controller's part)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: task_sync
short_description: Put a directory of tasks on the target in one transfer, and only when its content changed
version_added: 0.2.0
description:
  - Makes O(dest) on the target hold exactly the content of O(src) on the controller (files, directories, modes;
    symlinks in O(src) are followed, as M(ansible.builtin.copy) does; files that are not in O(src) go).
  - The controller hashes O(src) (paths, modes, contents) into one digest. The target keeps the digest of the last
    sync beside O(dest) (C(.<name>.task-sync.json)). With equal digests nothing is sent and the task reports C(ok) after one
    round trip. Otherwise O(src) travels as one gzip'd tar, is unpacked next to O(dest), checked against the
    digest, and replaces O(dest) by two renames (a half-written tree is never in place).
  - Works over any connection (SSH, C(community.docker.docker), local); thousands of small files cost one transfer
    instead of one round trip each.
  - A O(dest) without a record (e.g. copied by an earlier release with M(ansible.builtin.copy)) is hashed on the
    target once; if it already matches, only the record is written and nothing is sent.
  - Runs as an action plugin; the module does the target's part.
options:
  src:
    description: Directory on the controller (relative paths are looked up like M(ansible.builtin.copy)'s C(src)).
    type: path
    required: true
  dest:
    description: Absolute directory on the target; its parent is created when missing (mode 0755).
    type: path
    required: true
  digest:
    description: Internal, set by the action plugin.
    type: str
  archive:
    description: Internal, set by the action plugin (the transferred archive on the target).
    type: path
  want_manifest:
    description: Internal, set by the action plugin (return the recorded manifest, for C(--diff)).
    type: bool
    default: false
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - aisbench.agent_runtime.attributes
attributes:
  check_mode:
    details: Reports whether the content would be sent; nothing is transferred.
  diff_mode:
    support: full
    details: Lists the added, changed and removed paths.
author: aisbench maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: Put the night's tasks on the host (one transfer, nothing when unchanged)
  aisbench.agent_runtime.task_sync:
    src: /srv/aisbench/tasks/swebench-verified
    dest: /opt/swebench/tasks/swebench-verified
"""

RETURN = r"""
digest:
  description: sha256 of the content now at dest (paths, kinds, modes, file contents).
  returned: success
  type: str
previous_digest:
  description: What dest held before (empty when it was missing).
  returned: success
  type: str
files:
  description: Files and directories in the synced tree.
  returned: success
  type: int
sent_bytes:
  description: Size of the archive sent (0 when nothing was sent).
  returned: success
  type: int
"""

import os
import shutil
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _task_sync as ts


def _fail(module, msg, **extra):
    module.fail_json(msg="task_sync: %s" % msg, **extra)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            src=dict(type="path", required=True),
            dest=dict(type="path", required=True),
            digest=dict(type="str"),
            archive=dict(type="path"),
            want_manifest=dict(type="bool", default=False),
        ),
        supports_check_mode=True,
    )
    dest = module.params["dest"].rstrip("/") or "/"
    wanted = module.params["digest"]
    if not os.path.isabs(dest) or dest == "/" or ".." in dest.split("/"):
        _fail(module, "dest=%s must be an absolute directory path without '..' (not /)" % module.params["dest"])
    if not wanted:
        _fail(module, "run it as a task: the action plugin computes the digest on the controller")
    if os.path.lexists(dest) and not os.path.isdir(dest):
        _fail(module, "dest=%s exists and is not a directory; nothing was changed" % dest)

    marker = ts.read_marker(dest)
    result = dict(changed=False, dest=dest, digest=wanted, sent_bytes=0)
    if marker is None and os.path.isdir(dest):
        # No record yet: what is there may already be the content (an earlier copy).
        try:
            present = ts.tree_manifest(dest)
        except ts.SyncError:
            present = None
        if present is not None:
            marker = {"digest": ts.manifest_digest(present), "manifest": present}
            if marker["digest"] == wanted and not module.check_mode:
                ts.write_marker(dest, wanted, present)
    current = marker["digest"] if marker and os.path.isdir(dest) else ""
    result["previous_digest"] = current
    if current == wanted:
        result["files"] = len(marker.get("manifest") or {})
        module.exit_json(**result)

    archive = module.params["archive"]
    if archive is None:
        # Tell the controller to send the content (or, in check mode, that it would).
        result.update(changed=True, needs_archive=True)
        if module.params["want_manifest"]:
            result["previous_manifest"] = (marker or {}).get("manifest") or {}
        module.exit_json(**result)

    parent = os.path.dirname(dest)
    if not os.path.isdir(parent):
        os.makedirs(parent, 0o755)
    staging = tempfile.mkdtemp(prefix="." + os.path.basename(dest) + ".task-sync-new.", dir=parent)
    new_tree = os.path.join(staging, "tree")
    try:
        ts.unpack(archive, new_tree)
        unpacked = ts.tree_manifest(new_tree)
        if ts.manifest_digest(unpacked) != wanted:
            raise ts.SyncError("the unpacked tree does not match the controller's digest (changed during the sync?)")
        os.chmod(new_tree, 0o755)
        ts.swap_into_place(new_tree, dest)
        ts.write_marker(dest, wanted, unpacked)
    except (ts.SyncError, OSError, IOError) as exc:
        _fail(module, "%s; %s was left as it was" % (exc, dest))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    result.update(changed=True, files=len(unpacked), sent_bytes=os.path.getsize(archive))
    module.exit_json(**result)


if __name__ == "__main__":
    main()
