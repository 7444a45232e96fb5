"""runtime_container: what its templates give Harbor (telemetry); api_key.env is rendered by the env_file filter
(test_env_file.py).

Its tests that start a process: tests/integration/scripts/test_runtime_container_scripts.py.
"""
from pathlib import Path
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

ROLE = Path(__file__).resolve().parents[3] / "roles/runtime_container"


def container_env(**overrides):
    """The container environment as the role computes it (plan.yml's expression, defaults/main.yml's values)."""
    import yaml  # pylint: disable=import-outside-toplevel

    tasks = yaml.safe_load((ROLE / "tasks/plan.yml").read_text())
    expression = next(task["vars"]["_runtime_container_env_all"] for task in tasks
                      if "_runtime_container_env_all" in task.get("vars", {}))
    # plan.yml works out the inner daemon.json and the task platform too: here their values with no options on x86_64.
    variables = dict(yaml.safe_load((ROLE / "defaults/main.yml").read_text()), _runtime_container_dind=True,
                     _runtime_container_daemon_json={}, _runtime_container_task_platform="")
    variables.update(overrides)
    return Templar(loader=DataLoader(), variables=variables).template(trust_as_template(expression))


def test_harbor_telemetry_is_off_unless_turned_on():
    """Harbor sends usage telemetry unless HARBOR_TELEMETRY is 0 (harbor/telemetry.py, _DISABLED_VALUES)."""
    assert container_env()["HARBOR_TELEMETRY"] == "0"
    assert container_env(runtime_container_harbor_telemetry=True)["HARBOR_TELEMETRY"] == "1"
