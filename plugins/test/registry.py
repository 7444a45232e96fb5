# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""The registry test: a registry host[:port] by the collection's one rule (module_utils/_validation.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.aisbench.agent_runtime.plugins.module_utils._validation import registry_host_problem


def registry(value):
    """True when value is a registry host[:port] (see validation.registry_host_problem)."""
    return registry_host_problem(value) is None


class TestModule(object):
    def tests(self):
        return {"registry": registry}
