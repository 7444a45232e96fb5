"""task_sync: the action plugin and module for real with ansible-playbook over the local connection (the bench runs it
over community.docker.docker, e2e's nightly too).
Its pure tests: tests/unit/plugins/module_utils/test_task_sync.py."""
import os
import stat
from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _task_sync as ts
from local_play import run_tasks

from test_task_sync import make_tree


TASKS = """
    - name: First sync
      aisbench.agent_runtime.task_sync: {{src: "{src}", dest: "{dest}"}}
      register: first
    - name: Unchanged rerun
      aisbench.agent_runtime.task_sync: {{src: "{src}", dest: "{dest}"}}
      register: second
    - name: Change the source (one file edited, one removed)
      ansible.builtin.shell: echo edited > {src}/hello/task.toml && rm -r {src}/empty
      changed_when: false
    - name: Changed, in check mode with diff
      aisbench.agent_runtime.task_sync: {{src: "{src}", dest: "{dest}"}}
      check_mode: true
      diff: true
      register: checked
    - name: Changed
      aisbench.agent_runtime.task_sync: {{src: "{src}", dest: "{dest}"}}
      register: third
    - name: Bad destination
      aisbench.agent_runtime.task_sync: {{src: "{src}", dest: "relative/tasks"}}
      register: bad
      ignore_errors: true
"""


def test_task_sync_for_real_over_the_local_connection(tmp_path):
    src = make_tree(tmp_path / "src")
    dest = tmp_path / "target" / "tasks"
    results = run_tasks(tmp_path, TASKS.format(src=src, dest=dest),
                        ["first", "second", "checked", "third", "bad"])

    assert results["first"]["changed"] and results["first"]["sent_bytes"] > 0 and results["first"]["files"] == 5
    assert results["second"]["changed"] is False and results["second"]["sent_bytes"] == 0
    assert results["second"]["digest"] == results["first"]["digest"]
    assert results["checked"]["changed"] and results["checked"]["changes"] == {"added": 0, "changed": 1, "removed": 1}
    assert "hello/task.toml" in results["checked"]["diff"]["before"]
    assert results["third"]["changed"] and results["third"]["digest"] != results["first"]["digest"]
    assert results["bad"]["failed"] and "must be an absolute directory path" in results["bad"]["msg"]

    assert ts.tree_manifest(str(dest)) == ts.tree_manifest(str(src))
    assert (dest / "hello" / "task.toml").read_text() == "edited\n"
    assert stat.S_IMODE(os.stat(str(dest / "hello" / "tests" / "test.sh")).st_mode) == 0o755
    # The record sits beside the tasks; no staging or old tree is left.
    assert sorted(os.listdir(str(dest.parent))) == [".tasks.task-sync.json", "tasks"]
