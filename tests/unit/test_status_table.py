"""The status_table filter: direct calls and through Ansible's templating."""

import json
import os
import subprocess
import sys

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.aisbench.agent_runtime.plugins.filter.status_table import FilterModule, status_table

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
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


def test_full_row_and_a_row_with_missing_keys():
    table = status_table([FULL, {"host": "arm01", "jobs_total": 7, "container_state": None, "platform": ""}])
    lines = table.splitlines()
    assert lines[0].split() == ["host", "container", "restart", "engine", "storage", "storage", "why", "inner", "disk",
                                "platform", "mounts", "api",
                                "key", "jobs", "finished", "running", "latest", "jobs", "damaged", "harbor"]
    assert set(lines[1]) == {"-", " "}
    assert lines[2].split("  ")[0] == "gpu01"
    assert "yes" in lines[2] and " no " in lines[2]
    assert "nightly-2026-12-02, nightly-2026-12-01, nightly-2026-11-30 +1" in lines[2]
    # Missing, None and empty values are "-".
    assert lines[3].split() == ["arm01", "-", "-", "-", "-", "-", "-", "-", "-", "-", "7", "-", "-", "-", "-", "-"]
    assert "auto: /var/lib/docker is on overlayfs: overlay2 cannot stack" in lines[2]
    assert "img 1.2GB ctr 0B vol 812MB cache 0B free 40G" in lines[2]
    # Fixed width: every column starts at the same offset on every line.
    starts = [i for i, ch in enumerate(lines[1]) if ch == "-" and (i == 0 or lines[1][i - 1] == " ")]
    for line in (lines[0], lines[2], lines[3]):
        for start in starts[1:]:
            assert line[start - 1] == " " or line[start - 2:start] == "  "
    assert not any(line != line.rstrip() for line in lines)
    assert not table.endswith("\n")


def test_numbers_right_aligned_text_left_aligned():
    table = status_table([{"host": "a", "jobs_total": 5}, {"host": "long-host-name", "jobs_total": 1234}],
                         columns=["host", "jobs_total"])
    assert table.splitlines() == [
        "host            jobs",
        "--------------  ----",
        "a                  5",
        "long-host-name  1234",
    ]


def test_chosen_columns_titles_and_unknown_keys():
    table = status_table([FULL], columns=["host", "jobs_running", "gpu_count"], titles={"jobs_running": "busy"})
    assert table.splitlines() == [
        "host   busy  gpu_count",
        "-----  ----  ---------",
        "gpu01     2  -",
    ]


def test_values_are_kept_on_one_line_and_cut():
    rows = [{"host": "x\ny\tz", "harbor_version": "v" * 100, "latest_jobs": [], "mounts_ok": {"jobs": True, "tasks": False}}]
    table = status_table(rows, columns=["host", "harbor_version", "latest_jobs", "mounts_ok"], max_width=10)
    lines = table.splitlines()
    assert len(lines) == 3
    assert lines[2].split("  ")[:3] == ["x y z", "vvvvvvv...", "-"]
    assert lines[2].endswith("jobs=ye...")
    wide = status_table(rows, columns=["harbor_version"], max_width=0)
    assert wide.splitlines()[2] == "v" * 100


def test_list_limit_and_missing_text():
    table = status_table([FULL], columns=["latest_jobs", "container_state"], list_limit=1, missing="n/a")
    assert table.splitlines()[2].startswith("nightly-2026-12-02 +3")
    table = status_table([{}], columns=["container_state"], missing="n/a")
    assert table.splitlines()[2] == "n/a"
    table = status_table([FULL], columns=["latest_jobs"], list_limit=0, max_width=0)
    assert table.splitlines()[2].count("nightly-") == 4


def test_empty_list_gives_the_header_only():
    assert status_table([], columns=["host"]).splitlines() == ["host", "----"]


@pytest.mark.parametrize("rows, kwargs, message", [
    ("gpu01", {}, "expects a list of dicts"),
    ([FULL, "gpu02"], {}, "item 1 is a str"),
    ([FULL], {"columns": "host"}, "columns must be a non-empty list"),
    ([FULL], {"columns": []}, "columns must be a non-empty list"),
    ([FULL], {"titles": ["a"]}, "titles must be a dict"),
    ([FULL], {"max_width": -1}, "max_width must be an integer >= 0"),
    ([FULL], {"max_width": 2}, "max_width must be 0 (no limit) or at least 4"),
    ([FULL], {"list_limit": "3"}, "list_limit must be an integer >= 0"),
    ([FULL], {"columns": ["host", "jobs_total"], "titles": {"jobs_total": "host"}}, "two columns have the same title"),
])
def test_bad_input_is_refused(rows, kwargs, message):
    with pytest.raises(AnsibleFilterError) as exc:
        status_table(rows, **kwargs)
    assert message in str(exc.value)


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
