#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: binfmt_info
short_description: List binfmt_misc handlers, find the ones that take over native executables, and prove emulation works
version_added: 0.1.0
description:
  - Lists the kernel's binfmt_misc handlers and reports the enabled ones that match executables the host runs
    natively (a tiny static probe executable of each native architecture, and C(/bin/sh)); such a handler routes
    the host's own programs through an emulator.
  - With O(probe), writes a tiny static ELF executable per architecture (no libc, about 200 bytes) to a
    temporary directory, executes it and checks its output, which proves the kernel runs that architecture
    (natively or through a handler). The native probe always runs when O(probe_native=true).
  - Changes nothing on the host; the temporary directory is removed.
author: aisbench maintainers (!UNKNOWN)
options:
  probe:
    description: Architectures whose probe executable to run (any spelling C(aisbench.agent_runtime.qemu_arch) accepts).
    type: list
    elements: str
    default: []
  probe_native:
    description: Also run the probe of the host's own architecture.
    type: bool
    default: true
  probe_dir:
    description: Directory for the temporary probe files; it must allow execution (not C(noexec)).
    type: path
    default: /var/tmp
  timeout:
    description: Seconds a probe may run.
    type: int
    default: 30
  host_arch:
    description:
      - What the caller believes the host's architecture is (for example C(ansible_architecture)). The native
        architectures come from the running kernel (C(uname -m) and the ELF header of C(/bin/sh)); when the kernel
        does not run this one natively the module fails naming both values.
    type: str
  proc_dir:
    description: Mount point of the binfmt_misc file system. When nothing is mounted there, RV(handlers) is empty.
    type: path
    default: /proc/sys/fs/binfmt_misc
  mount:
    description:
      - When nothing is mounted at O(proc_dir), mount binfmt_misc to read the handlers and unmount it again.
    type: bool
    default: false
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - aisbench.agent_runtime.attributes
"""

EXAMPLES = r"""
- name: Prove arm64 and armhf executables run, and that native ones still run natively
  aisbench.agent_runtime.binfmt_info:
    probe: [aarch64, arm]
  register: binfmt

- name: Fail on a handler that would take over native executables
  ansible.builtin.assert:
    that: binfmt.hijackers | length == 0
    fail_msg: "{{ binfmt.hijackers }}"
"""

RETURN = r"""
mounted:
  description: Whether binfmt_misc was mounted at O(proc_dir) (before a mount made by O(mount)).
  returned: always
  type: bool
kernel:
  description: How the running kernel was identified (its C(uname -m) and its own C(/bin/sh)).
  returned: always
  type: dict
host_arch:
  description: Canonical name of the protected architecture.
  returned: always
  type: str
  sample: x86_64
native_arches:
  description: Architectures the host runs natively.
  returned: always
  type: list
  elements: str
  sample: [x86_64, i386]
handlers:
  description: Every handler the kernel lists, by name.
  returned: always
  type: dict
  sample: {"qemu-aarch64": {"enabled": true, "type": "magic", "interpreter": "/usr/bin/qemu-aarch64-static",
           "flags": "F", "offset": 0, "magic": "7f454c46...", "mask": "ffffffff...", "rule": ":qemu-aarch64:M:0:..."}}
hijackers:
  description: Enabled handlers matching native executables, with what each matched.
  returned: always
  type: list
  elements: dict
  sample: [{"name": "qemu-x86_64", "interpreter": "/usr/bin/qemu-x86_64-static", "matches": ["probe:x86_64", "/bin/sh"]}]
probes:
  description: One result per probed architecture (the native one included).
  returned: always
  type: dict
  sample: {"aarch64": {"ok": true, "rc": 0, "stdout": "aisbench-binfmt-probe aarch64 ok\n", "stderr": "",
           "expected": "aisbench-binfmt-probe aarch64 ok\n", "handlers": ["qemu-aarch64"], "native": false}}
failed_probes:
  description: Architectures whose probe did not print the expected line.
  returned: always
  type: list
  elements: str
