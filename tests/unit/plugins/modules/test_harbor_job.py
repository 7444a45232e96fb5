"""harbor_job's main() through AnsibleModule.

Real Harbor submissions, waits, cancels and resumes run in the harbor_modules Molecule
scenario; here: refusals, check mode (the exact commands), and the decisions taken on the
real finished, errored and interrupted fixture jobs, which need no Harbor process.

Its tests that start a process: tests/integration/docker/test_harbor_job_docker.py.
"""
import json
import os
import shutil

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".."))
from ansible.module_utils.testing import patch_module_args  # noqa: E402
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._harbor_runner import DETACH_SCRIPT  # noqa: E402
from ansible_collections.aisbench.agent_runtime.plugins.modules import harbor_job  # noqa: E402

FIXTURES = os.path.join(ROOT, "tests", "fixtures", "harbor")
SECRET = "sk-test-do-not-print-4242"


def run_module(capsys, args):
    with patch_module_args(args):
        with pytest.raises(SystemExit) as exc:
            harbor_job.main()
    out = capsys.readouterr().out
    return exc.value.code, json.loads(out), out


@pytest.fixture
def jobs_dir(tmp_path):
    target = tmp_path / "jobs"
    shutil.copytree(os.path.join(FIXTURES, "jobs"), target)
    return str(target)


def base(jobs_path, **extra):
    args = {"jobs_dir": jobs_path, "cli_spelling": "job", "harbor_version": "0.26.0", "harbor_executable": "/opt/harbor/bin/harbor"}
    args.update(extra)
    return args


def snapshot(path):
    listing = []
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            full = os.path.join(root, name)
            listing.append((os.path.relpath(full, path), os.path.getsize(full) if os.path.isfile(full) else None))
    return sorted(listing)


@pytest.mark.parametrize("name", ["../escape", "a/b", "with space", "-rf", ".hidden", "x..y", ""])
def test_unsafe_names_are_refused_before_anything_happens(capsys, jobs_dir, name):
    before = snapshot(jobs_dir)
    rc, result, _unused = run_module(capsys, base(jobs_dir, name=name, config={"agents": [{"name": "oracle"}]}))
    assert rc == 1 and result["msg"].startswith("name %r refused" % name)
    assert snapshot(jobs_dir) == before


def test_unsafe_prefix_is_refused(capsys, jobs_dir):
    rc, result, _unused = run_module(capsys, base(jobs_dir, name_prefix="a/b", config={}))
    assert rc == 1 and "name_prefix 'a/b' is not usable" in result["msg"]


@pytest.mark.parametrize("extra,message", [
    ({"state": "resumed"}, "state is resumed but all of the following are missing: name"),
    ({"state": "cancelled"}, "state is cancelled but all of the following are missing: name"),
    ({"name": "j", "env": {"BAD-KEY": "x"}}, "env key 'BAD-KEY' is not a valid variable name"),
    ({"name": "j", "env": {"K": "${HOME}"}}, "contains '${'"),
    ({"name": "j", "concurrency": 0}, "concurrency must be at least 1"),
    ({"name": "j", "timeout": -1}, "timeout must not be negative"),
    ({"name": "j", "jobs_dir": "relative/jobs"}, "jobs_dir must be an absolute path"),
])
def test_bad_options_fail(capsys, jobs_dir, extra, message):
    rc, result, _unused = run_module(capsys, base(jobs_dir, **extra))
    assert rc == 1 and message in result["msg"]


def test_check_mode_returns_the_exact_command_for_an_inline_config(capsys, jobs_dir):
    before = snapshot(jobs_dir)
    config = {"agents": [{"name": "oracle"}, {"name": "nop"}], "datasets": [{"path": "/opt/swebench/tasks/hello"}]}
    rc, result, out = run_module(capsys, base(
        jobs_dir, name="smoke", config=config, agents=["nop"], concurrency=2,
        env={"OPENAI_API_KEY": SECRET}, _ansible_check_mode=True))
    assert rc == 0 and result["changed"] is True
    assert result["action"] == "submitted" and result["job_state"] == "absent"
    matrix = os.path.join(jobs_dir, ".harbor_job", "smoke", "matrix.json")
    env_file = os.path.join(jobs_dir, ".harbor_job", "smoke", "env")
    assert result["matrix_path"] == matrix
    assert result["command"] == ["/opt/harbor/bin/harbor", "job", "start", "-c", matrix, "--job-name", "smoke",
                                 "-o", jobs_dir, "-y", "-q", "-n", "2", "--env-file", env_file]
    assert result["exec_command"] == ["sh", "-c", DETACH_SCRIPT, "harbor_job",
                                      os.path.join(jobs_dir, ".harbor_job", "smoke", "harbor.pid"),
                                      os.path.join(jobs_dir, ".harbor_job", "smoke", "harbor.log")] + result["command"]
    assert SECRET not in out
    assert snapshot(jobs_dir) == before


