# -*- coding: utf-8 -*-
"""plugins/module_utils/_binfmt.py: rules, kernel entries, matching, hijacker detection."""

import glob
import os
import struct
import sys

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, ".cache", "collections"))

from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _arch as arch, _binfmt as binfmt  # noqa: E402

FIXTURES = os.path.join(ROOT, "tests", "fixtures", "qemu_binfmt")
DEBIAN_RULES = sorted(glob.glob(os.path.join(FIXTURES, "debian13-binfmt.d", "*.conf")))


def read(*parts):
    with open(os.path.join(FIXTURES, *parts)) as handle:
        return handle.read()


def our_entry(name):
    magic, mask = binfmt.elf_magic_mask(name)
    return binfmt.Entry(binfmt.handler_name(name), "/usr/bin/qemu-%s-static" % name, "F", magic=magic, mask=mask)


def test_there_is_a_debian_rule_for_every_known_arch():
    names = sorted(os.path.basename(path)[len("qemu-"):-len(".conf")] for path in DEBIAN_RULES)
    assert names == sorted(arch.ARCHES)


@pytest.mark.parametrize("path", DEBIAN_RULES, ids=os.path.basename)
def test_our_rules_and_qemus_match_the_same_probes(path):
    debian = binfmt.parse_rules_file(read(path))[0]
    name = debian.name[len("qemu-"):]
    ours = our_entry(name)
    for other in arch.ARCHES:
        probe = binfmt.build_probe(other)
        assert debian.matches(probe) == (other == name), "QEMU's %s rule vs the %s probe" % (name, other)
        assert ours.matches(probe) == (other == name), "our %s rule vs the %s probe" % (name, other)
    # Ours accepts the header QEMU's rule is written for.
    assert ours.matches(debian.magic)


@pytest.mark.parametrize("name", list(arch.ARCHES))
def test_rules_accept_pies_and_any_os_abi(name):
    probe = bytearray(binfmt.build_probe(name))
    little = arch.ARCHES[name].elf_endian == "little"
    probe[7] = 3  # ELFOSABI_GNU
    probe[16:18] = struct.pack("<H" if little else ">H", 3)  # ET_DYN
    assert our_entry(name).matches(bytes(probe))
    probe[16:18] = struct.pack("<H" if little else ">H", 1)  # ET_REL: not executable
    assert not our_entry(name).matches(bytes(probe))


def test_rule_line_round_trip():
    entry = our_entry("aarch64")
    line = entry.rule_line()
    assert line.startswith(":qemu-aarch64:M:0:\\x7f\\x45\\x4c\\x46\\x02\\x01\\x01")
    assert line.endswith(":/usr/bin/qemu-aarch64-static:F")
    again = binfmt.parse_rule_line(line)
    assert again.same_definition(entry) and again.rule_line() == line


def test_rules_with_another_delimiter_and_plain_magic():
    entry = binfmt.parse_rule_line(",jar,M,,PK\\x03\\x04,,/usr/bin/jexec,")
    assert entry.name == "jar" and entry.magic == b"PK\x03\x04" and entry.mask == b"\xff" * 4
    assert entry.matches(b"PK\x03\x04rest") and not entry.matches(b"PK\x03")
    ext = binfmt.parse_rule_line(":DOSWin:E::exe::/usr/bin/wine:")
    assert ext.kind == "extension" and ext.extension == "exe" and not ext.matches(b"MZ")


@pytest.mark.parametrize("line,problem", [
    (":short:M::\\x7f", "fields"),
    (":bad:X::\\x7f::/bin/x:", "type"),
    (":register:M::\\x7f::/bin/x:", "handler name"),
    (":a/b:M::\\x7f::/bin/x:", "handler name"),
    (":x:M::\\x7f\\x45:\\xff:/bin/x:", "differ in length"),
    (":x:M::\\xZZ::/bin/x:", "bad escape"),
    (":x:M::\\x7f::/bin/x:Q", "flag"),
])
def test_bad_rules_are_clear_errors(line, problem):
    with pytest.raises(binfmt.BinfmtError, match=problem):
        binfmt.parse_rule_line(line)


def test_flags_are_normalised_like_the_kernel_prints_them():
    assert binfmt.normalize_flags("FOP") == "POF"
    assert binfmt.normalize_flags("C") == "OC"
    assert binfmt.normalize_flags("") == ""
    with pytest.raises(binfmt.BinfmtError, match="Z"):
        binfmt.normalize_flags("FZ")


