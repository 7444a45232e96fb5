"""fleet_report in the shape nightly.yml runs it, through ansible-playbook on three local hosts: the real
harbor_job_summary module on the recorded Harbor jobs in tests/fixtures/harbor/jobs, fetch, a rescue that writes
failure.json, then fleet_report; the second run reports changed: false.

Its pure tests: tests/unit/plugins/action/test_fleet_report.py.
"""
import os
import subprocess
import sys

from test_fleet_report import load_json, rows_by_key

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
FIXTURE_JOBS = os.path.join(ROOT, "tests", "fixtures", "harbor", "jobs")
NIGHT1 = "2026-12-01"


# --- through ansible-playbook, the way nightly.yml calls it ----------------------------------

E2E_PLAYBOOK = r"""
- name: Nightly, shortened to the summary, fetch and report
  hosts: fleet
  gather_facts: false
  tasks:
    - name: Summarize, fetch, or record why the host failed
      block:
        - name: Summarize the night's jobs
          aisbench.agent_runtime.harbor_job_summary:
            jobs_dir: "{{ fixture_jobs }}"
            jobs: "{{ host_jobs }}"
            output_dir: "{{ work_dir }}/{{ inventory_hostname }}"
            output_formats: [json]
            output_timestamp: "{{ host_timestamp }}"
          register: summary

        - name: Fetch the summary
          ansible.builtin.fetch:
            src: "{{ summary.files.json }}"
            dest: "{{ report_dir }}/{{ night }}/hosts/{{ inventory_hostname }}/summary.json"
            flat: true
      rescue:
        - name: Create the host's directory
          ansible.builtin.file:
            path: "{{ report_dir }}/{{ night }}/hosts/{{ inventory_hostname }}"
            state: directory
            mode: "0755"
          delegate_to: localhost

        - name: Record the failure
          ansible.builtin.copy:
            dest: "{{ report_dir }}/{{ night }}/hosts/{{ inventory_hostname }}/failure.json"
            content: "{{ {'host': inventory_hostname, 'stage': 'summarize', 'error': ansible_failed_result.msg} | to_json }}"
            mode: "0644"
          delegate_to: localhost

    - name: Build the fleet report
      aisbench.agent_runtime.fleet_report:
        report_dir: "{{ report_dir }}"
        night: "{{ night }}"
        expected_hosts: "{{ ansible_play_hosts_all }}"
        dropped_hosts: "{{ ansible_play_hosts_all | difference(ansible_play_hosts) }}"
      delegate_to: localhost
      run_once: true
      register: fleet

    - name: Keep the result for the test
      ansible.builtin.copy:
        content: "{{ fleet | to_json }}"
        dest: "{{ work_dir }}/fleet-result-{{ run }}.json"
        mode: "0644"
      delegate_to: localhost
      run_once: true
"""


def test_nightly_shape_through_ansible_playbook(tmp_path):
    """harbor_job_summary -> fetch (or a failure record) -> fleet_report, run twice by ansible-playbook."""
    report = tmp_path / "reports"
    python = sys.executable
    (tmp_path / "inventory.ini").write_text(
        "[fleet]\n"
        "host-a host_jobs='[\"pass-fail\"]' host_timestamp=n1\n"
        "host-b host_jobs='[\"two-agents\"]' host_timestamp=n1\n"
        "host-c host_jobs='[\"errored\"]' host_timestamp='bad/timestamp'\n"
        "[fleet:vars]\nansible_connection=local\nansible_python_interpreter=%s\n" % python)
    (tmp_path / "nightly.yml").write_text(E2E_PLAYBOOK)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".cache", "collections"),
               ANSIBLE_HOME=str(tmp_path / "ansible-home"), ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"),
               ANSIBLE_LOCALHOST_WARNING="0", ANSIBLE_INVENTORY_UNPARSED_WARNING="0")
    results = []
    for run in ("first", "second"):
        proc = subprocess.run(
            [os.path.join(os.path.dirname(python), "ansible-playbook"), "-i", str(tmp_path / "inventory.ini"),
             str(tmp_path / "nightly.yml"), "-e", "report_dir=%s work_dir=%s night=%s run=%s fixture_jobs=%s"
             % (report, tmp_path, NIGHT1, run, FIXTURE_JOBS)],
            capture_output=True, text=True, env=env, cwd=str(tmp_path), check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        results.append(load_json(str(tmp_path / ("fleet-result-%s.json" % run))))
    first, second = results
    assert first["changed"] is True and second["changed"] is False
    assert first["fleet"] == second["fleet"]
    fleet = rows_by_key(first["fleet"])
    # host-a pass-fail 1/2 and host-b two-agents oracle 1/2: 2/4; nop 0/2 on host-b only.
    assert (fleet[("hello", "oracle", None)]["n_pass"], fleet[("hello", "oracle", None)]["n_completed"]) == (2, 4)
    assert fleet[("hello", "nop", None)]["pass_at_1"] == 0.0
    assert [(h["host"], h["stage"]) for h in first["failed_hosts"]] == [("host-c", "summarize")]
    assert "output_timestamp 'bad/timestamp' refused" in first["failed_hosts"][0]["error"]
    night_dir = os.path.join(str(report), NIGHT1)
    assert sorted(os.listdir(night_dir)) == ["fleet-report.csv", "fleet-report.html", "fleet-report.json",
                                             "fleet-report.md", "hosts"]
    assert os.readlink(os.path.join(str(report), "latest")) == NIGHT1
