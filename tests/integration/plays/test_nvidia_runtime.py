# -*- coding: utf-8 -*-
"""daemon.json that docker_engine renders from what nvidia_runtime hands it.

Each case runs ansible-playbook on localhost (nothing on the host is touched) with the roles' own sources only: the
defaults and vars/main.yml of both roles, nvidia_runtime's hand-off task as configure.yml has it, and docker_engine's
docker_engine_daemon_config (its vars/main.yml, all of its settings) rendered through its daemon.json template,
exactly as on a GPU host.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
COLLECTIONS = ROOT / ".cache" / "collections"
ROLES = ROOT / "roles"
DOCKER_ENGINE_TEMPLATE = ROLES / "docker_engine" / "templates" / "daemon.json.j2"

CASES = {
    "forced_defaults": {"nvidia_runtime_assume_gpu": True, "nvidia_runtime_install": False},
    "default_args_existing": {
        "nvidia_runtime_set_default": True, "nvidia_runtime_args": ["--log-level=debug"],
        "docker_engine_runtimes": {"runc-debug": {"path": "/usr/bin/runc", "runtimeArgs": ["--debug"]}},
        "docker_engine_default_runtime": "runc-debug"},
    "earlier_default_kept": {
        "docker_engine_runtimes": {"crun": {"path": "/usr/bin/crun"}}, "docker_engine_default_runtime": "crun",
        "nvidia_runtime_name": "gpu", "nvidia_runtime_path": "/opt/nvidia/bin/nvidia-container-runtime"},
    "pinned": {"nvidia_runtime_toolkit_version": "1.17.8-1"},
}


def hand_off_task():
    """nvidia_runtime's task that hands its runtime to docker_engine, as configure.yml has it."""
    tasks = yaml.safe_load((ROLES / "nvidia_runtime" / "tasks" / "configure.yml").read_text())
    found = [task for task in tasks if task.get("name", "").startswith("Hand the runtime to docker_engine")]
    assert len(found) == 1, [task.get("name") for task in tasks]
    return found[0]


def _play(name, overrides, out):
    """One play and one host per case (facts are per host): inventory-like values in block vars, below the hand-off's
    facts, as on a real host."""
    return {
        "name": name, "hosts": name, "gather_facts": False,
        "vars_files": [str(ROLES / role / part / "main.yml") for role in ("docker_engine", "nvidia_runtime")
                       for part in ("defaults", "vars")],
        "tasks": [{"name": "render " + name, "vars": overrides, "block": [
            hand_off_task(),
            {"name": "Render docker_engine's template, keep the package list",
             "ansible.builtin.copy": {
                 "content": "{{ {'daemon_json': lookup('ansible.builtin.template', %r), "
                            "'packages': nvidia_runtime_apt_packages} | to_json }}" % str(DOCKER_ENGINE_TEMPLATE),
                 "dest": str(out / (name + ".json")), "mode": "0644"}},
        ]}],
    }


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    out = tmp_path_factory.mktemp("nvidia_runtime")
    playbook = out / "render.yml"
    playbook.write_text(json.dumps([_play(name, overrides, out) for name, overrides in CASES.items()]))
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_COLLECTIONS_PATH=str(COLLECTIONS),
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false",
               ANSIBLE_HOME=str(out / "ansible-home"))
    command = [str(Path(sys.executable).parent / "ansible-playbook"), "-i", ",".join(CASES) + ",", "-c", "local",
               "-e", "ansible_python_interpreter=" + sys.executable, str(playbook)]
    completed = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                               cwd=str(out), check=False)
    assert completed.returncode == 0, completed.stdout
    return {name: json.loads((out / (name + ".json")).read_text()) for name in CASES}


def test_every_setting_of_docker_engine_is_rendered(rendered):
    """The whole daemon.json docker_engine writes with its defaults, not a hand-picked part of it."""
    config = json.loads(rendered["forced_defaults"]["daemon_json"])
    defaults = yaml.safe_load((ROLES / "docker_engine" / "defaults" / "main.yml").read_text())
    assert config["log-opts"] == {"max-size": defaults["docker_engine_log_max_size"],
                                  "max-file": str(defaults["docker_engine_log_max_file"])}
    assert config["log-driver"] == defaults["docker_engine_log_driver"]


def test_forced_gpu_with_defaults(rendered):
    config = json.loads(rendered["forced_defaults"]["daemon_json"])
    assert config["runtimes"] == {"nvidia": {"path": "/usr/bin/nvidia-container-runtime"}}
    assert "default-runtime" not in config
    assert config["log-driver"] == "json-file"  # docker_engine's own settings stay
    assert rendered["forced_defaults"]["packages"] == ["nvidia-container-toolkit"]


def test_default_runtime_args_and_an_existing_runtime(rendered):
    text = rendered["default_args_existing"]["daemon_json"]
    config = json.loads(text)
    assert config["runtimes"] == {
        "nvidia": {"path": "/usr/bin/nvidia-container-runtime", "runtimeArgs": ["--log-level=debug"]},
        "runc-debug": {"path": "/usr/bin/runc", "runtimeArgs": ["--debug"]},
    }
    assert config["default-runtime"] == "nvidia"
    # Sorted keys: the file is stable, so docker_engine restarts the engine only on real changes.
    assert text.index('"default-runtime"') < text.index('"runtimes"')


def test_an_earlier_default_runtime_is_kept_when_nvidia_is_not_the_default(rendered):
    config = json.loads(rendered["earlier_default_kept"]["daemon_json"])
    assert config["default-runtime"] == "crun"
    assert config["runtimes"] == {"crun": {"path": "/usr/bin/crun"}, "gpu": {"path": "/opt/nvidia/bin/nvidia-container-runtime"}}


def test_pinned_toolkit_version_pins_all_its_packages(rendered):
    assert rendered["pinned"]["packages"] == [
        "nvidia-container-toolkit=1.17.8-1", "nvidia-container-toolkit-base=1.17.8-1",
        "libnvidia-container-tools=1.17.8-1", "libnvidia-container1=1.17.8-1"]
