# -*- coding: utf-8 -*-
"""plugins/filter/arch.py: the filters roles use to pick architectures."""

import os
import sys

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, ".cache", "collections"))

from ansible.errors import AnsibleFilterError  # noqa: E402
from ansible_collections.aisbench.agent_runtime.plugins.filter.arch import FilterModule  # noqa: E402

FILTERS = FilterModule().filters()


def test_the_filters_are_registered():
    assert set(FILTERS) == {"qemu_arch", "unknown_arches", "binfmt_arches", "task_platform"}


def test_name_filters():
    assert FILTERS["qemu_arch"]("arm64") == "aarch64"
    assert FILTERS["qemu_arch"]("linux/arm/v7") == "arm"


def test_an_unknown_arch_is_a_filter_error_naming_it():
    with pytest.raises(AnsibleFilterError, match="sparc9"):
        FILTERS["qemu_arch"]("sparc9")
    with pytest.raises(AnsibleFilterError, match="sparc9"):
        FILTERS["binfmt_arches"](["aarch64", "sparc9"], "x86_64")


def test_unknown_arches():
    assert FILTERS["unknown_arches"](["arm64", "nope"]) == ["nope"]
    assert FILTERS["unknown_arches"]("nope") == ["nope"]


def test_binfmt_arches_common_never_lists_the_host():
    on_x86 = FILTERS["binfmt_arches"]("common", "x86_64")
    assert on_x86["requested"] == ["aarch64", "arm", "ppc64le", "s390x", "riscv64"]
    assert on_x86["native"] == [] and on_x86["explicit"] is False
    on_arm = FILTERS["binfmt_arches"]("common", "aarch64")
    assert on_arm["foreign"] == ["x86_64", "i386", "arm", "ppc64le", "s390x", "riscv64"]


def test_binfmt_arches_auto_uses_the_image_platforms():
    result = FILTERS["binfmt_arches"]("auto", "aarch64", ["linux/amd64", "linux/arm64", "linux/amd64"])
    assert result == {"requested": ["x86_64", "aarch64"], "foreign": ["x86_64"], "native": ["aarch64"],
                      "explicit": False}
    assert FILTERS["binfmt_arches"]("auto", "x86_64", ["linux/amd64"])["foreign"] == []


def test_binfmt_arches_explicit_list_reports_native_members():
    result = FILTERS["binfmt_arches"](["aarch64", "amd64", "linux/386"], "x86_64")
    assert result == {"requested": ["aarch64", "x86_64", "i386"], "foreign": ["aarch64"],
                      "native": ["x86_64", "i386"], "explicit": True}


def test_binfmt_arches_refuses_other_words():
    with pytest.raises(AnsibleFilterError, match="common"):
        FILTERS["binfmt_arches"]("all", "x86_64")


@pytest.mark.parametrize("name", sorted(FILTERS))
def test_every_filter_has_documentation(name):
    import yaml

    with open(os.path.join(ROOT, "plugins", "filter", name + ".yml")) as handle:
        doc = yaml.safe_load(handle)
    assert doc["DOCUMENTATION"]["name"] == name
    assert "aisbench.agent_runtime.%s" % name in doc["EXAMPLES"]
