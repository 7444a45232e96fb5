# -*- coding: utf-8 -*-
"""Probe executables: each is run for real, natively or under qemu-<arch>-static directly (no binfmt_misc)."""

import os
import shutil
import struct
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
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
def test_probe_headers_are_what_the_tables_say(name):
    info = arch.ARCHES[name]
    data = binfmt.build_probe(name)
    assert data[:4] == b"\x7fELF" and len(data) < 256
    assert data[4] == (2 if info.elf_class == 64 else 1)
    assert data[5] == (1 if info.elf_endian == "little" else 2)
    end = "<" if info.elf_endian == "little" else ">"
    e_type, e_machine = struct.unpack(end + "HH", data[16:20])
    assert (e_type, e_machine) == (2, info.elf_machine)
    assert data.endswith(binfmt.probe_message(name))


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


def test_probes_differ_per_arch():
    probes = {name: binfmt.build_probe(name) for name in arch.ARCHES}
    assert len(set(probes.values())) == len(probes)
    assert binfmt.probe_message("arm64") == b"aisbench-binfmt-probe aarch64 ok\n"
