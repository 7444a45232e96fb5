"""Run tasks for real with ansible-playbook over the local connection and return what they registered."""
import json
import os
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))

HEADER = """
- hosts: localhost
  connection: local
  gather_facts: false
  vars:
    ansible_python_interpreter: "%s"
  tasks:
"""

REPORT = """
    - name: Report what the tasks registered
      ansible.builtin.copy:
        content: "{{ %s | to_json }}"
        dest: "%s"
        mode: "0644"
"""


def run_tasks(tmp_path, tasks, registered):
    """Run `tasks` (the play's task list as YAML, indented by 4) and return {name: result} for each name in `registered`.

    The play runs with this checkout's ansible.cfg and collection, and its own ANSIBLE_HOME and local temp under
    tmp_path; a failed run fails the test with the end of its output.
    """
    out = tmp_path / "results.json"
    playbook = tmp_path / "play.yml"
    names = "{%s}" % ", ".join("'%s': %s" % (name, name) for name in registered)
    playbook.write_text(HEADER % sys.executable + tasks.strip("\n") + "\n" + REPORT % (names, out))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"),
               ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".cache", "collections"),
               ANSIBLE_HOME=str(tmp_path / "ansible-home"), ANSIBLE_LOCAL_TEMP=str(tmp_path / "local-tmp"))
    run = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,",
                          str(playbook)], env=env, capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return json.loads(out.read_text())
