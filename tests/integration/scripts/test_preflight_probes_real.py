# -*- coding: utf-8 -*-
"""Probes of plugins/module_utils/_preflight.py against this host (its Docker engine, the CUDA probe), and the
module + action plugin end to end through ansible-playbook on localhost.

Its pure tests: tests/unit/plugins/module_utils/test_preflight_probes.py.
"""

import ctypes.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
COLLECTIONS = ROOT / ".cache" / "collections"
if str(COLLECTIONS) not in sys.path:
    sys.path.insert(0, str(COLLECTIONS))

from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _preflight as pf  # noqa: E402

from test_preflight_probes import http_server  # http_server is a fixture  # noqa: F401  # pylint: disable=unused-import


@pytest.mark.skipif(not os.path.exists("/var/run/docker.sock") or not shutil.which("docker"), reason="no local Docker engine")
def test_docker_probe_against_the_real_engine():
    observed = pf.probe_docker("unix:///var/run/docker.sock", 5)
    expected = subprocess.run(["docker", "version", "--format", "{{.Server.Version}}"], stdout=subprocess.PIPE, check=True,
                              universal_newlines=True).stdout.strip()
    assert observed["reachable"] is True
    assert observed["version"] == expected
    assert pf.check_docker(True, observed)["status"] == pf.PASS


def test_cuda_probe_runs_for_real():
    outcome = pf.probe_cuda(timeout=60)
    if ctypes.util.find_library("cuda") is None:
        assert "libcuda.so.1 cannot be loaded" in outcome["error"]
        assert pf.check_cuda(True, outcome)["status"] == pf.FAIL
    else:  # a GPU machine: whatever the driver says, the probe reports it without crashing
        assert "error" in outcome or "devices" in outcome


def test_cuda_probe_timeout_is_reported(tmp_path):
    # A child interpreter that never finishes stands for a hung driver.
    sleeping = tmp_path / "python"
    sleeping.write_text("#!/bin/sh\nexec sleep 30\n")
    sleeping.chmod(0o755)
    outcome = pf.probe_cuda(timeout=1, python=str(sleeping))
    assert "did not finish within 1 s" in outcome["error"]


PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: checks
      aisbench.agent_runtime.preflight_checks:
        commands: [sh, aisbench-no-such-command]
        disk_path: {disk_path}
        disk_min_free_gb: 0
        registry_mirrors: ["{mirror}"]
        required: [commands, disk]
        gather_subset: [min]
      register: report
      ignore_errors: true
    - name: keep
      ansible.builtin.copy:
        content: "{{{{ report | to_json }}}}"
        dest: "{out}"
        mode: "0644"
      check_mode: false
"""


@pytest.mark.parametrize("check_mode", [False, True])
def test_module_and_action_plugin_end_to_end(tmp_path, http_server, check_mode):
    out = tmp_path / "report.json"
    playbook = tmp_path / "play.yml"
    playbook.write_text(PLAYBOOK.format(disk_path=tmp_path / "data-root", mirror=http_server, out=out))
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_COLLECTIONS_PATH=str(COLLECTIONS),
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false")
    command = [str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,", "-c", "local",
               "-e", "ansible_python_interpreter=" + sys.executable, str(playbook)]
    completed = subprocess.run(command + (["--check"] if check_mode else []), env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, universal_newlines=True, cwd=str(tmp_path), check=False)
    assert completed.returncode == 0, completed.stdout
    report = json.loads(out.read_text())
    assert report["changed"] is False
    # A required check failed: the task failed, naming it, with the table; the report is complete all the same.
    assert report["failed"] is True and report["failed_required"] == ["commands"]
    assert report["msg"].startswith("Required preflight checks failed on localhost: commands (missing: aisbench-no-such-command).")
    assert "ansible_facts" not in report  # a failed task sets none
    by_name = report["by_name"]
    assert by_name["commands"]["details"]["missing"] == ["aisbench-no-such-command"]
    assert by_name["disk"]["details"]["probed_path"] == str(tmp_path)
    assert by_name["registry_mirrors"]["status"] == pf.PASS
    # The action plugin replaced the module's one-sided clock reading with the bracketed one.
    assert by_name["clock"]["status"] == pf.PASS
    assert by_name["clock"]["details"]["uncertainty_seconds"] > 0
    assert report["summary"][-1].endswith("SKIP")
    assert [item["name"] for item in report["checks"]] == list(pf.CHECK_NAMES)
