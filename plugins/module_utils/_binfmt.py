# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""binfmt_misc handlers, binfmt.d rule lines and tiny static probe executables (standard library only).

A handler is read from /proc/sys/fs/binfmt_misc/<name>, written to .../register as a rule line
``:name:M:offset:magic:mask:interpreter:flags`` (the same syntax binfmt.d(5) files hold) and removed
by writing ``-1`` to its file. ``build_probe(arch)`` returns a complete static ELF executable for arch
(about 200 bytes, no libc) that writes ``probe_message(arch)`` to stdout and exits 0: executing it
proves that the kernel runs that architecture, natively or through a handler.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import binascii
import os
import stat
import struct

from ansible_collections.aisbench.agent_runtime.plugins.module_utils._arch import (
    ARCHES,
    UnknownArchError,
    arch_from_elf,
    native_arches,
    qemu_arch,
)

PROC_DIR = "/proc/sys/fs/binfmt_misc"
# The kernel's own executable whose ELF header tells (besides uname) what the kernel runs natively.
KERNEL_SHELL = "/bin/sh"
FLAG_ORDER = "POCF"  # the order the kernel prints them in
# binfmt.d(5) search path, highest precedence first; a file name earlier in the list hides later ones.
BINFMT_D_DIRS = ("/etc/binfmt.d", "/run/binfmt.d", "/usr/local/lib/binfmt.d", "/usr/lib/binfmt.d", "/lib/binfmt.d")


class BinfmtError(Exception):
    """A rule or entry that cannot be parsed, or a kernel write that failed."""


def handler_name(arch):
    """binfmt_misc handler name for arch: qemu-<canonical name>."""
    return "qemu-" + qemu_arch(arch)


def normalize_flags(flags):
    """Flags as the kernel reports them: known letters in kernel order; C implies O."""
    letters = set(flags or "")
    unknown = letters - set(FLAG_ORDER)
    if unknown:
        raise BinfmtError("unknown binfmt_misc flag(s) %s: use letters from %s" % ("".join(sorted(unknown)), FLAG_ORDER))
    if "C" in letters:
        letters.add("O")
    return "".join(letter for letter in FLAG_ORDER if letter in letters)


def elf_magic_mask(arch):
    """(magic, mask) matching ELF executables and PIEs of arch, whatever their OS ABI byte."""
    info = ARCHES[qemu_arch(arch)]
    little = info.elf_endian == "little"
    ident = b"\x7fELF" + bytes([1 if info.elf_class == 32 else 2, 1 if little else 2, 1]) + b"\x00" * 9
    fmt = "<HH" if little else ">HH"
    magic = ident + struct.pack(fmt, 2, info.elf_machine)  # e_type ET_EXEC, e_machine
    # Ignore EI_OSABI and EI_ABIVERSION; e_type mask 0xfffe also accepts ET_DYN (3): PIEs.
    mask = b"\xff" * 7 + b"\x00\x00" + b"\xff" * 7 + (b"\xfe\xff" if little else b"\xff\xfe") + b"\xff\xff"
    return magic, mask


def escape_bytes(data):
    """\\xNN for every byte: safe whatever the rule's delimiter is."""
    return "".join("\\x%02x" % byte for byte in bytearray(data))


def _unescape(text):
    """Decode a rule's magic or mask: \\xNN escapes and \\\\ (what the kernel accepts)."""
    out = bytearray()
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\" and text[index + 1:index + 2] in ("x", "X"):
            digits = text[index + 2:index + 4]
            try:
                out.append(int(digits, 16))
            except ValueError:
                raise BinfmtError("bad escape \\x%s in %r" % (digits, text))
            index += 4
        elif char == "\\" and text[index + 1:index + 2] == "\\":
            out.append(0x5C)
            index += 2
        else:
            out.extend(char.encode("latin-1"))
            index += 1
    return bytes(out)


