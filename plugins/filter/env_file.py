# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""Env file text for roles: the same rule harbor_job writes its env files with (module_utils/_env_file.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._env_file import (
    EnvFileError,
    bad_env_keys,
    checked_env_file,
    env_file_names,
)


def env_file(env, style="dotenv", header=None):
    try:
        return checked_env_file(env, style, header=header)
    except EnvFileError as exc:
        raise AnsibleFilterError("env_file: %s" % exc)


def env_file_bad_keys(env, style="dotenv"):
    if env is not None and not isinstance(env, dict):
        raise AnsibleFilterError("env_file_bad_keys: needs a mapping of names to values, got %s" % type(env).__name__)
    return bad_env_keys(env, style)


class FilterModule(object):
    def filters(self):
        return {"env_file": env_file, "env_file_bad_keys": env_file_bad_keys, "env_file_names": env_file_names}
