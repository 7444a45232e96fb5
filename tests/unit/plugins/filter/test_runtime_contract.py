"""The runtime contract: built from the mounts the runtime_container role gives the container (both modes),
refused when unusable, and turned into the harbor modules' options."""

import json
import re

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.aisbench.agent_runtime.plugins.filter.runtime_contract import FilterModule
from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _runtime_contract as rc

FILTERS = FilterModule().filters()


def role_mounts(root, inside, mode):
    """The mounts present.yml builds: dind mounts under AIS_BENCH_ROOT, host_socket keeps the host paths of jobs,
    tasks, config and logs (compose bind mounts resolve on the host)."""
    mounts = {}
    for name in ("jobs", "tasks", "config", "logs"):
        mounts[name] = {"type": "bind", "source": "%s/%s" % (root, name), "read_only": False,
                        "target": "%s/%s" % (inside, name) if mode == "dind" else "%s/%s" % (root, name)}
    for name in ("agent-patches", "harbor-plugins", "secrets"):
        mounts[name] = {"type": "bind", "source": "%s/%s" % (root, name), "target": "%s/%s" % (inside, name),
                        "read_only": True}
    if mode == "dind":
        mounts["run"] = {"type": "bind", "source": root + "/run", "target": inside + "/run", "read_only": False}
    return mounts


def built(mode="dind", root="/data/swebench", inside="/opt/swebench", **extra):
    spec = {"mounts": role_mounts(root, inside, mode), "container": "agent-runtime", "mode": mode,
            "engine_docker_host": "unix:///var/run/docker.sock", "root": inside, "run_dir": root + "/run",
            "image": "aisbench/agent-runtime:0.25.0", "harbor_version": "0.25.0", "matrix": True, "api_keys": True}
    spec.update(extra)
    return spec


def test_dind_contract_has_inside_and_host_paths():
    contract = FILTERS["runtime_contract"](built())
    assert contract["version"] == rc.CONTRACT_VERSION
    assert contract["container"] == "agent-runtime"
    assert (contract["jobs_dir"], contract["host_jobs_dir"]) == ("/opt/swebench/jobs", "/data/swebench/jobs")
    assert (contract["tasks_dir"], contract["host_tasks_dir"]) == ("/opt/swebench/tasks", "/data/swebench/tasks")
    assert (contract["config_dir"], contract["host_config_dir"]) == ("/opt/swebench/config", "/data/swebench/config")
    assert (contract["logs_dir"], contract["host_logs_dir"]) == ("/opt/swebench/logs", "/data/swebench/logs")
    assert contract["matrix"] == "/opt/swebench/config/matrix.yaml"
    assert contract["api_key_file"] == "/opt/swebench/secrets/api_key.env"
    assert contract["host_api_key_file"] == "/data/swebench/secrets/api_key.env"
    assert contract["trial_docker_host"] == "unix:///data/swebench/run/docker.sock"
    assert contract["engine_docker_host"] == "unix:///var/run/docker.sock"
    assert contract["harbor_version"] == "0.25.0"
    assert contract["mounts"]["harbor-plugins"] == {"host": "/data/swebench/harbor-plugins",
                                                    "container": "/opt/swebench/harbor-plugins"}
    assert "run" not in contract["mounts"]
    assert rc.contract_problem(contract) is None


def test_host_socket_with_custom_root_keeps_host_paths_for_harbor():
    """The case nightly.yml got wrong: Harbor's -o must be the host path, which is mounted at the same path."""
    contract = FILTERS["runtime_contract"](built(mode="host_socket", root="/srv/rc-hostsock"))
    assert contract["jobs_dir"] == contract["host_jobs_dir"] == "/srv/rc-hostsock/jobs"
    assert contract["tasks_dir"] == contract["host_tasks_dir"] == "/srv/rc-hostsock/tasks"
    assert contract["matrix"] == "/srv/rc-hostsock/config/matrix.yaml"
    # Read only inside: fixed under AIS_BENCH_ROOT in both modes.
    assert contract["api_key_file"] == "/opt/swebench/secrets/api_key.env"
    assert contract["host_api_key_file"] == "/srv/rc-hostsock/secrets/api_key.env"
    assert contract["trial_docker_host"] == "unix:///var/run/docker.sock"
    assert rc.module_defaults(contract, "harbor_job") == {
        "container": "agent-runtime", "jobs_dir": "/srv/rc-hostsock/jobs", "host_jobs_dir": "/srv/rc-hostsock/jobs"}


def test_contract_holds_no_secret_and_is_json():
    contract = FILTERS["runtime_contract"](built(matrix=False, api_keys=False))
    assert contract["matrix"] == ""
    assert contract["api_keys"] is False
    assert json.loads(json.dumps(contract, sort_keys=True)) == contract


@pytest.mark.parametrize("change, message", [
    ({"mode": "podman"}, "mode must be dind or host_socket"),
    ({"container": ""}, "must not be empty"),
    ({"run_dir": ""}, "run_dir must not be empty"),
    ({"colour": "blue"}, "unknown keys colour"),
])
def test_bad_build_input_is_refused(change, message):
    with pytest.raises(AnsibleFilterError, match=message):
        FILTERS["runtime_contract"](built(**change))


