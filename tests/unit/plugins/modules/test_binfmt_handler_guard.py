# -*- coding: utf-8 -*-
"""binfmt_handler's decisions about native executables, run on the module's own Handler in check mode.

Check mode keeps the kernel untouched (binfmt_misc is host-global) while the Handler tracks what the kernel would
hold; the native headers are the running kernel's own (uname and /bin/sh), as in the module.

Its tests that start a process: tests/integration/scripts/test_binfmt_handler_guard_process.py.
"""

import os
import sys

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, ".cache", "collections"))

from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _arch as arch, _binfmt as binfmt  # noqa: E402
from ansible_collections.aisbench.agent_runtime.plugins.modules import binfmt_handler  # noqa: E402

KERNEL = binfmt.running_kernel()
HOST = KERNEL["arch"]
FOREIGN = "aarch64" if HOST != "aarch64" else "riscv64"


class Failed(Exception):
    pass


class CheckModeModule:
    """What Handler uses of AnsibleModule, in check mode."""

    check_mode = True
    _diff = True

    def __init__(self, tmp_path, **params):
        self.params = dict(arches=[], state="present", interpreter="/usr/bin/qemu-{arch}-static", flags="F",
                           persistent=False, binfmt_d_dir=str(tmp_path / "binfmt.d"),
                           manifest=str(tmp_path / "manifest.json"), proc_dir=str(tmp_path / "proc"), mount=True,
                           on_native="fail", host_arch=None, exclusive=True, remove_native=False)
        self.params.update(params)
        self.warnings = []

    def warn(self, text):
        self.warnings.append(text)

    def fail_json(self, **kwargs):
        raise Failed(kwargs["msg"])


def entry_for(name, handler_name=None):
    magic, mask = binfmt.elf_magic_mask(name)
    return binfmt.Entry(handler_name or binfmt.handler_name(name), "/usr/bin/qemu-%s-static" % name, "F",
                        magic=magic, mask=mask)


def handler(tmp_path, **params):
    result = binfmt_handler.Handler(CheckModeModule(tmp_path, **params))
    result.headers = binfmt.native_headers(KERNEL["native"])
    return result


def test_a_native_entry_is_never_registered(tmp_path):
    guard = handler(tmp_path)
    with pytest.raises(Failed) as info:
        guard.ensure_live(entry_for(HOST), {})
    assert str(info.value).startswith("refusing to register qemu-%s (requested architecture): its rule matches this "
                                      "host's own executables (probe:%s" % (HOST, HOST))
    assert guard.result["registered"] == [] and binfmt.handler_name(HOST) not in guard.live


def test_absent_never_restores_a_replaced_handler_that_matches_native(tmp_path):
    guard = handler(tmp_path, state="absent")
    ours = entry_for(FOREIGN)
    native_rule = entry_for(HOST, ours.name).rule_line()  # what stood there before (a hijacker of the same name)
    guard.live = {ours.name: ours}
    manifest = {"handlers": {ours.name: {"arch": FOREIGN, "rule": ours.rule_line(), "previous_rule": native_rule,
                                         "file": None}}, "masks": {}}
    guard.remove_handler(manifest, ours.name)
    assert guard.result["unregistered"] == [ours.name]
    assert ours.name not in guard.live  # not re-registered with the native rule
    assert not any("restored" in line for line in guard.after)
    assert any("is not restored: it matches this host's own executables" in text for text in guard.module.warnings)


def test_absent_restores_a_replaced_foreign_handler(tmp_path):
    guard = handler(tmp_path, state="absent")
    ours = entry_for(FOREIGN)
    theirs = binfmt.Entry(ours.name, "/bin/true", "", magic=ours.magic, mask=ours.mask)  # /bin/true: exists
    guard.live = {ours.name: ours}
    manifest = {"handlers": {ours.name: {"arch": FOREIGN, "rule": ours.rule_line(),
                                         "previous_rule": theirs.rule_line(), "file": None}}, "masks": {}}
    guard.remove_handler(manifest, ours.name)
    assert guard.live[ours.name].interpreter == "/bin/true"


def test_absent_never_restores_a_replaced_file_that_matches_native(tmp_path):
    guard = handler(tmp_path, state="absent")
    ours = entry_for(FOREIGN)
    path = tmp_path / "qemu.conf"
    path.write_text(ours.rule_line() + "\n")
    record = {"rule": ours.rule_line(), "file": str(path),
              "previous_file": {"content": entry_for(HOST, ours.name).rule_line() + "\n"}}
    guard.remove_file(record)
    assert any("is not restored to the file it replaced" in text for text in guard.module.warnings)
    assert "file %s:\n(absent)\n" % path in guard.after


def test_remove_native_never_removes_what_it_just_registered(tmp_path):
    """A same-named hijacker is replaced by the foreign handler: remove_native must see the new one, not the old."""
    guard = handler(tmp_path, arches=[FOREIGN], remove_native=True)
    ours = entry_for(FOREIGN)
    hijacker = entry_for(HOST, ours.name)
    guard.live = {ours.name: hijacker}
    manifest = {"handlers": {}, "masks": {}}
    guard.present(manifest, [(FOREIGN, ours)])
    guard.protect_native(manifest)
    assert guard.result["registered"] == [ours.name]
    assert ours.name not in guard.result["unregistered"] and guard.result["hijackers"] == []
    assert guard.live[ours.name].same_definition(ours)


def test_a_hijacker_recorded_as_ours_is_removed_even_without_remove_native(tmp_path):
    """An earlier release that trusted a wrong fact may have registered a native handler: it goes, with its file."""
    guard = handler(tmp_path)
    wrong = entry_for(HOST)
    path = tmp_path / "binfmt.d" / ("%s.conf" % wrong.name)
    path.parent.mkdir()
    path.write_text(wrong.rule_line() + "\n")
    guard.live = {wrong.name: wrong}
    manifest = {"handlers": {wrong.name: {"arch": HOST, "rule": wrong.rule_line(), "previous_rule": None,
                                          "file": str(path)}}, "masks": {}}
    guard.protect_native(manifest)
    assert guard.result["unregistered"] == [wrong.name] and wrong.name not in manifest["handlers"]
    assert "file %s:\n(absent)\n" % path in guard.after


def test_arch_table_agrees_with_the_kernel_shell():
    assert arch.arch_from_elf(binfmt.read_header("/bin/sh")) == HOST
