# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""The runtime contract (module_utils/_runtime_contract.py) as filters: built by the runtime_container role,
checked by the playbooks that read it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._runtime_contract import (
    ContractError,
    build_contract,
    contract_problem,
)

BUILD_KEYS = ("mounts", "container", "mode", "engine_docker_host", "root", "run_dir", "image", "harbor_version",
              "matrix", "api_keys", "model_endpoint")


def runtime_contract(built):
    if not isinstance(built, dict):
        raise AnsibleFilterError("runtime_contract expects a mapping, got %s" % type(built).__name__)
    unknown = sorted(set(built) - set(BUILD_KEYS))
    if unknown:
        raise AnsibleFilterError("runtime_contract: unknown keys %s" % ", ".join(unknown))
    try:
        return build_contract(**built)
    except (ContractError, TypeError) as exc:
        raise AnsibleFilterError("runtime_contract: %s" % exc)


def runtime_contract_problem(contract):
    return contract_problem(contract) or ""


FACTS_DIR = "/etc/ansible/facts.d"
CONTRACT_FACT = FACTS_DIR + "/aisbench_runtime.fact"


def runtime_container_writes(mounts, owner, group, dir_mode, plugin_sources=(), matrix_file="", api_key_file="",
                             api_key_sha1=""):
    """The runtime_container role's writes on the host as runtime_container_state entries: the mounted directories
    (secrets 0700), the collection's and the site's Harbor plugins, the job config, the API-key file (a controller
    file, or the digest of the rendered one), the local facts directory and the contract fact (read only: its content
    is known after the read). Two mounts at one container path fail, naming them."""
    if not isinstance(mounts, dict) or not all(isinstance(m, dict) and m.get("source") for m in mounts.values()):
        raise AnsibleFilterError("runtime_container_writes expects the role's mounts (name to source and target)")
    targets = [mount.get("target") for mount in mounts.values()]
    if len(set(targets)) != len(targets):
        raise AnsibleFilterError(
            "runtime_container: two host directories would be mounted at the same container path (%s); in host_socket"
            " mode the jobs, tasks, config and logs directories keep their host paths" % ", ".join(map(str, targets)))
    owned = {"owner": owner, "group": group}
    dirs = [dict(owned, key=name, path=mount["source"], mode="0700" if name == "secrets" else str(dir_mode))
            for name, mount in sorted(mounts.items()) if mount.get("type", "bind") == "bind"]
    dirs.append({"key": "facts_dir", "path": FACTS_DIR, "mode": "0755"})
    plugins_dir = mounts["harbor-plugins"]["source"]
    config_dir, secrets_dir = mounts["config"]["source"], mounts["secrets"]["source"]
    files = [dict(owned, key="plugins", src="harbor_plugins/", dest=plugins_dir, mode="0644")]
    files += [dict(owned, key="own_plugins", src=src.rstrip("/") + "/", dest=plugins_dir, mode="0644")
              for src in plugin_sources]
    if matrix_file:
        files.append(dict(owned, key="matrix", src=matrix_file, dest=config_dir + "/matrix.yaml", mode="0644"))
    api_key = dict(owned, key="api_key", dest=secrets_dir + "/api_key.env", mode="0600")
    files.append(dict(api_key, src=api_key_file) if api_key_file else dict(api_key, sha1=api_key_sha1))
    files.append({"key": "contract", "dest": CONTRACT_FACT})
    return {"dirs": dirs, "files": files}


class FilterModule(object):
    def filters(self):
        return {"runtime_contract": runtime_contract, "runtime_contract_problem": runtime_contract_problem,
                "runtime_container_writes": runtime_container_writes}
