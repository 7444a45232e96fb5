# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""CPU architecture names across uname -m, QEMU, Docker platforms and Debian (standard library only).

The canonical name is QEMU's (``qemu-<name>-static``, binfmt handler ``qemu-<name>``).
Every function accepts any spelling a user is likely to type: ``uname -m`` output
(``x86_64``, ``aarch64``, ``armv7l``), a Docker platform (``linux/arm64``,
``linux/arm/v7``, ``arm64/v8``), a Debian architecture (``amd64``, ``armhf``,
``ppc64el``) or the QEMU name itself. An unknown name raises UnknownArchError.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import struct

Arch = collections.namedtuple(
    "Arch",
    [
        "qemu",  # canonical name: qemu-<qemu>-static, binfmt handler qemu-<qemu>
        "uname",  # what `uname -m` prints on such a kernel
        "docker",  # Docker/OCI platform
        "debian",  # Debian/Ubuntu dpkg architecture
        "elf_class",  # 32 or 64
        "elf_endian",  # "little" or "big"
        "elf_machine",  # ELF e_machine
        "elf_flags",  # e_flags a plain static executable of this arch carries
        "aliases",  # further spellings that mean this arch
    ],
)

ARCHES = collections.OrderedDict(
    (arch.qemu, arch)
    for arch in (
        Arch("x86_64", "x86_64", "linux/amd64", "amd64", 64, "little", 62, 0,
             ("amd64", "x64", "x86-64", "linux/amd64/v1", "linux/amd64/v2", "linux/amd64/v3", "linux/amd64/v4")),
        Arch("i386", "i686", "linux/386", "i386", 32, "little", 3, 0,
             ("386", "i486", "i586", "i686", "x86")),
        Arch("aarch64", "aarch64", "linux/arm64", "arm64", 64, "little", 183, 0,
             ("arm64", "arm64/v8", "aarch64/v8", "linux/arm64/v8", "arm64v8")),
        Arch("arm", "armv7l", "linux/arm/v7", "armhf", 32, "little", 40, 0x05000000,
             ("armhf", "armel", "armv5l", "armv5tel", "armv6l", "armv7l", "armv8l", "arm/v5", "arm/v6", "arm/v7",
              "linux/arm", "linux/arm/v5", "linux/arm/v6", "arm32v7", "arm32v6", "arm32v5")),
        Arch("ppc64le", "ppc64le", "linux/ppc64le", "ppc64el", 64, "little", 21, 2,
             ("ppc64el", "powerpc64le")),
        Arch("s390x", "s390x", "linux/s390x", "s390x", 64, "big", 22, 0, ()),
        Arch("riscv64", "riscv64", "linux/riscv64", "riscv64", 64, "little", 243, 0, ("riscv64/rva20u64",)),
        # Debian's only 64-bit MIPS port is little-endian and its kernel prints "mips64".
        Arch("mips64el", "mips64", "linux/mips64le", "mips64el", 64, "little", 8, 0x80000000, ("mips64le", "mips64")),
        Arch("loongarch64", "loongarch64", "linux/loong64", "loong64", 64, "little", 258, 0x43, ("loong64",)),
    )
)

# The foreign architectures `qemu_binfmt_arches: common` registers (minus the host's own).
COMMON_ARCHES = ("x86_64", "i386", "aarch64", "arm", "ppc64le", "s390x", "riscv64")

# Architectures a kernel of the key's architecture runs natively besides its own: a binfmt
# handler for one of them would route native binaries through an emulator.
NATIVE_COMPAT = {
    "x86_64": ("i386",),
}


class UnknownArchError(ValueError):
    """Raised for a name that no table entry knows."""


def _build_lookup():
    lookup = {}
    for arch in ARCHES.values():
        names = {arch.qemu, arch.uname, arch.docker, arch.debian}
        names.update(arch.aliases)
        for name in names:
            lookup[name.lower()] = arch.qemu
            # "linux/arm64" and "arm64" mean the same: accept platforms without the OS part.
            if name.startswith("linux/"):
                lookup[name[len("linux/"):].lower()] = arch.qemu
    return lookup


_LOOKUP = _build_lookup()


def known_names():
    """Every accepted spelling, sorted (for error messages and docs)."""
    return sorted(_LOOKUP)


def qemu_arch(value):
    """Canonical (QEMU) name for any known spelling; UnknownArchError otherwise."""
    if not isinstance(value, str) or not value.strip():
        raise UnknownArchError("architecture %r is empty or not a string" % (value,))
    key = value.strip().lower()
    if key in _LOOKUP:
        return _LOOKUP[key]
    if "/" in key:
        os_part = key.split("/", 1)[0]
        if os_part in ("windows", "darwin", "freebsd", "wasip1", "js"):
            raise UnknownArchError("platform %r is not a Linux platform" % value)
    raise UnknownArchError(
        "unknown architecture %r: use a uname -m name (x86_64, aarch64, armv7l), a Docker platform "
        "(linux/amd64, linux/arm64, linux/arm/v7) or a Debian architecture (amd64, arm64, armhf); "
        "known: %s" % (value, ", ".join(ARCHES))
    )


def arch_info(value):
    """The table entry (Arch) for any known spelling."""
    return ARCHES[qemu_arch(value)]


def docker_platform(value):
    """Docker/OCI platform, e.g. aarch64 -> linux/arm64."""
    return arch_info(value).docker


def debian_arch(value):
    """Debian architecture, e.g. x86_64 -> amd64, arm -> armhf."""
    return arch_info(value).debian


def uname_machine(value):
    """What uname -m prints on a kernel of this architecture."""
    return arch_info(value).uname


def native_arches(host):
    """Canonical names the host runs without emulation: its own plus compatible ones (x86_64 runs i386)."""
    name = qemu_arch(host)
    return (name,) + NATIVE_COMPAT.get(name, ())


def arch_from_elf(header):
    """Canonical name of the architecture an ELF header (its first 20 bytes or more) is built for; None when the
    bytes are not an ELF header of a known architecture."""
    header = bytes(header or b"")
    if len(header) < 20 or header[:4] != b"\x7fELF" or header[4] not in (1, 2) or header[5] not in (1, 2):
        return None
    elf_class = 32 if header[4] == 1 else 64
    endian = "little" if header[5] == 1 else "big"
    machine = struct.unpack("<H" if endian == "little" else ">H", header[18:20])[0]
    for arch in ARCHES.values():
        if (arch.elf_class, arch.elf_endian, arch.elf_machine) == (elf_class, endian, machine):
            return arch.qemu
    return None


def split_native(values, host):
    """Split values into (foreign, native) canonical names relative to host, de-duplicated, order kept."""
    native = set(native_arches(host))
    foreign_out, native_out = [], []
    for value in values:
        name = qemu_arch(value)
        bucket = native_out if name in native else foreign_out
        if name not in bucket:
            bucket.append(name)
    return foreign_out, native_out


def unknown_names(values):
    """The values no table entry knows (empty list when all are known)."""
    bad = []
    for value in values:
        try:
            qemu_arch(value)
        except UnknownArchError:
            bad.append(value)
    return bad
