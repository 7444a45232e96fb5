"""Every module and action plugin of the collection claims full check mode (plugins/doc_fragments/attributes.py):
each runs here through ansible-playbook, for real first where it writes, then twice in check mode on the unchanged
target, and must report changed=false both times (and change nothing). binfmt_handler needs the kernel's binfmt_misc,
host-global: the qemu_binfmt scenario runs it so (molecule/qemu_binfmt/verify.yml).

Its pure tests: tests/unit/repo/test_check_mode_coverage.py.
"""
import hashlib
import os
import shutil
import subprocess
import uuid

import pytest
from local_play import ROOT, run_tasks

FIXTURE_JOBS = os.path.join(ROOT, "tests", "fixtures", "harbor", "jobs")
SAMPLE_TASKS = os.path.join(ROOT, "playbooks", "files", "sample_tasks")


def tree_digest(path):
    """Every file under path with its content digest and mode, and every directory: what check mode must not touch."""
    entries = []
    for root, dirs, files in os.walk(path):
        dirs.sort()
        for name in sorted(dirs):
            entries.append(("d", os.path.relpath(os.path.join(root, name), path)))
        for name in sorted(files):
            full = os.path.join(root, name)
            with open(full, "rb") as handle:
                entries.append(("f", os.path.relpath(full, path), oct(os.stat(full).st_mode & 0o7777),
                                hashlib.sha256(handle.read()).hexdigest()))
    return entries


def twice_in_check_mode(name, task):
    """The task (YAML, indented for a task list), then the same task twice in check mode, registered as NAME_check1/2."""
    checks = "".join("""
    - name: {name} in check mode ({n})
{task}
      check_mode: true
      register: {name}_check{n}
""".format(name=name, task=task, n=n) for n in (1, 2))
    return checks


def assert_unchanged(results, name):
    for n in (1, 2):
        result = results["%s_check%d" % (name, n)]
        assert not result.get("failed"), result
        assert result["changed"] is False, result


def docker_engine_answers():
    return shutil.which("docker") is not None and subprocess.run(
        ["docker", "info"], capture_output=True, check=False).returncode == 0


def test_files_on_the_target(tmp_path):
    """file_bundle and task_sync: sent once for real, then unchanged twice in check mode."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "one.deb").write_bytes(os.urandom(2000))
    dest = tmp_path / "dest"
    dest.mkdir()
    tasks = tmp_path / "tasks"
    bundle = """      aisbench.agent_runtime.file_bundle: {src: ["%s"], dest: "%s"}""" % (src / "one.deb", dest)
    sync = """      aisbench.agent_runtime.task_sync: {src: "%s", dest: "%s"}""" % (SAMPLE_TASKS, tasks)
    play = """
    - name: Send for real
%s
    - name: Sync for real
%s
""" % (bundle, sync)
    play += twice_in_check_mode("bundle", bundle) + twice_in_check_mode("sync", sync)
    results = run_tasks(tmp_path, play, ["bundle_check1", "bundle_check2", "sync_check1", "sync_check2"])
    for name in ("bundle", "sync"):
        assert_unchanged(results, name)


def test_harbor_results_summaries_and_the_fleet_report(tmp_path):
    """harbor_job (a finished job, not resubmitted), harbor_job_summary, harbor_job_info, harbor_matrix_units,
    fleet_shard_plan and fleet_report: written for real once, then unchanged twice in check mode, their files
    untouched."""
    jobs = tmp_path / "jobs"
    shutil.copytree(os.path.join(FIXTURE_JOBS, "pass-fail"), str(jobs / "pass-fail"), symlinks=True)
    reports = tmp_path / "reports"
    host_dir = reports / "night-1" / "hosts" / "host-a"
    summaries = tmp_path / "summaries"
    job = """      aisbench.agent_runtime.harbor_job: {name: pass-fail, state: started, config: {agents: [{name: oracle}]},
                                          jobs_dir: "%s"}""" % jobs
    summary = """      aisbench.agent_runtime.harbor_job_summary: {jobs_dir: "%s", jobs: [pass-fail], output_dir: "%s",
                                                  output_timestamp: night-1}""" % (jobs, summaries)
    info = """      aisbench.agent_runtime.harbor_job_info: {jobs_dir: "%s", jobs: [pass-fail]}""" % jobs
    units = """      aisbench.agent_runtime.harbor_matrix_units:
        config: {agents: [{name: oracle}], datasets: [{path: "%s"}]}""" % SAMPLE_TASKS
    plan = """      aisbench.agent_runtime.fleet_shard_plan: {report_dir: "%s", night: night-1, job_base: nightly-night-1,
                                                listings: {host-a: "{{ listing }}", host-b: "{{ listing }}"}}""" % reports
    report = """      aisbench.agent_runtime.fleet_report: {report_dir: "%s", night: night-1}""" % reports
    play = """
    - name: The finished job (a rerun submits nothing)
%s
      register: job_real
    - name: Summarize it
%s
      register: summarized
    - name: Create the night's host directory
      ansible.builtin.file: {path: "%s", state: directory, mode: "0755"}
    - name: Put the summary where nightly.yml fetches it
      ansible.builtin.copy: {src: "{{ summarized.files.json }}", dest: "%s/summary.json", remote_src: true, mode: "0644"}
    - name: List the matrix
