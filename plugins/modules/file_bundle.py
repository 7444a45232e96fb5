#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: file_bundle
short_description: Put a list of controller files into one directory on the target, in one transfer
version_added: 0.1.0
description:
  - The action plugin packs the files of O(src) into one uncompressed tar archive on the controller, sends it in one
    transfer and this module unpacks it into O(dest), each file under its own base name. M(ansible.builtin.copy) with
    a loop costs a stat, a transfer and a module run per file; this costs one transfer and one module run.
  - Every file is written next to its final place and renamed over it, so a file is never seen half-written. Files
    already in O(dest) with the same content are left alone (their mode is set to O(mode)).
  - For large files the caller already knows are missing (such as the offline .deb files of the
    M(aisbench.agent_runtime.docker_engine) role); it does not look at the target before sending.
author: aisbench maintainers (!UNKNOWN)
options:
  src:
    description: Files on the controller (relative paths are looked up like M(ansible.builtin.copy)'s C(src)). Their
      base names must differ.
    type: list
    elements: path
    required: true
  dest:
    description: Existing absolute directory on the target.
    type: path
    required: true
  mode:
    description: Mode of the files written.
    type: str
    default: "0644"
  archive:
    description: Internal, set by the action plugin (the transferred archive on the target).
    type: path
  digests:
    description: Internal, set by the action plugin in check mode (base name to SHA-256 of each file; nothing is sent).
    type: dict
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - aisbench.agent_runtime.attributes
attributes:
  check_mode:
    details: Nothing is transferred; the files' digests are compared with O(dest), and RV(written) and C(changed) say
      which files a real run would write (content or mode differs).
"""

EXAMPLES = r"""
- name: Send the missing packages in one transfer
  aisbench.agent_runtime.file_bundle:
    src: [/srv/debs/docker.io_26.1.5+dfsg1-9+b9_amd64.deb, /srv/debs/containerd_1.7.24~ds1-6+b4_amd64.deb]
    dest: /var/cache/aisbench/docker-debs
"""

RETURN = r"""
files:
  description: Base names of the files written or already in place.
  returned: success
  type: list
  elements: str
written:
  description: Base names of the files whose content or mode changed (in check mode, would change).
  returned: success
  type: list
  elements: str
sent_bytes:
  description: Size of the archive sent (set by the action plugin).
  returned: success, not in check mode
  type: int
"""

import hashlib
import os
import tarfile

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._atomic_file import atomic_write


def _digest(stream):
    digest = hashlib.sha256()
    for block in iter(lambda: stream.read(1 << 20), b""):
        digest.update(block)
    return digest.hexdigest()


def in_place(target, wanted, mode):
    """None when target is missing or holds other content, else whether its mode is already mode."""
    if not os.path.isfile(target):
        return None
    with open(target, "rb") as handle:
        if _digest(handle) != wanted:
            return None
    return (os.stat(target).st_mode & 0o7777) == mode


def unpack(archive, dest, mode):
    """Write every regular file of archive into dest under its base name; returns (files, written)."""
    files, written = [], []
    with tarfile.open(archive, "r:") as bundle:
        for member in bundle:
            name = member.name
            if not member.isfile() or "/" in name or name in ("", ".", ".."):
                raise ValueError("unexpected archive member %r" % name)
            target = os.path.join(dest, name)
            files.append(name)
            state = in_place(target, _digest(bundle.extractfile(member)), mode)
            if state is None:
                atomic_write(target, bundle.extractfile(member), mode)
                written.append(name)
            elif not state:
                os.chmod(target, mode)
                written.append(name)
    return files, written


def would_write(digests, names, dest, mode):
    """Check mode: (files, the files unpack would write) from the files' digests, reading dest only."""
    return names, [name for name in names if not in_place(os.path.join(dest, name), digests[name], mode)]


def main():
    module = AnsibleModule(
        argument_spec=dict(
            src=dict(type="list", elements="path", required=True),
            dest=dict(type="path", required=True),
            mode=dict(type="str", default="0644"),
            archive=dict(type="path"),
            digests=dict(type="dict"),
        ),
        supports_check_mode=True,
    )
    params = module.params
    wanted = "digests" if module.check_mode else "archive"
    if not params[wanted]:
        module.fail_json(msg="file_bundle runs through its action plugin (%s is missing)" % wanted)
    try:
        mode = int(params["mode"], 8)
    except ValueError:
        module.fail_json(msg="mode=%s is not an octal mode" % params["mode"])
    # In check mode dest may be a directory an earlier task of the run would have made: every file would be written.
    if module.check_mode:
        names = [os.path.basename(path) for path in params["src"]]
        files, written = would_write(params["digests"], names, params["dest"], mode)
        module.exit_json(changed=bool(written), files=files, written=written)
    if not os.path.isdir(params["dest"]):
        module.fail_json(msg="dest=%s is not a directory on the target" % params["dest"])
    try:
        files, written = unpack(params["archive"], params["dest"], mode)
    except (OSError, ValueError, tarfile.TarError) as exc:
        module.fail_json(msg="file_bundle: cannot unpack into %s: %s" % (params["dest"], exc))
    finally:
        try:
            os.unlink(params["archive"])
        except OSError:
            pass
    module.exit_json(changed=bool(written), files=files, written=written)


if __name__ == "__main__":
    main()
