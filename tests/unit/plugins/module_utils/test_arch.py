# -*- coding: utf-8 -*-
"""plugins/module_utils/_arch.py: uname -m <-> QEMU <-> Docker platform <-> Debian architecture."""

import os
import sys

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, ".cache", "collections"))  # `make venv` links the collection there

from ansible.errors import AnsibleFilterError  # noqa: E402

from ansible_collections.aisbench.agent_runtime.plugins.filter.arch import FilterModule, task_platform  # noqa: E402
from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _arch as arch  # noqa: E402

# (spelling, canonical) pairs as users and tools write them.
SPELLINGS = [
    ("x86_64", "x86_64"), ("amd64", "x86_64"), ("linux/amd64", "x86_64"), ("LINUX/AMD64", "x86_64"),
    ("linux/amd64/v3", "x86_64"), (" x86_64 ", "x86_64"),
    ("i686", "i386"), ("i386", "i386"), ("linux/386", "i386"), ("386", "i386"),
    ("aarch64", "aarch64"), ("arm64", "aarch64"), ("linux/arm64", "aarch64"), ("linux/arm64/v8", "aarch64"),
    ("arm64/v8", "aarch64"),
    ("armv7l", "arm"), ("armv6l", "arm"), ("armv8l", "arm"), ("armhf", "arm"), ("armel", "arm"),
    ("linux/arm/v7", "arm"), ("linux/arm/v6", "arm"), ("linux/arm", "arm"), ("arm", "arm"),
    ("ppc64le", "ppc64le"), ("ppc64el", "ppc64le"), ("linux/ppc64le", "ppc64le"),
    ("s390x", "s390x"), ("linux/s390x", "s390x"),
    ("riscv64", "riscv64"), ("linux/riscv64", "riscv64"),
    ("mips64", "mips64el"), ("mips64el", "mips64el"), ("linux/mips64le", "mips64el"),
    ("loongarch64", "loongarch64"), ("loong64", "loongarch64"), ("linux/loong64", "loongarch64"),
]


@pytest.mark.parametrize("spelling,canonical", SPELLINGS)
def test_every_spelling_maps_to_its_qemu_name(spelling, canonical):
    assert arch.qemu_arch(spelling) == canonical


@pytest.mark.parametrize("name", list(arch.ARCHES))
def test_round_trips_through_every_naming_scheme(name):
    info = arch.ARCHES[name]
    assert arch.qemu_arch(arch.docker_platform(name)) == name
    assert arch.qemu_arch(arch.debian_arch(name)) == name
    assert arch.qemu_arch(arch.uname_machine(name)) == name
    assert arch.docker_platform(info.uname) == info.docker
    assert arch.debian_arch(info.docker) == info.debian


def test_the_usual_translations():
    assert arch.docker_platform("aarch64") == "linux/arm64"
    assert arch.docker_platform("x86_64") == "linux/amd64"
    assert arch.docker_platform("armv7l") == "linux/arm/v7"
    assert arch.debian_arch("x86_64") == "amd64"
    assert arch.debian_arch("linux/arm64") == "arm64"
    assert arch.debian_arch("linux/arm/v7") == "armhf"
    assert arch.debian_arch("ppc64le") == "ppc64el"
    assert arch.uname_machine("linux/amd64") == "x86_64"
    assert arch.uname_machine("arm64") == "aarch64"


@pytest.mark.parametrize("bad", ["sparc9", "", "   ", "linux/", "arm64x", "windows/amd64", None, 64])
def test_an_unknown_arch_is_a_clear_error(bad):
    with pytest.raises(arch.UnknownArchError) as error:
        arch.qemu_arch(bad)
    assert repr(bad) in str(error.value) or "empty or not a string" in str(error.value)


def test_the_error_lists_what_is_accepted():
    with pytest.raises(arch.UnknownArchError) as error:
        arch.docker_platform("sparc9")
    message = str(error.value)
    assert "'sparc9'" in message
    for hint in ("uname -m", "linux/arm64", "armhf", "x86_64"):
        assert hint in message


def test_a_non_linux_platform_is_refused():
    with pytest.raises(arch.UnknownArchError, match="not a Linux platform"):
        arch.qemu_arch("windows/amd64")


def test_native_arches():
    assert arch.native_arches("x86_64") == ("x86_64", "i386")
    assert arch.native_arches("amd64") == ("x86_64", "i386")
    assert arch.native_arches("aarch64") == ("aarch64",)
    assert arch.native_arches("linux/arm/v7") == ("arm",)


def test_split_native_keeps_order_and_drops_duplicates():
    foreign, native = arch.split_native(["linux/arm64", "x86_64", "aarch64", "386", "armhf", "amd64"], "x86_64")
    assert foreign == ["aarch64", "arm"]
    assert native == ["x86_64", "i386"]
    foreign, native = arch.split_native(["linux/amd64", "linux/arm64"], "aarch64")
    assert foreign == ["x86_64"]
    assert native == ["aarch64"]


def test_split_native_refuses_unknown_names():
    with pytest.raises(arch.UnknownArchError):
        arch.split_native(["aarch64", "sparc9"], "x86_64")


def test_unknown_names():
    assert arch.unknown_names(["aarch64", "sparc9", "linux/arm64", "vax"]) == ["sparc9", "vax"]
    assert arch.unknown_names([]) == []


def test_common_arches_are_known_and_each_host_has_foreign_ones():
    for name in arch.COMMON_ARCHES:
        assert name in arch.ARCHES
    for host in ("x86_64", "aarch64"):
        foreign, _native = arch.split_native(arch.COMMON_ARCHES, host)
        assert host not in foreign
        assert len(foreign) >= 4


def test_known_names_has_every_spelling_once():
    names = arch.known_names()
    assert names == sorted(set(names))
    for spelling, _canonical in SPELLINGS:
        assert spelling.strip().lower() in names


@pytest.mark.parametrize("host, override, expected", [
    ("aarch64", "", "linux/amd64"),
    ("arm64", "", "linux/amd64"),
    ("x86_64", "", ""),
    ("ppc64le", "", ""),
    ("aarch64", "linux/arm64", "linux/arm64"),
    ("x86_64", "linux/arm/v7", "linux/arm/v7"),
])
def test_task_platform_default_and_override(host, override, expected):
    assert task_platform(host, override) == expected


@pytest.mark.parametrize("override", ["amd64", "linux/AMD64", "linux/amd64\n", ["linux/amd64"]])
def test_task_platform_refuses_a_bad_override_naming_the_setting(override):
    with pytest.raises(AnsibleFilterError, match=r"^runtime_container_task_platform: .* is not os/arch\[/variant\]"):
        task_platform("aarch64", override, "runtime_container_task_platform")


def test_task_platform_refuses_an_unknown_host_arch():
    with pytest.raises(AnsibleFilterError, match="vax"):
        FilterModule().filters()["task_platform"]("vax")
