# -*- coding: utf-8 -*-
"""preflight_checks' facts (gather_subset) against setup's, its input checks and the action plugin's decisions.
Its pure tests: tests/unit/plugins/action/test_preflight_facts.py."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
COLLECTIONS = ROOT / ".cache" / "collections"
if str(COLLECTIONS) not in sys.path:
    sys.path.insert(0, str(COLLECTIONS))
from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _preflight as pf  # noqa: E402


def run_module(module, args, tmp_path):
    """Run a module locally as Ansible would (arguments from a file); its JSON result."""
    args_file = tmp_path / ("%s.json" % module.rsplit(".", 1)[-1])
    args_file.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": args}))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(COLLECTIONS)] + sys.path))
    proc = subprocess.run([sys.executable, "-m", module, str(args_file)], capture_output=True, text=True, env=env,
                          check=False, timeout=120)
    return json.loads(proc.stdout)


@pytest.mark.parametrize("subset", [["min", "virtual"], ["min"], ["!all", "platform"]])
def test_the_module_returns_the_facts_setup_returns(subset, tmp_path):
    setup = run_module("ansible.modules.setup", {"gather_subset": subset}, tmp_path)["ansible_facts"]
    ours = run_module("ansible_collections.aisbench.agent_runtime.plugins.modules.preflight_checks",
                      {"gather_subset": subset, "checks": []}, tmp_path)
    assert sorted(ours["ansible_facts"]) == sorted(setup)
    for key in ("ansible_distribution", "ansible_distribution_version", "ansible_architecture", "ansible_os_family",
                "ansible_service_mgr", "ansible_virtualization_type", "ansible_virtualization_role", "gather_subset"):
        assert ours["ansible_facts"].get(key) == setup.get(key), key
    assert all(check["status"] == pf.SKIP for check in ours["checks"])


def test_no_subset_gathers_nothing_and_a_bad_one_is_named(tmp_path):
    module = "ansible_collections.aisbench.agent_runtime.plugins.modules.preflight_checks"
    assert run_module(module, {"checks": ["python"]}, tmp_path)["ansible_facts"] == {}
    bad = run_module(module, {"checks": [], "gather_subset": ["min", "hardwear"]}, tmp_path)
    assert bad["failed"] and bad["msg"].startswith("gather_subset: ") and "hardwear" in bad["msg"]
