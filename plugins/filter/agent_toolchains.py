# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""Filters for the baked_images role's agent toolchains (the rules live in module_utils/_agent_toolchains.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

# module_utils/_agent_toolchains.py is imported on first use: Ansible loads every filter file of the collection in each
# task that uses any one of its filters, and the provisioning roles never use these.


def _rules():
    from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _agent_toolchains as agent_toolchains

    return agent_toolchains


def _toolchain_plan(agents, versions, recipes, images=None, archives=None, base="debian:13-slim", rebuild=False,
                    template_dirs=None, default_template=None, build_files=None, source="bake", registry=""):
    rules = _rules()
    try:
        return rules.toolchain_plan(agents, versions, recipes, images=images, archives=archives, base=base,
                                    rebuild=bool(rebuild), template_dirs=template_dirs,
                                    default_template=default_template, build_files=build_files, source=source,
                                    registry=registry)
    except (rules.ToolchainError, OSError) as exc:
        raise AnsibleFilterError("baked_images: %s" % exc)


def _toolchain_labels(*args, **kwargs):
    return _rules().toolchain_labels(*args, **kwargs)


def _stale_volumes(*args, **kwargs):
    return _rules().stale_volumes(*args, **kwargs)


def _image_failures(*args, **kwargs):
    return _rules().image_failures(*args, **kwargs)


def _base_failures(*args, **kwargs):
    return _rules().base_failures(*args, **kwargs)


def _toolchain_summary(*args, **kwargs):
    return _rules().toolchain_summary(*args, **kwargs)


def _pull_failures(*args, **kwargs):
    return _rules().pull_failures(*args, **kwargs)


def _push_plan(*args, **kwargs):
    return _rules().push_plan(*args, **kwargs)


class FilterModule(object):
    def filters(self):
        return {
            "toolchain_plan": _toolchain_plan,
            "toolchain_labels": _toolchain_labels,
            "toolchain_stale_volumes": _stale_volumes,
            "image_failures": _image_failures,
            "toolchain_base_failures": _base_failures,
            "toolchain_summary": _toolchain_summary,
            "toolchain_pull_failures": _pull_failures,
            "toolchain_push_plan": _push_plan,
        }
