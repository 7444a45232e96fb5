# -*- coding: utf-8 -*-
"""Probe executables: their ELF headers and messages, per architecture.
Its tests that start a process: tests/integration/scripts/test_qemu_binfmt_probes_run.py."""

import os
import struct
import sys

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, ".cache", "collections"))

from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _arch as arch, _binfmt as binfmt  # noqa: E402


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


def test_probes_differ_per_arch():
    probes = {name: binfmt.build_probe(name) for name in arch.ARCHES}
    assert len(set(probes.values())) == len(probes)
    assert binfmt.probe_message("arm64") == b"aisbench-binfmt-probe aarch64 ok\n"
