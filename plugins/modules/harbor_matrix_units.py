#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: harbor_matrix_units
short_description: List the tasks, agents and attempts a Harbor job config runs (for sharding it)
version_added: 0.2.0
description:
  - Reads a Harbor job config (the "matrix") on the target and lists the tasks of each of its local datasets the way
    Harbor 0.25 picks them (sorted task directories, then C(task_names), C(exclude_task_names) and C(n_tasks)), its
    agents (with their models) and C(n_attempts). The night's units are every task with every agent, C(n_attempts)
    times.
  - The nightly playbook's shard mode runs it on every host and gives the results to
    M(aisbench.agent_runtime.fleet_shard_plan), which splits the units across the hosts.
  - A task directory is one holding C(task.toml) and C(instruction.md). Harbor's deeper checks are not repeated; a
    task Harbor refuses to run is reported by the merge as missing units.
  - Changes nothing.
options:
  config:
    description:
      - The job config, a path as seen where Harbor runs (mapped to the target with O(path_map)) to a JSON or YAML
        file, or the config itself as a mapping.
      - YAML is read with PyYAML where present, otherwise through C(harbor job start -c CONFIG --print-config) in
        O(container).
    type: raw
    required: true
  datasets:
    description: Keep only the config's datasets whose path or name contains one of these strings (as harbor_job).
    type: list
    elements: str
    default: []
  agents:
    description: Keep only the config's agents with one of these names (as harbor_job).
    type: list
    elements: str
    default: []
  path_map:
    description:
      - Directories as seen where Harbor runs (keys) and the same directories on the target (values), for example
        C(/opt/swebench/tasks) to C(/srv/swebench/tasks). The longest matching prefix wins; other paths are read as they
        are.
      - Defaults to the jobs, tasks and config directories of O(runtime) (when this option is empty).
    type: dict
    default: {}
  container:
    description:
      - The runtime container, used only to read a YAML config through Harbor when PyYAML is missing.
      - Defaults to O(runtime)'s C(container).
    type: str
  harbor_executable:
    description: The Harbor CLI in O(container).
    type: str
    default: harbor
notes:
  - Datasets must be local (C(path)); registry and package datasets cannot be listed offline, and a config's
    C(tasks) list is not sharded. Both are refused.
author: aisbench maintainers (!UNKNOWN)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - aisbench.agent_runtime.runtime_contract
  - aisbench.agent_runtime.attributes
"""

EXAMPLES = r"""
- name: List the night's units
  aisbench.agent_runtime.harbor_matrix_units:
    config: /opt/swebench/config/matrix.yaml
    path_map:
      /opt/swebench/tasks: /srv/swebench/tasks
      /opt/swebench/config: /srv/swebench/config
    container: agent-runtime
  register: units
"""

RETURN = r"""
matrix:
  description: The config after the O(datasets) and O(agents) filters (what the shards are cut from).
  returned: always
  type: dict