def test_missing_mount_is_named():
    spec = built()
    del spec["mounts"]["secrets"]
    spec["mounts"]["logs"] = {"source": "/x"}
    with pytest.raises(AnsibleFilterError, match="mounts without a source and a target: logs, secrets"):
        FILTERS["runtime_contract"](spec)


@pytest.mark.parametrize("contract, message", [
    (None, "^no runtime contract: run site.yml on the host first"),
    ({}, "no runtime contract"),
    ("", "no runtime contract"),
    (["x"], "not a mapping"),
    ({"version": 2}, "version 2, this collection reads version 1"),
])
def test_unusable_contracts(contract, message):
    assert re.search(message, FILTERS["runtime_contract_problem"](contract))


def test_contract_missing_keys_named():
    contract = FILTERS["runtime_contract"](built())
    del contract["host_jobs_dir"]
    del contract["container"]
    assert rc.contract_problem(contract).startswith("the runtime contract lacks container, host_jobs_dir")


def test_apply_contract_fills_only_unset_options():
    contract = FILTERS["runtime_contract"](built())
    params = {"runtime": contract, "container": None, "jobs_dir": "/elsewhere/jobs", "host_jobs_dir": None}
    assert rc.apply_contract(params, "harbor_job") is None
    assert params == {"runtime": contract, "container": "agent-runtime", "jobs_dir": "/elsewhere/jobs",
                      "host_jobs_dir": "/data/swebench/jobs"}

    params = {"runtime": contract, "jobs_dir": None}
    rc.apply_contract(params, "harbor_job_info")
    assert params["jobs_dir"] == "/data/swebench/jobs"

    params = {"runtime": contract, "container": "other", "path_map": {}}
    rc.apply_contract(params, "harbor_matrix_units")
    assert params["container"] == "other"
    assert params["path_map"] == {"/opt/swebench/jobs": "/data/swebench/jobs",
                                  "/opt/swebench/tasks": "/data/swebench/tasks",
                                  "/opt/swebench/config": "/data/swebench/config"}
    params = {"runtime": contract, "container": None, "path_map": {"/a": "/b"}}
    rc.apply_contract(params, "harbor_matrix_units")
    assert params["path_map"] == {"/a": "/b"}


def test_apply_contract_without_runtime_changes_nothing_and_refuses_a_bad_one():
    params = {"runtime": None, "jobs_dir": None}
    assert rc.apply_contract(params, "harbor_job_info") is None
    assert params == {"runtime": None, "jobs_dir": None}
    params = {"runtime": {"version": 0}, "jobs_dir": None}
    assert rc.apply_contract(params, "harbor_job_info").startswith("runtime: the runtime contract has version 0")
    assert params["jobs_dir"] is None


def test_runtime_container_writes_lists_what_the_role_writes():
    mounts = role_mounts("/data/swebench", "/opt/swebench", "dind")
    writes = FILTERS["runtime_container_writes"](mounts, "root", "root", "0755", plugin_sources=["/srv/own"],
                                                 matrix_file="/srv/matrix.yaml", api_key_sha1="ab" * 20)
    dirs = {entry["key"]: entry for entry in writes["dirs"]}
    assert sorted(dirs) == sorted(list(mounts) + ["facts_dir"])
    assert dirs["secrets"]["mode"] == "0700" and dirs["jobs"]["mode"] == "0755" and dirs["jobs"]["owner"] == "root"
    files = {entry["key"]: entry for entry in writes["files"]}
    assert files["plugins"]["src"] == "harbor_plugins/" and files["plugins"]["dest"] == "/data/swebench/harbor-plugins"
    assert files["own_plugins"]["src"] == "/srv/own/"
    assert files["matrix"]["dest"] == "/data/swebench/config/matrix.yaml"
    assert files["api_key"] == {"key": "api_key", "dest": "/data/swebench/secrets/api_key.env", "mode": "0600",
                                "owner": "root", "group": "root", "sha1": "ab" * 20}
    assert files["contract"] == {"key": "contract", "dest": "/etc/ansible/facts.d/aisbench_runtime.fact"}
    # A controller API-key file is hashed by the read's action plugin; no matrix, no matrix entry.
    writes = FILTERS["runtime_container_writes"](mounts, "root", "root", "0755", api_key_file="/srv/keys.env")
    files = {entry["key"]: entry for entry in writes["files"]}
    assert files["api_key"]["src"] == "/srv/keys.env" and "sha1" not in files["api_key"] and "matrix" not in files
    with pytest.raises(AnsibleFilterError, match="expects the role's mounts"):
        FILTERS["runtime_container_writes"]({"jobs": None}, "root", "root", "0755")


def test_runtime_container_writes_refuses_two_mounts_at_one_container_path():
    mounts = role_mounts("/data/swebench", "/opt/swebench", "dind")
    mounts["logs"] = dict(mounts["logs"], target=mounts["jobs"]["target"])
    with pytest.raises(AnsibleFilterError, match="two host directories would be mounted at the same container path"):
        FILTERS["runtime_container_writes"](mounts, "root", "root", "0755")
