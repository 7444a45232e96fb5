# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""Filters for the baked_images role's agent toolchains (the rules live in module_utils/agent_toolchains.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError
from ansible_collections.aisbench.agent_runtime.plugins.module_utils.agent_toolchains import (
    ToolchainError,
    base_failures,
    image_failures,
    stale_volumes,
    toolchain_labels,
    toolchain_plan,
    toolchain_summary,
)


def _toolchain_plan(agents, versions, recipes, images=None, archives=None, base="debian:13-slim", rebuild=False,
                    template_dirs=None, default_template=None, build_files=None):
    try:
        return toolchain_plan(agents, versions, recipes, images=images, archives=archives, base=base,
                              rebuild=bool(rebuild), template_dirs=template_dirs, default_template=default_template,
                              build_files=build_files)
    except (ToolchainError, OSError) as exc:
        raise AnsibleFilterError("baked_images: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {
            "toolchain_plan": _toolchain_plan,
            "toolchain_labels": toolchain_labels,
            "toolchain_stale_volumes": stale_volumes,
            "image_failures": image_failures,
            "toolchain_base_failures": base_failures,
            "toolchain_summary": toolchain_summary,
        }