datasets:
  description: One item per dataset of the config, C(benchmark) (Harbor's source name), C(path) (as Harbor sees it),
    C(host_path) and C(tasks) (task directory names, in Harbor's order).
  returned: always
  type: list
  elements: dict
agents:
  description: One item per agent entry, C(agent) (its name; C(oracle) when the config names none) and C(model).
  returned: always
  type: list
  elements: dict
n_attempts:
  description: Attempts per task and agent.
  returned: always
  type: int
n_units:
  description: Tasks x agents x attempts.
  returned: always
  type: int
"""

import fnmatch
import json
import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._harbor_results import DEFAULT_AGENT, read_regular_file
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._harbor_runner import (
    HarborJobError,
    Runtime,
    config_through_harbor,
    filter_matrix,
    harbor_cli_spelling,
    parse_config_text,
)
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._runtime_contract import apply_contract


def map_path(path, path_map):
    """The target's path of a path as Harbor sees it (longest prefix of path_map), normalized."""
    path = os.path.normpath(str(path))
    best = None
    for inner in path_map:
        inner_norm = os.path.normpath(str(inner))
        if path == inner_norm or path.startswith(inner_norm.rstrip("/") + "/"):
            if best is None or len(inner_norm) > len(best):
                best = inner_norm
    if best is None:
        return path
    return os.path.normpath(str(path_map[best]) + path[len(best):])


def is_task_dir(path):
    return os.path.isfile(os.path.join(path, "task.toml")) and os.path.isfile(os.path.join(path, "instruction.md"))


def dataset_tasks(entry, host_path):
    """Task directory names of a local dataset, as Harbor 0.25 selects them (DatasetConfig._filter_task_ids)."""
    try:
        names = sorted(name for name in os.listdir(host_path) if is_task_dir(os.path.join(host_path, name)))
    except OSError as exc:
        raise HarborJobError("dataset %s: cannot list %s on the target: %s" % (entry.get("path"), host_path, exc.strerror or exc))
    patterns = entry.get("task_names")
    if patterns:
        chosen = [name for name in names if any(fnmatch.fnmatchcase(name, str(p)) for p in patterns)]
        if not chosen:
            raise HarborJobError("dataset %s: no task matches task_names %s" % (entry.get("path"), list(patterns)))
        names = chosen
    excluded = entry.get("exclude_task_names")
    if excluded:
        names = [name for name in names if not any(fnmatch.fnmatchcase(name, str(p)) for p in excluded)]
    if isinstance(entry.get("n_tasks"), int) and not isinstance(entry.get("n_tasks"), bool):
        names = names[:entry["n_tasks"]]
    return names


def read_config(module, path, path_map):
    host_path = map_path(path, path_map)
    try:
        text = read_regular_file(host_path).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise HarborJobError("cannot read the job config %s (on the target: %s): %s" % (path, host_path, getattr(exc, "strerror", None) or exc))
    config = parse_config_text(text, path)
    if config is None:
        if not module.params["container"]:
            raise HarborJobError("the job config %s is YAML and PyYAML is missing on the target; set container to "
                                 "read it through Harbor, or give the config as a mapping" % path)
        # No PyYAML on the target: Harbor parses it where it runs.
        runtime = Runtime(module, module.params["container"])
        harbor = module.params["harbor_executable"]
        config = config_through_harbor(runtime, harbor, harbor_cli_spelling(runtime, harbor), path)
    return config


def list_units(module):
    params = module.params
    config = params["config"]
    if isinstance(config, str):
        config = read_config(module, config, params["path_map"])
    if not isinstance(config, dict):
        raise HarborJobError("the job config must be a mapping, got %s" % type(config).__name__)
    matrix = filter_matrix(config, params["datasets"], params["agents"])
    if matrix.get("tasks"):
        raise HarborJobError("the config's tasks list cannot be sharded; put the tasks in a local dataset (datasets[].path)")
    datasets = []
    for entry in matrix.get("datasets") or []:
        if not isinstance(entry, dict) or not entry.get("path") or entry.get("repo"):
            raise HarborJobError("dataset %s is not a local dataset (path): only local datasets can be listed and sharded"
                                 % json.dumps(entry, sort_keys=True))
        host_path = map_path(entry["path"], params["path_map"])
        # Harbor names the source after the resolved directory (DatasetConfig._get_local_task_configs).
        benchmark = os.path.basename(os.path.realpath(host_path)) or os.path.basename(os.path.normpath(entry["path"]))
        if any(d["benchmark"] == benchmark for d in datasets):
            raise HarborJobError("two datasets are both named %s: Harbor would merge their results; rename one" % benchmark)
        datasets.append({"benchmark": benchmark, "path": str(entry["path"]), "host_path": host_path,
                         "tasks": dataset_tasks(entry, host_path)})
    if not datasets:
        raise HarborJobError("the job config has no datasets")
    agents = matrix.get("agents") if isinstance(matrix.get("agents"), list) and matrix.get("agents") else [{"name": DEFAULT_AGENT}]
    listed = []
    for agent in agents:
        agent = agent if isinstance(agent, dict) else {}
        listed.append({"agent": str(agent.get("name") or DEFAULT_AGENT),
                       "model": str(agent["model_name"]) if agent.get("model_name") else None})
    attempts = matrix.get("n_attempts", 1)
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
        raise HarborJobError("n_attempts must be a whole number of at least 1, got %r" % (attempts,))
    n_tasks = sum(len(d["tasks"]) for d in datasets)
    if not n_tasks:
        raise HarborJobError("the job config's datasets hold no task directories (task.toml and instruction.md)")
    return {"changed": False, "matrix": matrix, "datasets": datasets, "agents": listed, "n_attempts": attempts,
            "n_units": n_tasks * len(listed) * attempts}


def main():
    module = AnsibleModule(
        argument_spec=dict(
            config=dict(type="raw", required=True),
            datasets=dict(type="list", elements="str", default=[]),
            agents=dict(type="list", elements="str", default=[]),
            path_map=dict(type="dict", default={}),
            container=dict(type="str"),
            harbor_executable=dict(type="str", default="harbor"),
            runtime=dict(type="dict"),
        ),
        supports_check_mode=True,
    )
    problem = apply_contract(module.params, "harbor_matrix_units")
    if problem:
        module.fail_json(msg=problem)
    try:
        module.exit_json(**list_units(module))
    except HarborJobError as exc:
        module.fail_json(msg=str(exc))


if __name__ == "__main__":
    main()
