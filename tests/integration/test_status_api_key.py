"""status.yml's "api key" column says what the key file really holds: the runtime_container role writes an empty
api_key.env (its header only) when no key is given, as on the `make demo` host, and that is no key."""

import json
import os
import subprocess
import sys

import pytest
import yaml
from test_bad_input import ANSIBLE_PLAYBOOK, COLLECTIONS, ROOT, ansible_env, runtime_contract_at

sys.path.insert(0, COLLECTIONS)
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._env_file import render_env_file  # noqa: E402  pylint: disable=wrong-import-position

CANARY = "status-canary-5e1f0a"


def role_key_file(keys):
    """api_key.env as the runtime_container role writes it (its task's header, the collection's env-file rule)."""
    role = os.path.join(ROOT, "roles", "runtime_container")
    with open(os.path.join(role, "tasks", "apply.yml"), encoding="utf-8") as handle:
        tasks = yaml.safe_load(handle)
    task = next(task for task in tasks if task.get("name") == "Write the API-key file from runtime_container_api_keys")
    # The header the task renders with lives in the role's vars (plan.yml digests the same content).
    assert "header=_runtime_container_api_key_header" in task["ansible.builtin.copy"]["content"]
    with open(os.path.join(role, "vars", "main.yml"), encoding="utf-8") as handle:
        header = yaml.safe_load(handle)["_runtime_container_api_key_header"]
    return render_env_file(keys, "dotenv", header=header)


@pytest.mark.parametrize("keys, mode, shown, problem", [
    ({}, 0o600, "no", ""),
    ({"OPENAI_API_KEY": CANARY}, 0o600, "yes", ""),
    ({"OPENAI_API_KEY": CANARY}, 0o644, "no", "API-key file mode 0644, not 0600"),
])
def test_api_key_column(tmp_path, keys, mode, shown, problem):
    root = tmp_path / "swebench"
    for name in ("jobs", "tasks", "config", "logs", "agent-patches", "harbor-plugins", "secrets"):
        (root / name).mkdir(parents=True)
    key_file = root / "secrets" / "api_key.env"
    key_file.write_text(role_key_file(keys))
    key_file.chmod(mode)
    table = tmp_path / "status.txt"
    proc = subprocess.run(
        [ANSIBLE_PLAYBOOK, "-i", "localhost,", "-c", "local", os.path.join(ROOT, "playbooks", "status.yml"),
         "-e", yaml.safe_dump({"aisbench_status_hosts": "localhost", "aisbench_status_file": str(table),
                               "aisbench_status_runtime": runtime_contract_at(root, api_keys=bool(keys)),
                               "ansible_python_interpreter": sys.executable}, default_flow_style=True)],
        cwd=str(tmp_path), env=ansible_env(tmp_path), capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    header, _dashes, row = table.read_text().splitlines()[:3]
    assert row[header.index("api key"):].split()[0] == shown
    facts = [result["ansible_facts"]["aisbench_status_row"] for played in json.loads(proc.stdout)["plays"]
             for task in played["tasks"] for result in task["hosts"].values()
             if "aisbench_status_row" in result.get("ansible_facts", {})]
    assert problem in facts[-1]["problem"]
    # Only a count left the host: every task's result is in this output (the json callback).
    assert CANARY not in proc.stdout + proc.stderr