def test_kernel_entries_recorded_from_a_real_kernel():
    magic = binfmt.parse_proc_entry("aisbench-fixture-magic", read("proc", "aisbench-fixture-magic"))
    assert magic.enabled and magic.kind == "magic" and magic.flags == "POC" and magic.offset == 0
    assert magic.interpreter == "/usr/bin/qemu-aarch64-static"
    assert magic.matches(binfmt.build_probe("aarch64")) and not magic.matches(binfmt.build_probe("x86_64"))
    # The kernel lists the rule it was given: same definition as ours, flags aside.
    ours = our_entry("aarch64")
    ours.name, ours.flags = magic.name, "POC"
    assert magic.same_definition(ours)

    ext = binfmt.parse_proc_entry("aisbench-fixture-ext", read("proc", "aisbench-fixture-ext"))
    assert ext.kind == "extension" and ext.extension == "qbfixture" and ext.flags == "" and ext.enabled

    nomask = binfmt.parse_proc_entry("aisbench-fixture-nomask", read("proc", "aisbench-fixture-nomask"))
    assert not nomask.enabled and nomask.offset == 4 and nomask.magic == b"PK\x03\x04"
    assert nomask.mask == b"\xff" * 4 and nomask.matches(b"....PK\x03\x04")


def test_a_garbled_kernel_entry_is_an_error():
    with pytest.raises(binfmt.BinfmtError):
        binfmt.parse_proc_entry("x", "something else\n")


def test_binfmt_support_admin_files():
    text = "qemu-user-static\nmagic\n0\n" + our_entry("arm").rule_line().split(":")[4] + "\n" \
        + our_entry("arm").rule_line().split(":")[5] + "\n/usr/libexec/qemu-binfmt/arm-binfmt-P\n\nno\nyes\nyes\n"
    package, entry = binfmt.parse_binfmts_admin("qemu-arm", text)
    assert package == "qemu-user-static"
    assert entry.flags == "PF" and entry.matches(binfmt.build_probe("arm"))
    package, entry = binfmt.parse_binfmts_admin("jar", "openjdk-17\nmagic\n0\nPK\\x03\\x04\n\n/usr/bin/jexec\n\n\n\n\n")
    assert package == "openjdk-17" and entry.matches(b"PK\x03\x04") and entry.flags == ""
    with pytest.raises(binfmt.BinfmtError):
        binfmt.parse_binfmts_admin("x", "pkg\nweird\n")


def test_hijackers_are_the_enabled_handlers_matching_native_executables():
    entries = {
        "qemu-aarch64": our_entry("aarch64"),
        "qemu-x86_64": our_entry("x86_64"),
        "qemu-i386": our_entry("i386"),
        "jar": binfmt.parse_rule_line(":jar:M::PK\\x03\\x04::/usr/bin/jexec:"),
    }
    disabled = our_entry("x86_64")
    disabled.name, disabled.enabled = "off-x86_64", False
    entries["off-x86_64"] = disabled

    found = binfmt.hijackers(entries, "x86_64", extra_paths=())
    assert [item["name"] for item in found] == ["qemu-i386", "qemu-x86_64"]
    assert found[1]["matches"] == ["probe:x86_64"] and found[0]["matches"] == ["probe:i386"]
    on_arm = binfmt.hijackers(entries, "aarch64", extra_paths=())
    assert [item["name"] for item in on_arm] == ["qemu-aarch64"]


def test_a_real_native_executable_is_checked_too():
    real = os.path.realpath(sys.executable)
    host = arch.qemu_arch(os.uname()[4])
    entries = {"qemu-" + host: our_entry(host)}
    found = binfmt.hijackers(entries, host, extra_paths=(real,))
    assert found and real in found[0]["matches"]


def test_effective_rule_files_lets_earlier_directories_win(tmp_path):
    etc, usr = tmp_path / "etc", tmp_path / "usr"
    etc.mkdir()
    usr.mkdir()
    (usr / "qemu-aarch64.conf").write_text("vendor\n")
    (usr / "python3.13.conf").write_text("vendor\n")
    (etc / "qemu-aarch64.conf").write_text("override\n")
    (etc / "notes.txt").write_text("ignored\n")
    files = binfmt.effective_rule_files((str(etc), str(usr), str(tmp_path / "missing")))
    assert files == {"qemu-aarch64.conf": str(etc / "qemu-aarch64.conf"),
                     "python3.13.conf": str(usr / "python3.13.conf")}