class Entry(object):
    """One binfmt_misc handler: live in the kernel or as a rule line."""

    def __init__(self, name, interpreter, flags="", kind="magic", offset=0, magic=b"", mask=None,
                 extension=None, enabled=True):
        self.name = name
        self.interpreter = interpreter
        self.flags = normalize_flags(flags)
        self.kind = kind
        self.offset = int(offset)
        self.magic = bytes(magic)
        self.mask = bytes(mask) if mask else b"\xff" * len(self.magic)
        self.extension = extension
        self.enabled = enabled

    def masked_magic(self):
        return bytes(bytearray(m & k for m, k in zip(bytearray(self.magic), bytearray(self.mask))))

    def matches(self, header):
        """Whether the kernel would hand a file starting with header to this handler (if enabled)."""
        if self.kind != "magic" or not self.magic:
            return False
        chunk = header[self.offset:self.offset + len(self.magic)]
        if len(chunk) < len(self.magic):
            return False
        masked = bytes(bytearray(c & k for c, k in zip(bytearray(chunk), bytearray(self.mask))))
        return masked == self.masked_magic()

    def same_definition(self, other):
        """Same matching rule, interpreter and flags (the enabled bit is not compared)."""
        if other is None or self.kind != other.kind or self.interpreter != other.interpreter:
            return False
        if self.flags != other.flags:
            return False
        if self.kind == "extension":
            return self.extension == other.extension
        return self.offset == other.offset and self.mask == other.mask and self.masked_magic() == other.masked_magic()

    def rule_line(self):
        """The line for .../register and binfmt.d files."""
        if self.kind == "extension":
            return ":%s:E::%s::%s:%s" % (self.name, self.extension, self.interpreter, self.flags)
        return ":%s:M:%d:%s:%s:%s:%s" % (
            self.name, self.offset, escape_bytes(self.magic), escape_bytes(self.mask), self.interpreter, self.flags)

    def to_dict(self):
        data = {
            "name": self.name,
            "enabled": self.enabled,
            "type": self.kind,
            "interpreter": self.interpreter,
            "flags": self.flags,
            "rule": self.rule_line(),
        }
        if self.kind == "extension":
            data["extension"] = self.extension
        else:
            data.update(offset=self.offset, magic=binascii.hexlify(self.magic).decode("ascii"),
                        mask=binascii.hexlify(self.mask).decode("ascii"))
        return data


def parse_proc_entry(name, text):
    """Entry from the text of /proc/sys/fs/binfmt_misc/<name>."""
    fields = {"flags": ""}
    enabled = None
    for line in text.splitlines():
        line = line.strip()
        if line in ("enabled", "disabled"):
            enabled = line == "enabled"
        elif line.startswith("flags:"):
            fields["flags"] = line[len("flags:"):].strip()
        elif " " in line:
            key, value = line.split(" ", 1)
            fields[key] = value.strip()
    if enabled is None or "interpreter" not in fields:
        raise BinfmtError("unexpected binfmt_misc entry %s: %r" % (name, text))
    if "extension" in fields:
        return Entry(name, fields["interpreter"], fields["flags"], kind="extension",
                     extension=fields["extension"].lstrip("."), enabled=enabled)
    try:
        magic = binascii.unhexlify(fields.get("magic", ""))
        mask = binascii.unhexlify(fields["mask"]) if "mask" in fields else None
    except (TypeError, ValueError, binascii.Error):
        raise BinfmtError("unexpected magic/mask in binfmt_misc entry %s: %r" % (name, text))
    return Entry(name, fields["interpreter"], fields["flags"], offset=int(fields.get("offset", "0")),
                 magic=magic, mask=mask, enabled=enabled)


