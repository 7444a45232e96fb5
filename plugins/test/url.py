# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""The url test: the collection's one URL rule (module_utils/_validation.py), for roles' asserts."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.aisbench.agent_runtime.plugins.module_utils._validation import url_problem


def url(value, schemes=("http", "https"), credentials=False):
    """True when value is a base URL of one of schemes (see validation.url_problem)."""
    return url_problem(value, tuple(schemes), bool(credentials)) is None


class TestModule(object):
    def tests(self):
        return {"url": url}
