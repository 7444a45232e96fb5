# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # The registry_logins option of preflight_checks and docker_engine_state (its spec: module_utils/_registry.py).
    DOCUMENTATION = r"""
options:
  registry_logins:
    description:
      - Registries and the credentials root logs in to them with (C(docker login); the docker_engine role's
        C(docker_engine_registry_logins)). The passwords are never returned.
    type: list
    elements: dict
    default: []
    suboptions:
      registry:
        description: The registry, C(host[:port]) (reached over https).
        type: str
        required: true
      username:
        description: The user.
        type: str
        required: true
      password:
        description: The password or token.
        type: str
        required: true
"""
