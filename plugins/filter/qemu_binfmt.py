# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""The qemu_binfmt role's decisions: its input check (every problem, as one message), the mode, whether it registers
and what it reports."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible.module_utils.parsing.convert_bool import boolean
from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _arch as arch_utils
from ansible_collections.aisbench.agent_runtime.plugins.filter.arch import binfmt_arches

FLAGS = re.compile(r"[POCF]*\Z")


def _is_list(value):
    return isinstance(value, (list, tuple))


def qemu_binfmt_mode(value):
    """qemu_binfmt_mode as one word: YAML's true/false are yes/no, strings lower-cased."""
    if value is True:
        return "yes"
    if value is False:
        return "no"
    return str(value).lower()


def qemu_binfmt_enabled(mode, host_arch, runtime_platform):
    """Whether the role registers handlers: mode yes, or auto on a host that cannot run the runtime image natively."""
    mode = qemu_binfmt_mode(mode)
    return mode == "yes" or (mode == "auto" and arch_utils.qemu_arch(host_arch) != arch_utils.qemu_arch(runtime_platform))


def _scalars_ok(config, mode):
    flags = config.get("flags")
    interpreter = config.get("interpreter")
    arches = config.get("arches")
    return (config.get("state") in ("present", "absent")
            and mode in ("auto", "yes", "no")
            and isinstance(flags, str) and FLAGS.match(flags) is not None and "F" in flags
            and isinstance(interpreter, str) and interpreter.startswith("/")
            and (arches in ("common", "auto") or (_is_list(arches) and len(arches) > 0))
            and _is_list(config.get("image_platforms"))
            and config.get("container") in ("auto", True, False))


def qemu_binfmt_input_problem(config, facts):
    """'' when the role may go on, else the message of every check that fails (validation before any write).

    config: the role's variables without their qemu_binfmt_ prefix (state, mode, flags, interpreter, arches,
    image_platforms, runtime_platform, container, strict). facts: ansible_facts (architecture, os_family,
    distribution). Names are checked only when the variables are sane, and the strict check resolves the
    list only when every name is known.
    """
    mode = qemu_binfmt_mode(config.get("mode"))
    arch = facts.get("architecture")
    scalars_ok = _scalars_ok(config, mode)
    arches = config.get("arches")
    listed = [] if isinstance(arches, str) else list(arches or [])
    unknown = arch_utils.unknown_names([arch, config.get("runtime_platform")] + list(config.get("image_platforms") or [])
                                       + listed) if scalars_ok else []
    host = arch_utils.qemu_arch(arch) if scalars_ok and not unknown else ""
    native = []
    if (host and config.get("state") == "present" and boolean(config.get("strict"), strict=False)
            and not isinstance(arches, str) and qemu_binfmt_enabled(mode, host, config.get("runtime_platform"))):
        native = binfmt_arches(arches, host, config.get("image_platforms"))["native"]
    problems = []
    if not scalars_ok:
        problems.append(
            "Bad qemu_binfmt input: qemu_binfmt_state=%s (present|absent), qemu_binfmt_mode=%s (auto|yes|no), "
            "qemu_binfmt_flags=%s (letters of POCF and must contain F so emulation works inside containers), "
            "qemu_binfmt_interpreter=%s (absolute path, {arch} is replaced), qemu_binfmt_arches=%s (common, auto or a "
            "non-empty list), qemu_binfmt_image_platforms=%s (a list), qemu_binfmt_container=%s (auto|true|false)."
            % (config.get("state"), config.get("mode"), config.get("flags"), config.get("interpreter"), arches,
               config.get("image_platforms"), config.get("container")))
    if unknown:
        problems.append(
            "Unknown architecture(s) %s in qemu_binfmt_arches, qemu_binfmt_image_platforms, qemu_binfmt_runtime_platform "
            "or the host's architecture (%s). Use uname -m names (x86_64, aarch64, armv7l), Docker platforms "
            "(linux/amd64, linux/arm64, linux/arm/v7) or Debian architectures (amd64, arm64, armhf)."
            % (", ".join(str(name) for name in unknown), arch))
    if config.get("state") == "present" and facts.get("os_family") != "Debian":
        problems.append("qemu_binfmt supports Debian 12/13 and Ubuntu 22.04/24.04, not %s." % facts.get("distribution"))
    if native:
        problems.append(
            "qemu_binfmt_arches asks for %s, which this %s host runs natively: a handler for it would route the host's "
            "own executables through an emulator. Remove it from qemu_binfmt_arches (or set qemu_binfmt_strict: false "
            "to skip it with a warning)." % (", ".join(native), host))
    return " ".join(problems)


def qemu_binfmt_check(config, facts):
    """The input check and, when it passes, what the role does: {'problem': '', 'note': ...}.

    The note is what the role reports on success (the reason nothing is registered, when that is so), so that a
    no-change run shows it without a task of its own.
    """
    problem = qemu_binfmt_input_problem(config, facts)
    if problem:
        return {"problem": problem, "note": ""}
    mode = qemu_binfmt_mode(config.get("mode"))
    host = arch_utils.qemu_arch(facts.get("architecture"))
    if config.get("state") == "absent":
        note = "qemu_binfmt_state is absent: unregistering the handlers this role registered"
    elif qemu_binfmt_enabled(mode, host, config.get("runtime_platform")):
        note = "registering handlers for foreign architectures on this %s host" % host
    elif mode == "no":
        note = "qemu_binfmt_mode is no: nothing registered"
    else:
        note = ("qemu_binfmt_mode is auto and the host (%s) runs the runtime image (%s) natively: nothing registered"
                % (host, config.get("runtime_platform")))
    return {"problem": "", "note": note}


class FilterModule(object):
    def filters(self):
        return {"qemu_binfmt_input_problem": qemu_binfmt_input_problem, "qemu_binfmt_mode": qemu_binfmt_mode,
                "qemu_binfmt_enabled": qemu_binfmt_enabled, "qemu_binfmt_check": qemu_binfmt_check}
