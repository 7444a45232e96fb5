"""The qemu_binfmt role's input check (filter qemu_binfmt_input_problem): one message per failing check."""

import pytest

from ansible_collections.aisbench.agent_runtime.plugins.filter.qemu_binfmt import (
    qemu_binfmt_check, qemu_binfmt_enabled, qemu_binfmt_input_problem, qemu_binfmt_mode)

DEBIAN_X86 = {"architecture": "x86_64", "os_family": "Debian", "distribution": "Debian"}


def config(**changes):
    base = {"state": "present", "mode": "auto", "flags": "OCF", "interpreter": "/usr/bin/qemu-{arch}-static",
            "arches": "common", "image_platforms": [], "runtime_platform": "linux/amd64", "container": "auto",
            "strict": True}
    base.update(changes)
    return base


def test_good_input_has_no_problem():
    assert qemu_binfmt_input_problem(config(), DEBIAN_X86) == ""
    assert qemu_binfmt_input_problem(config(mode=True, arches=["aarch64", "linux/arm/v7"]), DEBIAN_X86) == ""


@pytest.mark.parametrize("changes", [
    {"state": "installed"}, {"mode": "sometimes"}, {"flags": "OC"}, {"flags": "FX"}, {"interpreter": "qemu"},
    {"arches": []}, {"arches": "all"}, {"image_platforms": "linux/arm64"}, {"container": "maybe"},
])
def test_bad_variables_name_every_variable(changes):
    problem = qemu_binfmt_input_problem(config(**changes), DEBIAN_X86)
    assert problem.startswith("Bad qemu_binfmt input: qemu_binfmt_state=")
    assert "qemu_binfmt_container=" in problem
    # Names are not checked while the variables are not sane.
    assert "Unknown architecture" not in problem


def test_unknown_architecture_is_named_with_the_host_arch():
    problem = qemu_binfmt_input_problem(config(arches=["pdp11"], image_platforms=["linux/vax"]), DEBIAN_X86)
    assert problem.startswith("Unknown architecture(s) linux/vax, pdp11 in qemu_binfmt_arches")
    assert "the host's architecture (x86_64)" in problem


def test_not_debian_only_when_present():
    redhat = dict(DEBIAN_X86, os_family="RedHat", distribution="Fedora")
    assert qemu_binfmt_input_problem(config(), redhat) == \
        "qemu_binfmt supports Debian 12/13 and Ubuntu 22.04/24.04, not Fedora."
    assert qemu_binfmt_input_problem(config(state="absent"), redhat) == ""


@pytest.mark.parametrize("strict, mode, expected", [
    (True, "yes", True), ("yes", "auto", False), (True, "auto", False), (False, "yes", False), ("true", True, True),
])
def test_strict_refuses_the_hosts_own_arch(strict, mode, expected):
    # auto on an x86_64 host that runs the amd64 runtime image natively: the role registers nothing, so no refusal.
    problem = qemu_binfmt_input_problem(config(arches=["x86_64", "aarch64"], strict=strict, mode=mode), DEBIAN_X86)
    assert (problem == "qemu_binfmt_arches asks for x86_64, which this x86_64 host runs natively: a handler for it "
            "would route the host's own executables through an emulator. Remove it from qemu_binfmt_arches (or set "
            "qemu_binfmt_strict: false to skip it with a warning).") is expected
    if not expected:
        assert problem == ""


def test_several_problems_in_one_message():
    redhat = dict(DEBIAN_X86, os_family="RedHat", distribution="Fedora")
    problem = qemu_binfmt_input_problem(config(arches=["pdp11"]), redhat)
    assert problem.startswith("Unknown architecture(s) pdp11")
    assert problem.endswith("not Fedora.")


@pytest.mark.parametrize("mode, host, runtime, expected", [
    ("yes", "x86_64", "linux/amd64", True), (True, "x86_64", "linux/amd64", True),
    ("auto", "aarch64", "linux/amd64", True), ("AUTO", "x86_64", "linux/amd64", False),
    ("auto", "arm64", "linux/arm64", False), ("no", "aarch64", "linux/amd64", False), (False, "aarch64", "linux/amd64", False),
])
def test_enabled_follows_the_mode_and_the_runtime_platform(mode, host, runtime, expected):
    assert qemu_binfmt_enabled(mode, host, runtime) is expected


def test_mode_is_one_word():
    assert [qemu_binfmt_mode(value) for value in (True, False, "Auto", "no")] == ["yes", "no", "auto", "no"]


def test_check_reports_why_nothing_is_registered():
    assert qemu_binfmt_check(config(), DEBIAN_X86) == {
        "problem": "",
        "note": "qemu_binfmt_mode is auto and the host (x86_64) runs the runtime image (linux/amd64) natively: nothing registered"}
    assert qemu_binfmt_check(config(mode=False), DEBIAN_X86)["note"] == "qemu_binfmt_mode is no: nothing registered"
    assert qemu_binfmt_check(config(mode="yes"), DEBIAN_X86)["note"].startswith("registering handlers")
    assert qemu_binfmt_check(config(state="absent"), DEBIAN_X86)["note"].startswith("qemu_binfmt_state is absent")


def test_check_carries_the_problem_and_no_note():
    result = qemu_binfmt_check(config(arches=["pdp11"]), DEBIAN_X86)
    assert result["problem"].startswith("Unknown architecture(s) pdp11")
    assert result["note"] == ""
