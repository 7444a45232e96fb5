# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""The docker_host test: the collection's one Docker-endpoint rule (module_utils/_validation.py), for roles' asserts."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.aisbench.agent_runtime.plugins.module_utils._validation import docker_host_problem


def docker_host(value, schemes=("unix", "tcp", "ssh")):
    """True when value is a Docker endpoint of one of schemes (see validation.docker_host_problem)."""
    return docker_host_problem(value, tuple(schemes)) is None


class TestModule(object):
    def tests(self):
        return {"docker_host": docker_host}