%s
      register: listed
    - name: Keep the listing
      ansible.builtin.set_fact:
        listing: "{{ listed }}"
    - name: Plan a shard night
%s
    - name: Write the fleet report
%s
""" % (job, summary, host_dir, host_dir, units, plan, report)
    tasks = (("job", job), ("summary", summary), ("info", info), ("units", units), ("plan", plan), ("report", report))
    for name, task in tasks:
        play += twice_in_check_mode(name, task)
    names = ["job_real"] + ["%s_check%d" % (name, n) for name, _task in tasks for n in (1, 2)]
    before_jobs = tree_digest(str(jobs))
    results = run_tasks(tmp_path, play, names)
    assert results["job_real"]["changed"] is False and results["job_real"]["job_state"] == "finished"
    for name, _task in tasks:
        assert_unchanged(results, name)
    assert tree_digest(str(jobs)) == before_jobs
    assert os.path.isfile(str(reports / "night-1" / "fleet-report.md"))


def test_reads_of_the_host(tmp_path):
    """preflight_checks and binfmt_info only read: unchanged in check mode."""
    checks = """      aisbench.agent_runtime.preflight_checks: {checks: [commands, architecture, python, clock], commands: [sh]}"""
    binfmt = """      aisbench.agent_runtime.binfmt_info: {probe_native: false}"""
    play = twice_in_check_mode("checks", checks) + twice_in_check_mode("binfmt", binfmt)
    results = run_tasks(tmp_path, play, ["checks_check1", "checks_check2", "binfmt_check1", "binfmt_check2"])
    assert_unchanged(results, "checks")
    assert_unchanged(results, "binfmt")


def test_the_roles_one_round_trip_reads(tmp_path):
    """runtime_container_state and engine_objects_info only read (the host's files, this machine's engine): unchanged
    in check mode, and both say check mode."""
    (tmp_path / "jobs").mkdir()
    state = ("""      aisbench.agent_runtime.runtime_container_state: {container: aisbench-check-mode-none, """
             """image: "aisbench-test/none:0", dirs: [{key: jobs, path: "%s"}], files: [{key: f, dest: "%s"}]}"""
             % (tmp_path / "jobs", tmp_path / "none.txt"))
    objects = """      aisbench.agent_runtime.engine_objects_info: {images: ["aisbench-test/none:0"], volumes: [aisbench-none]}"""
    play = twice_in_check_mode("state", state) + twice_in_check_mode("objects", objects)
    results = run_tasks(tmp_path, play, ["state_check1", "state_check2", "objects_check1", "objects_check2"])
    assert_unchanged(results, "state")
    assert_unchanged(results, "objects")
    assert results["state_check1"]["check_mode"] is True and results["objects_check2"]["check_mode"] is True
    assert results["objects_check1"]["volumes"] == {"aisbench-none": None}


@pytest.mark.skipif(not docker_engine_answers(), reason="no Docker engine answers here")
def test_the_docker_engine(tmp_path):
    """docker_engine_check (run: its probe image imported for real first; busy) and docker_engine_state on this
    machine's engine: unchanged in check mode, and check mode really ran the probe container."""
    image = "aisbench-test/engine-probe:check-mode-%s" % uuid.uuid4().hex[:8]
    root = subprocess.run(["docker", "info", "--format", "{{.DockerRootDir}}"], capture_output=True, text=True,
                          check=True).stdout.strip()
    run_check = """      aisbench.agent_runtime.docker_engine_check: {check: run, image: "%s", data_root: "%s"}""" % (image, root)
    busy = """      aisbench.agent_runtime.docker_engine_check: {check: busy}"""
    state = """      aisbench.agent_runtime.docker_engine_state: {images: ["%s"], packages: [docker.io]}""" % image
    play = """
    - name: Check mode before the probe image is there
%s
      check_mode: true
      register: run_before
    - name: Import the probe image and run it for real
%s
      register: run_real
""" % (run_check, run_check)
    play += twice_in_check_mode("run", run_check) + twice_in_check_mode("busy", busy) + twice_in_check_mode("state", state)
    try:
        results = run_tasks(tmp_path, play, ["run_before", "run_real", "run_check1", "run_check2", "busy_check1",
                                             "busy_check2", "state_check1", "state_check2"])
    finally:
        subprocess.run(["docker", "image", "rm", image], capture_output=True, check=False)
    # Without the image check mode says what it would import and what it could not check, and fails nothing.
    assert results["run_before"]["changed"] is True and results["run_before"]["ok"] is True
    assert results["run_before"]["checked"] == ["answers", "data-root"]
    assert "does not import the probe image" in results["run_before"]["not_checked"][0]
    all_checks = ["answers", "runs a container", "data-root"]
    assert results["run_real"]["changed"] is True and results["run_real"]["checked"] == all_checks
    for name in ("run", "busy", "state"):
        assert_unchanged(results, name)
    for n in (1, 2):
        assert results["run_check%d" % n]["checked"] == all_checks
