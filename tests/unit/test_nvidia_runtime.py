# -*- coding: utf-8 -*-
"""daemon.json that docker_engine renders from what nvidia_runtime hands it.

Each case runs ansible-playbook on localhost (nothing on the host is touched): the role's own defaults and
vars/main.yml compute docker_engine_runtimes / docker_engine_default_runtime, docker_engine's filter builds
the config and its template renders the file, exactly as on a GPU host.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COLLECTIONS = ROOT / ".cache" / "collections"
COLLECTION = COLLECTIONS / "ansible_collections" / "aisbench" / "agent_runtime"
DOCKER_ENGINE_TEMPLATE = COLLECTION / "roles" / "docker_engine" / "templates" / "daemon.json.j2"

pytestmark = pytest.mark.skipif(not DOCKER_ENGINE_TEMPLATE.exists(), reason="role docker_engine is not in this checkout yet")

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


def _play(name, overrides):
    """One play per case: block vars outrank the role files loaded as vars_files, like inventory values would."""
    role = COLLECTION / "roles" / "nvidia_runtime"
    return {
        "name": name, "hosts": "localhost", "gather_facts": False,
        "vars_files": [str(role / "defaults" / "main.yml"), str(role / "vars" / "main.yml")],
        "tasks": [{"name": "render " + name, "vars": overrides, "block": [
            {"name": "Build daemon.json the way docker_engine does, from what nvidia_runtime hands it",
             "ansible.builtin.set_fact": {"docker_engine_daemon_config": "{{ settings | aisbench.agent_runtime.docker_daemon_config }}"},
             "vars": {"settings": {"log_driver": "json-file", "log_max_size": "100m", "log_max_file": 3,
                                   "runtimes": "{{ nvidia_runtime_docker_runtimes }}",
                                   "default_runtime": "{{ nvidia_runtime_docker_default_runtime }}"}}},
            {"name": "Render docker_engine's template and keep the package list",
             "ansible.builtin.set_fact": {"rendered": "{{ rendered | default({}) | combine({%r: {'daemon_json': lookup('template', %r),"
                                                      " 'packages': nvidia_runtime_apt_packages}}) }}" % (name, str(DOCKER_ENGINE_TEMPLATE))}},
        ]}],
    }


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    out = tmp_path_factory.mktemp("nvidia_runtime")
    playbook = out / "render.yml"
    plays = [_play(name, overrides) for name, overrides in CASES.items()]
    plays.append({"name": "write", "hosts": "localhost", "gather_facts": False, "tasks": [
        {"name": "Write every case at once", "ansible.builtin.copy": {
            "content": "{{ rendered | to_json }}", "dest": str(out / "rendered.json"), "mode": "0644"}}]})
    playbook.write_text(json.dumps(plays))
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_COLLECTIONS_PATH=str(COLLECTIONS),
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false")
    command = [str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,", "-c", "local",
               "-e", "ansible_python_interpreter=" + sys.executable, str(playbook)]
    completed = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                               cwd=str(out), check=False)
    assert completed.returncode == 0, completed.stdout

    return json.loads((out / "rendered.json").read_text())


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
