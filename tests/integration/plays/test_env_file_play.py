"""env_file: the one env-file rule (module_utils/_env_file.py), the env_file filter and the runtime container's
api_key.env, which the role renders through that filter.

Its pure tests: tests/unit/plugins/filter/test_env_file.py.
"""
from pathlib import Path

import pytest


VALIDATE_PLAY = """
- hosts: localhost
  connection: local
  gather_facts: false
  vars:
    ansible_python_interpreter: "{python}"
    runtime_container_api_keys: {keys}
  tasks:
    - name: The role's input check only
      ansible.builtin.include_role:
        name: aisbench.agent_runtime.runtime_container
        tasks_from: validate.yml
"""


@pytest.mark.parametrize("keys, message", [
    ({"OK_KEY": "fine", "BAD KEY": "x", "NL_KEY": "sk-onerule-secret\nEVIL=1", "EXP_KEY": "sk-onerule-secret${HOME}"},
     "runtime_container_api_keys: not variable names: BAD KEY; runtime_container_api_keys: values of EXP_KEY, NL_KEY "
     "contain a line break, a NUL or '${' (Harbor's env-file loader would expand it)"),
    ({"OK_KEY": "it's \\\\ fine $HOME"}, None),
])
def test_runtime_container_refuses_what_the_env_file_rule_refuses_naming_keys_only(tmp_path, keys, message):
    """The role's input check asks the same rule (env_file_bad_keys) before anything changes: a real run."""
    import json
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[3]
    playbook = tmp_path / "validate.yml"
    playbook.write_text(VALIDATE_PLAY.format(python=sys.executable, keys=json.dumps(keys)))
    env = dict(os.environ, ANSIBLE_CONFIG=str(root / "ansible.cfg"), ANSIBLE_COLLECTIONS_PATH=str(root / ".cache" / "collections"),
               ANSIBLE_HOME=str(tmp_path / "ansible-home"), ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0")
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), str(playbook)],
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    output = proc.stdout + proc.stderr
    assert "sk-onerule-secret" not in output
    if message is None:
        assert proc.returncode == 0, output[-3000:]
    else:
        assert proc.returncode == 2 and message in output, output[-3000:]
