"""harbor_job's main() through AnsibleModule.

Real Harbor submissions, waits, cancels and resumes run in the harbor_modules Molecule
scenario; here: refusals, check mode (the exact commands), and the decisions taken on the
real finished, errored and interrupted fixture jobs, which need no Harbor process.

Its pure tests: tests/unit/plugins/modules/test_harbor_job.py.
"""
import os
import shutil
import subprocess

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
from test_harbor_job import base, jobs_dir, run_module, snapshot  # jobs_dir is a fixture  # noqa: F401  # pylint: disable=unused-import

FIXTURES = os.path.join(ROOT, "tests", "fixtures", "harbor")


def docker_engine_reachable():
    docker = shutil.which("docker")
    return bool(docker) and subprocess.run([docker, "info", "--format", "{{.ServerVersion}}"], capture_output=True,
                                           timeout=60, check=False).returncode == 0


# Resume and cancel ask the engine which compose projects run; the container check asks it about the container.
needs_docker = pytest.mark.skipif(not docker_engine_reachable(),
                                  reason="needs the docker CLI and a reachable Docker engine (make lint unit without Docker)")


@needs_docker
def test_check_mode_in_a_container_and_with_a_file_config(capsys, jobs_dir, tmp_path):
    matrix = tmp_path / "matrix.yaml"
    shutil.copy(os.path.join(FIXTURES, "matrices", "errored.yaml"), str(matrix))
    original = matrix.read_text()
    args = base(jobs_dir, name="nightly", config=str(matrix), host_jobs_dir=jobs_dir, jobs_dir="/opt/swebench/jobs",
                container="aisbench-no-such-container", _ansible_check_mode=True)
    # The container must be running, even in check mode.
    rc, result, _unused = run_module(capsys, args)
    assert rc == 1 and "runtime container aisbench-no-such-container not found" in result["msg"]
    # Without filters a file config goes to Harbor untouched (on the target here).
    del args["container"]
    rc, result, _unused = run_module(capsys, args)
    assert rc == 0 and result["command"][3:5] == ["-c", str(matrix)]
    assert "matrix_path" not in result
    assert result["job_dir"] == "/opt/swebench/jobs/nightly"
    assert result["host_job_dir"] == os.path.join(jobs_dir, "nightly")
    # With a filter the module reads it (JSON or YAML) and points Harbor to the filtered copy.
    rc, result, _unused = run_module(capsys, dict(args, datasets=["hello"]))
    assert rc == 0 and result["command"][3:5] == ["-c", "/opt/swebench/jobs/.harbor_job/nightly/matrix.json"]
    assert matrix.read_text() == original


@needs_docker
def test_resumed_reruns_trials_that_failed_with_a_listed_exception(capsys, jobs_dir):
    rc, result, _unused = run_module(capsys, base(jobs_dir, name="errored", state="resumed",
                                                  retry_exceptions=["RuntimeError"], _ansible_check_mode=True))
    assert rc == 0 and result["changed"] is True and result["action"] == "resumed"
    assert result["command"] == ["/opt/harbor/bin/harbor", "job", "resume", "-p", os.path.join(jobs_dir, "errored"),
                                 "-f", "CancelledError", "-f", "RuntimeError"]


@needs_docker
def test_interrupted_job_is_resumed_not_resubmitted(capsys, jobs_dir):
    rc, result, _unused = run_module(capsys, base(jobs_dir, name="interrupted", state="finished",
                                                  config={"agents": []}, _ansible_check_mode=True))
    assert rc == 0 and result["changed"] is True
    assert result["job_state"] == "interrupted" and result["action"] == "resumed"
    assert result["command"][2:5] == ["resume", "-p", os.path.join(jobs_dir, "interrupted")]
    assert result["progress"]["n_cancelled"] == 1
    assert "summary" not in result


@needs_docker
def test_cancelling_a_job_that_does_not_run_changes_nothing(capsys, jobs_dir):
    """Looks for the job's leftover trial containers on the real engine, finds none."""
    before = snapshot(jobs_dir)
    for name in ("interrupted", "pass-fail", "ghost"):
        rc, result, _unused = run_module(capsys, base(jobs_dir, name=name, state="cancelled"))
        assert rc == 0 and result["changed"] is False, result
        assert result["action"] == "none"
    assert snapshot(jobs_dir) == before