"""

import os
import shutil
import subprocess
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_text
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._arch import UnknownArchError, qemu_arch
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._binfmt import (
    BinfmtError,
    build_probe,
    check_declared_arch,
    hijackers,
    is_mounted,
    probe_message,
    read_entries,
    running_kernel,
)


def run_probe(directory, arch, entries, native, timeout):
    data = build_probe(arch)
    path = os.path.join(directory, "probe-" + arch)
    with open(path, "wb") as handle:
        handle.write(data)
    os.chmod(path, 0o755)
    expected = probe_message(arch)
    result = {
        "expected": to_text(expected),
        "native": native,
        "handlers": sorted(name for name, entry in entries.items() if entry.enabled and entry.matches(data)),
    }
    # Not module.run_command: it has no timeout, and a probe under a broken emulator can hang. subprocess.run kills
    # the probe when the timeout expires.
    try:
        try:
            proc = subprocess.run([path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=directory, timeout=timeout,
                                  check=False)
            rc, out, err = proc.returncode, proc.stdout, proc.stderr
        except subprocess.TimeoutExpired as exc:
            rc, out, err = -9, exc.stdout or b"", (exc.stderr or b"") + b"\n(timed out after %d s)" % timeout
        result.update(rc=rc, stdout=to_text(out, errors="replace"), stderr=to_text(err, errors="replace"))
        result["ok"] = rc == 0 and out == expected
    except OSError as exc:
        # ENOEXEC: no handler for this architecture; EACCES: probe_dir is mounted noexec.
        result.update(rc=None, stdout="", stderr="exec failed: %s" % exc, ok=False)
    return result


def main():
    module = AnsibleModule(
        argument_spec=dict(
            probe=dict(type="list", elements="str", default=[]),
            probe_native=dict(type="bool", default=True),
            probe_dir=dict(type="path", default="/var/tmp"),
            timeout=dict(type="int", default=30),
            host_arch=dict(type="str"),
            proc_dir=dict(type="path", default="/proc/sys/fs/binfmt_misc"),
            mount=dict(type="bool", default=False),
        ),
        supports_check_mode=True,
    )
    params = module.params
    try:
        kernel = running_kernel()
        check_declared_arch(params["host_arch"], kernel)
    except BinfmtError as exc:
        module.fail_json(msg=str(exc))
    try:
        probe = [qemu_arch(arch) for arch in params["probe"]]
    except UnknownArchError as exc:
        module.fail_json(msg="probe: %s" % exc)
    host = kernel["arch"]
    native = kernel["native"]
    if params["probe_native"] and host not in probe:
        probe.insert(0, host)

    mounted = is_mounted(params["proc_dir"])
    entries = {}
    if mounted:
        entries = read_entries(params["proc_dir"])
    elif params["mount"]:
        # Only to read: a container sharing the host's kernel must not stay mounted (systemd-shutdown
        # unregisters every handler when binfmt_misc is mounted at shutdown).
        rc, out, err = module.run_command(["mount", "-t", "binfmt_misc", "binfmt_misc", params["proc_dir"]])
        if rc != 0:
            module.fail_json(msg="mounting binfmt_misc at %s failed (rc=%d): %s" % (params["proc_dir"], rc, (err or out).strip()))
        try:
            entries = read_entries(params["proc_dir"])
        finally:
            module.run_command(["umount", params["proc_dir"]])
    result = dict(
        changed=False,
        mounted=mounted,
        host_arch=host,
        native_arches=list(native),
        handlers=dict((name, entry.to_dict()) for name, entry in entries.items()),
        kernel=kernel,
        hijackers=hijackers(entries, native),
        probes={},
    )
    if probe:
        if not os.path.isdir(params["probe_dir"]):
            module.fail_json(msg="probe_dir %s does not exist" % params["probe_dir"], **result)
        directory = tempfile.mkdtemp(prefix="aisbench-binfmt-probe-", dir=params["probe_dir"])
        try:
            for arch in dict.fromkeys(probe):
                result["probes"][arch] = run_probe(directory, arch, entries, arch in native, params["timeout"])
        finally:
            shutil.rmtree(directory, ignore_errors=True)
    result["failed_probes"] = sorted(arch for arch, item in result["probes"].items() if not item["ok"])
    module.exit_json(**result)


if __name__ == "__main__":
    main()