def test_filter_without_match_fails_before_anything_happens(capsys, jobs_dir):
    before = snapshot(jobs_dir)
    rc, result, _unused = run_module(capsys, base(jobs_dir, name="n", config=os.path.join(FIXTURES, "matrices", "two-agents.yaml"),
                                                  agents=["openhands"]))
    assert rc == 1
    assert result["msg"] == "no agent matches the agents filter ['openhands']; the config has: oracle, nop"
    assert snapshot(jobs_dir) == before


def test_submission_needs_a_config(capsys, jobs_dir):
    rc, result, _unused = run_module(capsys, base(jobs_dir, name="new-job"))
    assert rc == 1 and result["msg"] == "config is required to submit job new-job (it does not exist yet)"


def test_generated_name(capsys, jobs_dir):
    rc, result, _unused = run_module(capsys, base(jobs_dir, name_prefix="nightly", config={}, _ansible_check_mode=True))
    assert rc == 0 and result["name"].startswith("nightly-") and len(result["name"]) == len("nightly-YYYYMMDD-HHMMSS")


@pytest.mark.parametrize("state", ["finished", "started"])
def test_finished_job_is_not_submitted_again(capsys, jobs_dir, state):
    before = snapshot(jobs_dir)
    rc, result, _unused = run_module(capsys, base(jobs_dir, name="pass-fail", state=state, config={"datasets": []}))
    assert rc == 0 and result["changed"] is False
    assert result["action"] == "none" and result["job_state"] == "finished"
    assert result["progress"] == {"n_total": 2, "n_completed": 2, "n_errored": 0, "n_running": 0, "n_pending": 0,
                                  "n_cancelled": 0, "n_pass": 1, "pass_at_1": 0.5}
    assert result["summary"]["benchmarks"] == ["hello"]
    assert snapshot(jobs_dir) == before


def test_resumed_leaves_a_finished_job_without_retryable_trials_alone(capsys, jobs_dir):
    rc, result, _unused = run_module(capsys, base(jobs_dir, name="errored", state="resumed"))
    assert rc == 0 and result["changed"] is False and result["job_state"] == "finished"


def test_resuming_a_missing_job_fails(capsys, jobs_dir):
    rc, result, _unused = run_module(capsys, base(jobs_dir, name="ghost", state="resumed"))
    assert rc == 1 and result["msg"] == "job ghost does not exist in %s: nothing to resume" % jobs_dir


def test_missing_harbor_is_a_clear_failure(capsys, jobs_dir):
    args = base(jobs_dir, name="fresh", config={}, cli_spelling="auto", harbor_executable="/nonexistent/harbor")
    rc, result, _unused = run_module(capsys, args)
    assert rc == 1 and result["msg"] == "harbor_executable /nonexistent/harbor not found on the target"


def test_trial_network_points_harbor_to_a_copy_with_the_network_overlay(capsys, jobs_dir, tmp_path):
    matrix = tmp_path / "matrix.yaml"
    shutil.copy(os.path.join(FIXTURES, "matrices", "errored.yaml"), str(matrix))
    original = matrix.read_text()
    before = snapshot(jobs_dir)
    rc, result, _unused = run_module(capsys, base(jobs_dir, name="nightly", config=str(matrix), trial_network="aisbench-model",
                                                  _ansible_check_mode=True))
    # Without the network the file goes to Harbor untouched; with it, a copy that adds the overlay.
    assert rc == 0 and result["command"][3:5] == ["-c", os.path.join(jobs_dir, ".harbor_job", "nightly", "matrix.json")]
    assert result["matrix_path"] == os.path.join(jobs_dir, ".harbor_job", "nightly", "matrix.json")
    assert matrix.read_text() == original and snapshot(jobs_dir) == before
