# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""The runtime contract: what the runtime_container role built on a host, in one record.

The role writes it as the local fact ``aisbench_runtime`` (/etc/ansible/facts.d/aisbench_runtime.fact);
nightly.yml, status.yml and the harbor modules (option ``runtime``) read it instead of rebuilding the
container's name and paths from the role's variables. Built by ``build_contract`` (the runtime_contract
filter), read by ``contract_problem`` and ``module_defaults``. Standard library only (runs on the target).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import posixpath

CONTRACT_VERSION = 1
FACT_NAME = "aisbench_runtime"
FACT_FILE = "/etc/ansible/facts.d/%s.fact" % FACT_NAME
KEY_FILE_NAME = "api_key.env"
MATRIX_FILE_NAME = "matrix.yaml"
# Mounts whose host and in-container paths the contract records (the runtime_container role's mount names).
DIRS = ("jobs", "tasks", "config", "logs", "agent-patches", "harbor-plugins", "secrets")
# Keys a reader relies on; a record without one of them is refused as unusable.
REQUIRED_KEYS = ("version", "container", "mode", "engine_docker_host", "trial_docker_host", "root",
                 "jobs_dir", "host_jobs_dir", "tasks_dir", "host_tasks_dir", "config_dir", "host_config_dir",
                 "logs_dir", "host_logs_dir", "matrix", "api_key_file", "host_api_key_file", "mounts")
FIX_HINT = "run site.yml on the host first"


class ContractError(ValueError):
    """Input the contract cannot be built from, worded for the user."""


def _dir_key(name):
    return name.replace("-", "_")


def build_contract(mounts, container, mode, engine_docker_host, root, run_dir, image="", harbor_version="",
                   matrix=False, api_keys=False, model_endpoint=""):
    """The contract of a runtime container from the mounts the runtime_container role gave it.

    mounts: {mount name: {'source': host path, 'target': path inside}} as the role built them (every name of
    DIRS present). run_dir: the host directory of the inner engine's socket (dind). matrix: whether the role
    copied a job config to <config>/matrix.yaml. api_keys: whether API keys were configured (their names and
    values are never recorded; only the key file's path is). model_endpoint: the model API the container was given
    (OPENAI_BASE_URL), or empty.
    """
    if mode not in ("dind", "host_socket"):
        raise ContractError("mode must be dind or host_socket, got %r" % (mode,))
    missing = [name for name in DIRS if not isinstance((mounts or {}).get(name), dict)
               or not (mounts[name].get("source") and mounts[name].get("target"))]
    if missing:
        raise ContractError("mounts without a source and a target: %s" % ", ".join(missing))
    if not container or not engine_docker_host or not root:
        raise ContractError("container, engine_docker_host and root must not be empty")
    if mode == "dind" and not run_dir:
        raise ContractError("run_dir must not be empty in dind mode")
    contract = {
        "version": CONTRACT_VERSION,
        "container": container,
        "mode": mode,
        "image": image or "",
        "harbor_version": harbor_version or "",
        # The engine that runs the runtime container; the one Harbor's trials run on, as seen from the host.
        "engine_docker_host": engine_docker_host,
        "trial_docker_host": ("unix://" + posixpath.join(run_dir, "docker.sock")) if mode == "dind" else engine_docker_host,
        "root": root,
        "mounts": {name: {"host": mounts[name]["source"], "container": mounts[name]["target"]} for name in DIRS},
    }
    for name in DIRS:
        key = _dir_key(name)
        contract[key + "_dir"] = mounts[name]["target"]
        contract["host_" + key + "_dir"] = mounts[name]["source"]
    contract["matrix"] = posixpath.join(mounts["config"]["target"], MATRIX_FILE_NAME) if matrix else ""
    contract["api_key_file"] = posixpath.join(mounts["secrets"]["target"], KEY_FILE_NAME)
    contract["host_api_key_file"] = posixpath.join(mounts["secrets"]["source"], KEY_FILE_NAME)
    contract["api_keys"] = bool(api_keys)
    contract["model_endpoint"] = model_endpoint or ""
    return contract


def contract_problem(contract):
    """Why a contract (the fact as read back, or as given) cannot be used, or None."""
    if contract is None or contract == {} or contract == "":
        return "no runtime contract: %s (the runtime_container role records it in %s)" % (FIX_HINT, FACT_FILE)
    if not isinstance(contract, dict):
        return "the runtime contract is not a mapping (%s): %s" % (type(contract).__name__, FIX_HINT)
    version = contract.get("version")
    if version != CONTRACT_VERSION:
        return "the runtime contract has version %r, this collection reads version %d: %s" % (
            version, CONTRACT_VERSION, FIX_HINT)
    missing = [key for key in REQUIRED_KEYS if key not in contract]
    if missing:
        return "the runtime contract lacks %s: %s" % (", ".join(missing), FIX_HINT)
    return None


def path_map(contract):
    """{path inside the container: the same directory on the host} for the jobs, tasks and config mounts."""
    return {contract[key + "_dir"]: contract["host_" + key + "_dir"] for key in ("jobs", "tasks", "config")}


def module_defaults(contract, module):
    """The options a harbor module takes from the contract (an explicitly set option wins over these)."""
    if module == "harbor_job":
        return {"container": contract["container"], "jobs_dir": contract["jobs_dir"],
                "host_jobs_dir": contract["host_jobs_dir"]}
    if module in ("harbor_job_info", "harbor_job_summary"):
        return {"jobs_dir": contract["host_jobs_dir"]}
    if module == "harbor_matrix_units":
        return {"container": contract["container"], "path_map": path_map(contract)}
    raise ValueError("no contract defaults for module %r" % (module,))


def apply_contract(params, module):
    """Fill the options a harbor module's task left unset from params['runtime']; returns a problem or None.

    An empty path_map counts as unset (its default is {}); any other option counts as set when not None.
    """
    contract = params.get("runtime")
    if contract is None:
        return None
    problem = contract_problem(contract)
    if problem:
        return "runtime: %s" % problem
    for option, value in module_defaults(contract, module).items():
        if params.get(option) is None or (option == "path_map" and not params.get(option)):
            params[option] = value
    return None