def parse_rule_line(line):
    """Entry from a register/binfmt.d line; the first character is the field delimiter."""
    line = line.rstrip("\r\n")
    if len(line) < 2:
        raise BinfmtError("empty binfmt rule")
    parts = line[1:].split(line[0])
    if len(parts) < 6:
        raise BinfmtError("binfmt rule %r has %d fields, expected name:type:offset:magic:mask:interpreter[:flags]"
                          % (line, len(parts)))
    name, kind, offset, magic, mask, interpreter = parts[:6]
    flags = parts[6] if len(parts) > 6 else ""
    if not name or "/" in name or name in (".", "..", "register", "status"):
        raise BinfmtError("bad handler name %r in binfmt rule %r" % (name, line))
    if kind == "E":
        return Entry(name, interpreter, flags, kind="extension", extension=magic)
    if kind != "M":
        raise BinfmtError("binfmt rule %r has type %r, expected M or E" % (line, kind))
    magic_bytes = _unescape(magic)
    mask_bytes = _unescape(mask) if mask else None
    if mask_bytes is not None and len(mask_bytes) != len(magic_bytes):
        raise BinfmtError("binfmt rule %r: mask and magic differ in length" % line)
    return Entry(name, interpreter, flags, offset=int(offset or 0), magic=magic_bytes, mask=mask_bytes)


def parse_rules_file(text):
    """Entries of a binfmt.d file (comments start with # or ;)."""
    entries = []
    for raw in text.splitlines():
        line = raw.strip()
        if line and line[0] not in "#;":
            entries.append(parse_rule_line(line))
    return entries


def parse_binfmts_admin(name, text):
    """(package, Entry) from a binfmt-support admin file (/var/lib/binfmts/<name>).

    Lines: package, type (magic|extension), offset, magic, mask, interpreter, detector,
    credentials, preserve, fix_binary (the last four may be missing in old files).
    """
    lines = text.split("\n")
    if len(lines) < 6 or lines[1] not in ("magic", "extension"):
        raise BinfmtError("unexpected binfmt-support entry %s" % name)
    package, kind, offset, magic, mask, interpreter = lines[:6]
    flags = ""
    extra = lines[7:10]
    for letter, value in zip("CPF", extra):
        if value.strip() == "yes":
            flags += letter
    if kind == "extension":
        return package, Entry(name, interpreter, flags, kind="extension", extension=magic)
    magic_bytes = _unescape(magic)
    mask_bytes = _unescape(mask) if mask else None
    return package, Entry(name, interpreter, flags, offset=int(offset or 0), magic=magic_bytes, mask=mask_bytes)


def is_mounted(path=PROC_DIR, mountinfo="/proc/self/mountinfo"):
    """Whether a binfmt_misc file system is mounted at path (an automount is triggered first)."""
    try:
        os.stat(os.path.join(path, "status"))
    except (IOError, OSError):
        pass
    try:
        with open(mountinfo) as handle:
            for line in handle:
                fields = line.split(" - ", 1)
                left = fields[0].split()
                fstype = fields[1].split()[0] if len(fields) > 1 else ""
                if len(left) > 4 and left[4] == path and fstype == "binfmt_misc":
                    return True
    except (IOError, OSError):
        pass
    return False


def read_entries(proc_dir=PROC_DIR):
    """name -> Entry for every handler the kernel lists (sorted by name)."""
    entries = {}
    for name in sorted(os.listdir(proc_dir)):
        if name in ("register", "status"):
            continue
        try:
            with open(os.path.join(proc_dir, name)) as handle:
                entries[name] = parse_proc_entry(name, handle.read())
        except (IOError, OSError):
            continue  # removed between listdir and open
    return entries


def _write(path, data):
    try:
        with open(path, "w") as handle:
            handle.write(data)
    except (IOError, OSError) as exc:
        raise BinfmtError("writing %r to %s failed: %s" % (data, path, exc))


def register(entry, proc_dir=PROC_DIR):
    _write(os.path.join(proc_dir, "register"), entry.rule_line())


def unregister(name, proc_dir=PROC_DIR):
    _write(os.path.join(proc_dir, name), "-1")


def set_enabled(name, enabled, proc_dir=PROC_DIR):
    _write(os.path.join(proc_dir, name), "1" if enabled else "0")


def effective_rule_files(dirs=BINFMT_D_DIRS):
    """basename -> path of the binfmt.d files systemd-binfmt applies (earlier dirs win)."""
    files = {}
    for directory in dirs:
        try:
            names = os.listdir(directory)
        except (IOError, OSError):
            continue
        for name in names:
            if name.endswith(".conf") and name not in files:
                files[name] = os.path.join(directory, name)
    return files


