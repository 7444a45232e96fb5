"""The status_table filter: direct calls and through Ansible's templating.
Its pure tests: tests/unit/plugins/filter/test_status_table.py."""
import json
import os
import subprocess
import sys
from ansible_collections.aisbench.agent_runtime.plugins.filter.status_table import FilterModule, status_table

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
COLLECTIONS = os.path.join(ROOT, ".cache", "collections")

FULL = {
    "host": "gpu01",
    "container_state": "running",
    "restart_policy": "unless-stopped",
    "engine_version": "26.1.5+dfsg1",
    "storage_driver": "vfs",
    "storage_reason": "auto: /var/lib/docker is on overlayfs: overlay2 cannot stack",
    "inner_disk": "img 1.2GB ctr 0B vol 812MB cache 0B free 40G",
    "platform": "linux/amd64",
    "mounts_ok": True,
    "api_key_present": False,
    "jobs_total": 112,
    "jobs_finished": 110,
    "jobs_running": 2,
    "latest_jobs": ["nightly-2026-12-02", "nightly-2026-12-01", "nightly-2026-11-30", "nightly-2026-11-29"],
    "harbor_version": "0.25.0",
}


def test_rendered_by_ansible_through_the_collection(tmp_path):
    """A real `ansible` run resolves the filter by its FQCN from this checkout."""
    assert FilterModule().filters()["status_table"] is status_table
    variables = tmp_path / "vars.json"
    variables.write_text(json.dumps({"rows": [FULL, {"host": "arm01"}], "dest": str(tmp_path / "table.txt")}))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_HOME=str(tmp_path / "ansible-home"),
               ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"))
    result = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), "ansible"), "localhost", "-c", "local", "-m", "ansible.builtin.copy",
         "-a", "dest={{ dest }} content={{ rows | aisbench.agent_runtime.status_table(columns=['host', 'jobs_total']) }}",
         "-e", "@" + str(variables)],
        capture_output=True, text=True, env=env, cwd=str(tmp_path), check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "table.txt").read_text().splitlines() == ["host   jobs", "-----  ----", "gpu01   112", "arm01     -"]


def test_status_playbook_rows_of_unreachable_hosts(tmp_path):
    """status.yml's fleet rows, rendered by a real ansible-playbook run with its own expression: hosts that kept a row
    first, then one {host, problem: unreachable} per host without one, in inventory order (ansible.builtin only)."""
    import yaml  # pylint: disable=import-outside-toplevel

    with open(os.path.join(ROOT, "playbooks", "status.yml"), encoding="utf-8") as handle:
        text = handle.read()
    assert "community.general" not in text
    fleet_play = [play for play in yaml.safe_load(text) if play.get("hosts") == "localhost"][0]
    expression = fleet_play["vars"]["aisbench_status_rows"]
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(json.dumps({"all": {"children": {
        "mixed": {"hosts": {"gpu02": {}, "gpu01": {"aisbench_status_row": {"host": "gpu01", "problem": ""}},
                            "edge.example-1": {}, "h\u00e9": {}}},
        "reachable": {"hosts": {"arm01": {"aisbench_status_row": {"host": "arm01", "problem": ""}}}},
        "gone": {"hosts": {"old01": {}, "old02": {}}},
    }}}))
    out = tmp_path / "rows.json"
    playbook = tmp_path / "play.yml"
    playbook.write_text(yaml.safe_dump([{
        "name": "Render status.yml's rows", "hosts": "localhost", "connection": "local", "gather_facts": False,
        "vars": {"ansible_python_interpreter": sys.executable},
        "tasks": [{"name": "Write the rows of each group", "ansible.builtin.copy": {
            "dest": str(out), "mode": "0644",
            "content": "{{ {'mixed': rows_mixed, 'reachable': rows_reachable, 'gone': rows_gone} | to_json }}"},
            "vars": {"rows_%s" % group: expression.replace("aisbench_status_group", "'%s'" % group)
                     for group in ("mixed", "reachable", "gone")}}],
    }], allow_unicode=True))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_HOME=str(tmp_path / "ansible-home"),
               ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"))
    result = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(inventory),
                             str(playbook)], capture_output=True, text=True, env=env, cwd=str(tmp_path), check=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    unreachable = [{"host": host, "problem": "unreachable"} for host in ("gpu02", "edge.example-1", "h\u00e9")]
    assert json.loads(out.read_text()) == {
        "mixed": [{"host": "gpu01", "problem": ""}] + unreachable,
        "reachable": [{"host": "arm01", "problem": ""}],
        "gone": [{"host": "old01", "problem": "unreachable"}, {"host": "old02", "problem": "unreachable"}],
    }
