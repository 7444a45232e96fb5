# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""Architecture name filters: uname -m <-> QEMU <-> Docker platform <-> Debian architecture."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible.errors import AnsibleFilterError
from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _arch as arch_utils


def _wrap(function):
    def wrapped(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except arch_utils.UnknownArchError as exc:
            raise AnsibleFilterError(str(exc))

    wrapped.__name__ = function.__name__
    wrapped.__doc__ = function.__doc__
    return wrapped


def _as_list(value):
    if isinstance(value, str):
        return [value]
    return list(value or [])


def unknown_arches(values):
    """The values no architecture table entry knows."""
    return arch_utils.unknown_names(_as_list(values))


def binfmt_arches(selection, host, platforms=None):
    """Resolve qemu_binfmt_arches: 'common', 'auto' (from image platforms) or a list.

    Returns {'requested', 'foreign', 'native', 'explicit'}; native holds the requested
    architectures the host runs itself ('common' never lists them; 'auto' may).
    """
    if selection == "common":
        requested = list(arch_utils.COMMON_ARCHES)
        explicit = False
        requested = [name for name in requested if name not in arch_utils.native_arches(host)]
    elif selection == "auto":
        requested = [arch_utils.qemu_arch(platform) for platform in _as_list(platforms)]
        explicit = False
    elif isinstance(selection, str):
        raise AnsibleFilterError("qemu_binfmt_arches must be 'common', 'auto' or a list, got %r" % selection)
    else:
        requested = [arch_utils.qemu_arch(name) for name in _as_list(selection)]
        explicit = True
    foreign, native = arch_utils.split_native(requested, host)
    return {"requested": list(dict.fromkeys(requested)), "foreign": foreign, "native": native, "explicit": explicit}


# The platform trials' images run as where the site says nothing: arm64 hosts run the x86_64 task images (SWE-bench
# publishes them for amd64 only) under qemu; every other host runs its own platform.
DEFAULT_TASK_PLATFORM_ON = {"aarch64": "linux/amd64"}


def task_platform(host_arch, override="", setting="the task platform"):
    """The Docker platform of the task images on a host: override when given, else the default for its architecture."""
    if override:
        if not isinstance(override, str) or not re.match(r"^[a-z0-9]+/[a-z0-9]+(/[a-z0-9]+)?\Z", override):
            raise AnsibleFilterError("%s: %r is not os/arch[/variant], e.g. linux/amd64" % (setting, override))
        return override
    return DEFAULT_TASK_PLATFORM_ON.get(arch_utils.qemu_arch(host_arch), "")


class FilterModule(object):
    def filters(self):
        return {
            "qemu_arch": _wrap(arch_utils.qemu_arch),
            "unknown_arches": unknown_arches,
            "binfmt_arches": _wrap(binfmt_arches),
            "task_platform": _wrap(task_platform),
        }
