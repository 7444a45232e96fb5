# -*- coding: utf-8 -*-
"""preflight_checks' facts (gather_subset) against setup's, its input checks and the action plugin's decisions.
Its tests that start a process: tests/integration/scripts/test_preflight_facts_module.py."""

import ast
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from ansible.modules import setup as ansible_setup
from ansible.playbook.play_context import PlayContext
from ansible.playbook.task import Task

ROOT = Path(__file__).resolve().parents[4]
COLLECTIONS = ROOT / ".cache" / "collections"
if str(COLLECTIONS) not in sys.path:
    sys.path.insert(0, str(COLLECTIONS))

from ansible_collections.aisbench.agent_runtime.plugins.action import preflight_checks as action_plugin  # noqa: E402
from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _preflight as pf  # noqa: E402

ROLE_NAMES = {"required": "preflight_required_checks", "registry_mirrors": "preflight_registry_mirrors",
              "docker_host": "preflight_docker_host", "python_min_version": "preflight_python_min_version",
              "disk_min_free_gb": "preflight_disk_min_free_gb", "clock_max_skew": "preflight_clock_max_skew",
              "gpu_min_count": "preflight_gpu_min_count", "registry_logins": "preflight_registry_logins",
              "registry_ca_files": "preflight_registry_ca_certificates"}


def test_the_minimal_subset_is_the_one_setup_uses():
    tree = ast.parse(Path(ansible_setup.__file__).read_text())
    literals = [node.value for node in ast.walk(tree) if isinstance(node, ast.Assign)
                and any(getattr(target, "id", None) == "minimal_gather_subset" for target in node.targets)]
    assert len(literals) == 1
    assert frozenset(ast.literal_eval(literals[0].args[0])) == pf.MINIMAL_GATHER_SUBSET


def params(**overrides):
    values = dict((name, spec.get("default")) for name, spec in pf.ARGUMENT_SPEC.items())
    values.update(overrides)
    return values


def test_good_input_has_no_problems():
    assert pf.input_problems(params()) == []
    assert pf.input_problems(params(registry_mirrors=["https://mirror.example:5000"], docker_host="tcp://10.0.0.1:2375",
                                    python_min_version="3.10.2", disk_min_free_gb=0, gpu_min_count=0)) == []


@pytest.mark.parametrize("overrides, message", [
    ({"registry_mirrors": ["https://ok.example", "mirror.example:5000"]},
     "preflight_registry_mirrors: 'mirror.example:5000' is not an http:// or https:// URL"),
    ({"registry_logins": [{"registry": "https://registry.example", "username": "ci", "password": "x"}]},
     "preflight_registry_logins: registry 'https://registry.example' is not host[:port] (no scheme, no path)"),
    ({"registry_logins": [{"registry": "registry.example", "username": " ", "password": "x"}]},
     "preflight_registry_logins: registry 'registry.example' has no username"),
    ({"registry_ca_files": {"mirror.example:5443/x": "/ca.crt"}},
     "preflight_registry_ca_certificates: 'mirror.example:5443/x' is not host[:port] (no scheme, no path) (the certs.d"
     " directory name)"),
    ({"docker_host": "ssh://builder"}, "preflight_docker_host: ssh://builder is neither unix:///path nor tcp://host:port"),
    ({"python_min_version": "3.x"}, "preflight_python_min_version: 3.x is not a dotted version like 3.9"),
    ({"disk_min_free_gb": -1.0}, "preflight_disk_min_free_gb: -1.0 must be >= 0"),
    ({"clock_max_skew": 0.0}, "preflight_clock_max_skew: 0.0 must be > 0"),
    ({"gpu_min_count": -2}, "preflight_gpu_min_count: -2 must be >= 0"),
    ({"registry_timeout": 0.0}, "registry_timeout: 0.0 must be > 0"),  # not named: shown by the option's name
])
def test_each_bad_input_is_named_by_the_callers_name(overrides, message):
    assert pf.input_problems(params(**overrides), ROLE_NAMES) == [message]


def action(args, module_result=None):
    task = Task()
    task.args = dict(args)
    connection = SimpleNamespace(_shell=SimpleNamespace(tmpdir=None))
    plugin = action_plugin.ActionModule(task, connection, PlayContext(), None, None, None)
    calls = []

    def execute_module(**kwargs):
        calls.append(kwargs)
        return dict(module_result)

    plugin._execute_module = execute_module
    return plugin, calls


def module_result(results, required):
    checks, failed_required, summary = pf.summarize(results, required)
    return dict(changed=False, checks=checks, by_name=dict((item["name"], item) for item in checks),
                failed_required=failed_required, summary=summary, platform="linux/amd64", target_time=0.0, elapsed=0.0,
                architecture="x86_64", ansible_facts={"ansible_distribution": "Debian"})


def test_the_action_refuses_bad_input_before_the_round_trip():
    plugin, calls = action({"registry_mirrors": ["mirror.example:5000"], "gpu_min_count": "-1", "input_names": ROLE_NAMES})
    result = plugin.run(task_vars={"inventory_hostname": "h1"})
    assert calls == []
    assert result["failed"] is True
    assert result["msg"] == ("preflight_registry_mirrors: 'mirror.example:5000' is not an http:// or https:// URL."
                             " preflight_gpu_min_count: -1 must be >= 0.")


def test_the_action_fails_the_host_on_a_failed_required_check_with_the_table():
    results = [pf.result("disk", pf.FAIL, "1.0 GiB free, need >= 20 GiB"), pf.result("python", pf.PASS, "3.11"),
               pf.result("gpu", pf.FAIL, "no GPU")]
    plugin, calls = action({"checks": ["disk", "python", "gpu"], "required": ["disk", "python"], "input_names": ROLE_NAMES},
                           module_result(results, ["disk", "python"]))
    result = plugin.run(task_vars={"inventory_hostname": "h1"})
    assert len(calls) == 1 and calls[0]["module_args"]["controller_time"] > 0
    assert result["failed"] is True and result["failed_required"] == ["disk"]
    assert "ansible_facts" not in result
    first, table = result["msg"].split("\n", 1)
    assert first == ("Required preflight checks failed on h1: disk (1.0 GiB free, need >= 20 GiB). Fix the host, or drop"
                     " the check from preflight_required_checks.")
    assert table.splitlines()[0].split() == ["CHECK", "STATUS", "REQUIRED", "REASON"]
    assert table.splitlines()[-1] == "1 PASS, 2 FAIL, 0 SKIP"


def test_the_action_passes_when_only_optional_checks_failed_and_returns_the_facts():
    results = [pf.result("python", pf.PASS, "3.11"), pf.result("gpu", pf.FAIL, "no GPU")]
    plugin, _calls = action({"checks": ["python", "gpu"], "required": ["python"], "gather_subset": ["min"]},
                            module_result(results, ["python"]))
    result = plugin.run(task_vars={"inventory_hostname": "h1"})
    assert not result.get("failed")
    assert result["ansible_facts"] == {"ansible_distribution": "Debian"}