def test_is_mounted_reads_mountinfo(tmp_path):
    info = tmp_path / "mountinfo"
    info.write_text(
        "22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
        "40 22 0:36 / /proc/sys/fs/binfmt_misc rw,relatime shared:20 - autofs systemd-1 rw\n")
    assert not binfmt.is_mounted(str(tmp_path / "binfmt_misc"), str(info))
    assert not binfmt.is_mounted("/proc/sys/fs/binfmt_misc", str(info))
    with info.open("a") as handle:
        handle.write("61 40 0:53 / /proc/sys/fs/binfmt_misc rw,nosuid,nodev - binfmt_misc binfmt_misc rw\n")
    assert binfmt.is_mounted("/proc/sys/fs/binfmt_misc", str(info))


# --- the kernel decides what is native (never a parameter or a fact) -------------------------------------------------

@pytest.mark.parametrize("name", list(arch.ARCHES))
def test_arch_from_elf_reads_every_probe_header(name):
    assert arch.arch_from_elf(binfmt.build_probe(name)[:64]) == name


@pytest.mark.parametrize("header", [b"", b"\x7fELF", b"#!/bin/sh\n" * 4, b"\x7fELF\x03\x01" + b"\x00" * 20])
def test_arch_from_elf_refuses_what_is_not_a_known_elf_header(header):
    assert arch.arch_from_elf(header) is None


def test_the_kernel_is_asked_through_uname_and_its_own_shell():
    x86 = binfmt.build_probe("x86_64")[:64]
    assert binfmt.kernel_native("x86_64", x86)["native"] == ["x86_64", "i386"]
    # A personality (setarch i686) changes uname, not the shell: x86_64 stays native.
    setarch = binfmt.kernel_native("i686", x86)
    assert setarch["arch"] == "i386" and set(setarch["native"]) == {"x86_64", "i386"}
    # An unknown uname leaves the shell's word; no shell leaves uname's.
    assert binfmt.kernel_native("sparc64", binfmt.build_probe("aarch64"))["native"] == ["aarch64"]
    assert binfmt.kernel_native("aarch64", b"")["native"] == ["aarch64"]
    with pytest.raises(binfmt.BinfmtError, match="cannot tell what the running kernel executes natively"):
        binfmt.kernel_native("sparc64", b"#!/bin/sh\n")


def test_running_kernel_is_this_machines():
    kernel = binfmt.running_kernel()
    host = arch.qemu_arch(os.uname()[4])
    assert kernel["arch"] == host and kernel["shell_arch"] == host and host in kernel["native"]


@pytest.mark.parametrize("declared", ["riscv64", "linux/arm64", "s390x"])
def test_a_declared_arch_the_kernel_does_not_run_is_an_error_naming_both(declared):
    kernel = binfmt.kernel_native("x86_64", binfmt.build_probe("x86_64"))
    with pytest.raises(binfmt.BinfmtError) as info:
        binfmt.check_declared_arch(declared, kernel, "host_arch")
    message = str(info.value)
    assert message.startswith("host_arch is %s but the running kernel is x86_64 (uname -m: x86_64" % declared)
    assert "Nothing was changed" in message


@pytest.mark.parametrize("declared", [None, "", "x86_64", "amd64", "linux/amd64", "i686"])
def test_a_declared_arch_the_kernel_runs_is_accepted(declared):
    binfmt.check_declared_arch(declared, binfmt.kernel_native("x86_64", binfmt.build_probe("x86_64")))


def test_a_rule_matching_the_kernels_shell_is_found_even_for_an_unlisted_arch(tmp_path):
    shell = tmp_path / "sh"
    shell.write_bytes(binfmt.build_probe("riscv64"))
    headers = binfmt.native_headers(["x86_64"], extra_paths=(str(shell),))
    assert binfmt.native_matches(our_entry("riscv64"), headers) == [str(shell)]
    assert binfmt.native_matches(our_entry("aarch64"), headers) == []


def test_read_header_never_blocks_on_a_fifo(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(str(fifo))
    assert binfmt.read_header(str(fifo)) == b""