# --- probe executables ----------------------------------------------------------------------------

PROBE_PREFIX = b"aisbench-binfmt-probe "


def probe_message(arch):
    """What build_probe(arch) prints."""
    return PROBE_PREFIX + qemu_arch(arch).encode("ascii") + b" ok\n"


def _words(fmt, words):
    return b"".join(struct.pack(fmt, word & 0xFFFFFFFF) for word in words)


def _code_x86_64(pc, msg, length):
    lea_end = pc + 17  # rip-relative: from the end of the lea
    return (b"\xb8\x01\x00\x00\x00"  # mov eax, 1 (write)
            b"\xbf\x01\x00\x00\x00"  # mov edi, 1
            + b"\x48\x8d\x35" + struct.pack("<i", msg - lea_end)  # lea rsi, [rip+msg]
            + b"\xba" + struct.pack("<I", length)  # mov edx, len
            + b"\x0f\x05"  # syscall
            b"\xb8\x3c\x00\x00\x00"  # mov eax, 60 (exit)
            b"\x31\xff"  # xor edi, edi
            b"\x0f\x05")  # syscall


def _code_i386(pc, msg, length):
    return (b"\xb8\x04\x00\x00\x00"  # mov eax, 4 (write)
            b"\xbb\x01\x00\x00\x00"  # mov ebx, 1
            + b"\xb9" + struct.pack("<I", msg)  # mov ecx, msg
            + b"\xba" + struct.pack("<I", length)  # mov edx, len
            + b"\xcd\x80"  # int 0x80
            b"\xb8\x01\x00\x00\x00"  # mov eax, 1 (exit)
            b"\x31\xdb"  # xor ebx, ebx
            b"\xcd\x80")  # int 0x80


def _code_aarch64(pc, msg, length):
    offset = msg - (pc + 4)  # adr is the second instruction
    adr = 0x10000000 | ((offset & 3) << 29) | (((offset >> 2) & 0x7FFFF) << 5) | 1
    return _words("<I", [
        0xD2800020,  # movz x0, #1
        adr,  # adr x1, msg
        0xD2800000 | (length << 5) | 2,  # movz x2, #len
        0xD2800000 | (64 << 5) | 8,  # movz x8, #64 (write)
        0xD4000001,  # svc #0
        0xD2800000,  # movz x0, #0
        0xD2800000 | (93 << 5) | 8,  # movz x8, #93 (exit)
        0xD4000001,  # svc #0
    ])


def _code_arm(pc, msg, length):
    offset = msg - (pc + 4 + 8)  # add r1, pc, #imm reads pc as its own address + 8
    return _words("<I", [
        0xE3A00001,  # mov r0, #1
        0xE28F1000 | offset,  # add r1, pc, #offset
        0xE3A02000 | length,  # mov r2, #len
        0xE3A07004,  # mov r7, #4 (write, EABI)
        0xEF000000,  # svc #0
        0xE3A00000,  # mov r0, #0
        0xE3A07001,  # mov r7, #1 (exit)
        0xEF000000,  # svc #0
    ])


def _code_riscv64(pc, msg, length):
    offset = msg - (pc + 4)  # relative to the auipc
    return _words("<I", [
        (1 << 20) | (10 << 7) | 0x13,  # addi a0, zero, 1
        (11 << 7) | 0x17,  # auipc a1, 0
        ((offset & 0xFFF) << 20) | (11 << 15) | (11 << 7) | 0x13,  # addi a1, a1, offset
        (length << 20) | (12 << 7) | 0x13,  # addi a2, zero, len
        (64 << 20) | (17 << 7) | 0x13,  # addi a7, zero, 64 (write)
        0x00000073,  # ecall
        (10 << 7) | 0x13,  # addi a0, zero, 0
        (93 << 20) | (17 << 7) | 0x13,  # addi a7, zero, 93 (exit)
        0x00000073,  # ecall
    ])


