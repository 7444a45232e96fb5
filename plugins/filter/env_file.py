# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""Env file text for roles: the same rule harbor_job writes its env files with (module_utils/env_file.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: env_file
short_description: Env file text (dotenv or docker --env-file) from a mapping of names to values
version_added: 0.2.0
description:
  - The collection's one env-file rule (C(plugins/module_utils/env_file.py)), also used by the harbor_job module.
  - Keys are sorted. C(dotenv) (Harbor's C(--env-file), python-dotenv) single-quotes every value and escapes
    C(\) and C(') with a backslash; C(docker) (C(docker --env-file)) writes values as they are. A null value is empty.
  - Refuses, naming the keys but never the values, a key that is not a variable name, a value with a line break
    or NUL (neither style can carry one) and, for C(dotenv), a value with C(${) (python-dotenv expands it even in
    single quotes).
positional: _input, style
options:
  _input:
    description: Names to values (values are written as strings).
    type: dict
    required: true
  style:
    description: C(dotenv) or C(docker).
    type: str
    default: dotenv
  header:
    description: Lines written first, each as a C(# ) comment.
    type: list
    elements: str
    default: []
"""

EXAMPLES = r"""
content: "{{ {'OPENAI_API_KEY': vault_key} | aisbench.agent_runtime.env_file('dotenv', header=['Managed by Ansible']) }}"
# -> "# Managed by Ansible\nOPENAI_API_KEY='sk-...'\n"
"""

RETURN = r"""
_value:
  description: The file's text, one C(KEY=value) line a key, ending in a newline (empty for no keys and no header).
  type: str
"""

from ansible.errors import AnsibleFilterError
from ansible_collections.aisbench.agent_runtime.plugins.module_utils.env_file import (
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
