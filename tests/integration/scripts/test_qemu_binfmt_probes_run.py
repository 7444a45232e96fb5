# -*- coding: utf-8 -*-
"""Probe executables: each is run for real, natively or under qemu-<arch>-static directly (no binfmt_misc).
Its pure tests: tests/unit/plugins/module_utils/test_qemu_binfmt_probes.py."""

import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, ".cache", "collections"))

from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _arch as arch, _binfmt as binfmt  # noqa: E402

HOST = arch.qemu_arch(os.uname()[4])


def emulator(name):
    for candidate in ("qemu-%s-static" % name, "qemu-%s" % name):
        path = shutil.which(candidate)
        if path:
            return path
    return None


@pytest.fixture
def exec_dir(tmp_path):
    # /tmp may be mounted noexec (containers); the checkout's .cache is used then.
    if not os.statvfs(str(tmp_path)).f_flag & os.ST_NOEXEC:
        return tmp_path
    directory = os.path.join(ROOT, ".cache", "unit-exec", tmp_path.name)
    os.makedirs(directory, exist_ok=True)
    return directory


@pytest.mark.parametrize("name", list(arch.ARCHES))
def test_probe_runs_and_prints_its_line(name, exec_dir):
    path = os.path.join(str(exec_dir), "probe-" + name)
    with open(path, "wb") as handle:
        handle.write(binfmt.build_probe(name))
    os.chmod(path, 0o755)
    if name in arch.native_arches(HOST):
        command = [path]
    else:
        qemu = emulator(name)
        if qemu is None:
            pytest.skip("no qemu-%s-static here (Debian: apt-get install qemu-user-static)" % name)
        command = [qemu, path]
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60, check=False)
    assert (result.returncode, result.stdout, result.stderr) == (0, binfmt.probe_message(name), b"")