def _code_ppc64le(pc, msg, length):
    return _words("<I", [
        0x38000004,  # li r0, 4 (write)
        0x38600001,  # li r3, 1
        0x3C800000 | (msg >> 16),  # lis r4, msg@h
        0x60840000 | (msg & 0xFFFF),  # ori r4, r4, msg@l
        0x38A00000 | length,  # li r5, len
        0x44000002,  # sc
        0x38000001,  # li r0, 1 (exit)
        0x38600000,  # li r3, 0
        0x44000002,  # sc
    ])


def _code_s390x(pc, msg, length):
    return (b"\xa7\x29\x00\x01"  # lghi %r2, 1
            + b"\xc0\x30" + struct.pack(">i", (msg - (pc + 4)) // 2)  # larl %r3, msg (halfwords)
            + b"\xa7\x49" + struct.pack(">H", length)  # lghi %r4, len
            + b"\x0a\x04"  # svc 4 (write)
            b"\xa7\x29\x00\x00"  # lghi %r2, 0
            b"\x0a\x01")  # svc 1 (exit)


def _code_mips64el(pc, msg, length):
    return _words("<I", [
        0x24020000 | 5001,  # li v0, 5001 (n64 write)
        0x24040001,  # li a0, 1
        0x3C050000 | (msg >> 16),  # lui a1, msg@hi
        0x34A50000 | (msg & 0xFFFF),  # ori a1, a1, msg@lo
        0x24060000 | length,  # li a2, len
        0x0000000C,  # syscall
        0x24020000 | 5058,  # li v0, 5058 (n64 exit)
        0x24040000,  # li a0, 0
        0x0000000C,  # syscall
    ])


def _code_loongarch64(pc, msg, length):
    offset = (msg - (pc + 4)) >> 2  # pcaddi counts words from its own address

    def addi_d(rd, rj, imm):
        return 0x02C00000 | ((imm & 0xFFF) << 10) | (rj << 5) | rd

    return _words("<I", [
        addi_d(4, 0, 1),  # li a0, 1
        0x18000000 | ((offset & 0xFFFFF) << 5) | 5,  # pcaddi a1, msg
        addi_d(6, 0, length),  # li a2, len
        addi_d(11, 0, 64),  # li a7, 64 (write)
        0x002B0000,  # syscall 0
        addi_d(4, 0, 0),  # li a0, 0
        addi_d(11, 0, 93),  # li a7, 93 (exit)
        0x002B0000,  # syscall 0
    ])


_CODE = {
    "x86_64": _code_x86_64,
    "i386": _code_i386,
    "aarch64": _code_aarch64,
    "arm": _code_arm,
    "riscv64": _code_riscv64,
    "ppc64le": _code_ppc64le,
    "s390x": _code_s390x,
    "mips64el": _code_mips64el,
    "loongarch64": _code_loongarch64,
}
_BASE = {"ppc64le": 0x10000000}


def build_probe(arch):
    """A static ELF executable for arch that prints probe_message(arch) and exits 0."""
    name = qemu_arch(arch)
    info = ARCHES[name]
    little = info.elf_endian == "little"
    end = "<" if little else ">"
    is64 = info.elf_class == 64
    ehsize, phsize = (64, 56) if is64 else (52, 32)
    base = _BASE.get(name, 0x400000 if is64 else 0x10000)
    message = probe_message(name)
    entry = base + ehsize + phsize
    code_len = len(_CODE[name](entry, entry, len(message)))
    msg_addr = entry + ((code_len + 3) & ~3)
    code = _CODE[name](entry, msg_addr, len(message))
    body = code + b"\x00" * (msg_addr - entry - len(code)) + message
    size = ehsize + phsize + len(body)
    ident = b"\x7fELF" + bytes([2 if is64 else 1, 1 if little else 2, 1]) + b"\x00" * 9
    if is64:
        header = ident + struct.pack(end + "HHIQQQIHHHHHH", 2, info.elf_machine, 1, entry, ehsize, 0,
                                     info.elf_flags, ehsize, phsize, 1, 0, 0, 0)
        program = struct.pack(end + "IIQQQQQQ", 1, 5, 0, base, base, size, size, 0x10000)
    else:
        header = ident + struct.pack(end + "HHIIIIIHHHHHH", 2, info.elf_machine, 1, entry, ehsize, 0,
                                     info.elf_flags, ehsize, phsize, 1, 0, 0, 0)
        program = struct.pack(end + "IIIIIIII", 1, 0, base, base, size, size, 5, 0x10000)
    return header + program + body


def kernel_native(machine, shell_header, shell=KERNEL_SHELL):
    """What a kernel runs natively, from its uname -m (machine) and the ELF header of its own shell.

    Both are asked because either alone can be fooled (a personality such as setarch i686 changes uname; a shell
    may be missing). Returns {'uname', 'uname_arch', 'shell', 'shell_arch', 'arch', 'native'}: arch is the
    kernel's own architecture, native every architecture it runs without emulation (the union of both answers).
    """
    try:
        uname_arch = qemu_arch(machine)
    except UnknownArchError:
        uname_arch = None
    shell_arch = arch_from_elf(shell_header)
    if uname_arch is None and shell_arch is None:
        raise BinfmtError("cannot tell what the running kernel executes natively: uname -m says %r and %s is not an "
                          "ELF executable of a known architecture" % (machine, shell))
    native = []
    for name in (uname_arch, shell_arch):
        for arch in native_arches(name) if name else ():
            if arch not in native:
                native.append(arch)
    return {"uname": machine, "uname_arch": uname_arch, "shell": shell, "shell_arch": shell_arch,
            "arch": uname_arch or shell_arch, "native": native}


def read_header(path, size=64):
    """First size bytes of path (a regular file), b"" when it cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except (IOError, OSError):
        return b""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return b""
        return os.read(fd, size)
    except (IOError, OSError):
        return b""
    finally:
        os.close(fd)


def running_kernel(shell=KERNEL_SHELL):
    """kernel_native() of the kernel this code runs on: os.uname() and its own shell, never a fact or a parameter."""
    return kernel_native(os.uname()[4], read_header(os.path.realpath(shell)), shell)


def check_declared_arch(declared, kernel, what="host_arch"):
    """Raise BinfmtError when a declared host architecture (a parameter or a fact) disagrees with the kernel."""
    if declared in (None, ""):
        return
    try:
        name = qemu_arch(declared)
    except UnknownArchError as exc:
        raise BinfmtError("%s: %s" % (what, exc))
    if name not in kernel["native"]:
        raise BinfmtError(
            "%s is %s but the running kernel is %s (uname -m: %s; %s: %s executable). A stale or wrong fact? "
            "Nothing was changed: the kernel decides which architectures are native."
            % (what, declared, kernel["arch"], kernel["uname"], kernel["shell"], kernel["shell_arch"] or "not a known ELF"))


def native_headers(native, extra_paths=(KERNEL_SHELL,)):
    """(label, first 64 bytes) of a probe for every native architecture, plus real native binaries.

    native: the architectures the kernel runs natively (kernel_native()['native']), or one host name.
    """
    arches = native_arches(native) if isinstance(native, str) else native
    headers = [("probe:" + name, build_probe(name)[:64]) for name in arches]
    for path in extra_paths:
        header = read_header(os.path.realpath(path))
        if header:
            headers.append((path, header))
    return headers


def native_matches(entry, headers):
    """Labels of the native headers the entry would take (empty when it matches none)."""
    if entry is None:
        return []
    return [label for label, header in headers if entry.matches(header)]


def hijackers(entries, native, extra_paths=(KERNEL_SHELL,), headers=None):
    """Enabled handlers that would take over native executables: [{'name', 'matches': [labels]}]."""
    found = []
    headers = native_headers(native, extra_paths) if headers is None else headers
    for name in sorted(entries):
        entry = entries[name]
        if not entry.enabled:
            continue
        labels = native_matches(entry, headers)
        if labels:
            found.append({"name": name, "interpreter": entry.interpreter, "matches": labels})
    return found
