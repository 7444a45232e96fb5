"""harbor_job_info's main() through AnsibleModule, on copies of the real fixture jobs."""

import json
import os
import shutil

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".."))
from ansible.module_utils.testing import patch_module_args  # noqa: E402
from ansible_collections.aisbench.agent_runtime.plugins.modules import harbor_job_info  # noqa: E402

FIXTURE_JOBS = os.path.join(ROOT, "tests", "fixtures", "harbor", "jobs")


def run_module(capsys, args, module=harbor_job_info):
    with patch_module_args(args):
        with pytest.raises(SystemExit) as exc:
            module.main()
    result = json.loads(capsys.readouterr().out)
    return exc.value.code, result


@pytest.fixture
def jobs_dir(tmp_path):
    target = tmp_path / "jobs"
    shutil.copytree(FIXTURE_JOBS, target)
    return str(target)


def test_all_jobs(capsys, jobs_dir):
    rc, result = run_module(capsys, {"jobs_dir": jobs_dir})
    assert rc == 0 and result["changed"] is False
    assert [j["name"] for j in result["jobs"]] == sorted(os.listdir(jobs_dir))
    assert result["errors"] == []
    assert "files" not in result
    rows = {(r["benchmark"], r["agent"], r["model"]) for r in result["pass_at_1"]}
    assert ("hello", "oracle", None) in rows and ("slow", "oracle", None) in rows


def test_one_job_pass_at_1(capsys, jobs_dir):
    rc, result = run_module(capsys, {"jobs_dir": jobs_dir, "jobs": ["pass-fail"]})
    assert rc == 0
    assert len(result["jobs"]) == 1 and result["jobs"][0]["pass_at_1"] == 0.5
    assert result["pass_at_1"] == [{"benchmark": "hello", "agent": "oracle", "model": None, "jobs": ["pass-fail"],
                                    "primary_keys": ["reward"], "n_completed": 2, "n_scored": 2, "n_reward_invalid": 0, "n_errored": 0, "n_cancelled": 0,
                                    "n_pass": 1, "pass_at_1": 0.5, "mean_reward": 0.5}]
    # details (the default): the task outcomes of the eval.
    tasks = {t["task"]: t for t in result["jobs"][0]["evals"][0]["tasks"]}
    assert (tasks["hello-pass"]["n_pass"], tasks["hello-fail"]["n_fail"]) == (1, 1)
    assert result["progress"] == []


def test_trials_lists_every_completed_trial_for_the_shard_merge(capsys, jobs_dir):
    rc, result = run_module(capsys, {"jobs_dir": jobs_dir, "jobs": ["shard2-host-b"], "trials": True})
    assert rc == 0
    job = result["jobs"][0]
    with open(os.path.join(jobs_dir, "shard2-host-b", "result.json")) as handle:
        harbor = json.load(handle)
    assert len(job["trials"]) == harbor["n_total_trials"] == harbor["stats"]["n_completed_trials"] == 4
    assert {(t["task"], t["task_dir"], tuple(t["key"])) for t in job["trials"]} == {
        ("hello-pass", "hello-pass", ("oracle", None, "hello")), ("hello-pass", "hello-pass", ("nop", None, "hello"))}
    assert all(t["durations"]["total"] > 0 for t in job["trials"])
    # The per-task trial time the next night's shard plan balances by.
    tasks = job["evals"][0]["tasks"]
    assert tasks[0]["n_timed"] == 2 and tasks[0]["total_sec"] > 0
    rc, plain = run_module(capsys, {"jobs_dir": jobs_dir, "jobs": ["shard2-host-b"]})
    assert "trials" not in plain["jobs"][0]


def test_reward_key_and_progress(capsys, jobs_dir):
    rc, result = run_module(capsys, {"jobs_dir": jobs_dir, "jobs": ["multi-key", "multi-key-running"],
                                     "reward_key": "style", "details": False})
    assert rc == 0
    jobs = {j["name"]: j for j in result["jobs"]}
    multikey = {e["benchmark"]: e for e in jobs["multi-key"]["evals"]}["multikey"]
    assert multikey["primary_key"] == "style" and multikey["pass_at_1"] == 0.4 and "tasks" not in multikey
    (progress,) = result["progress"]
    assert progress["job"] == "multi-key-running" and (progress["n_completed"], progress["n_total"]) == (3, 7)
    assert progress["line"].startswith("job multi-key-running: 3/7 trials done")
    rc, result = run_module(capsys, {"jobs_dir": jobs_dir, "reward_key": " "})
    assert rc == 1 and "reward_key refused" in result["msg"]


def test_corrupt_job_is_reported_and_others_summarized(capsys, jobs_dir):
    with open(os.path.join(jobs_dir, "two-agents", "result.json"), "w") as handle:
        handle.write('{"id": ')
    os.unlink(os.path.join(jobs_dir, "errored", "config.json"))
    rc, result = run_module(capsys, {"jobs_dir": jobs_dir, "jobs": ["two-agents", "errored", "pass-fail", "ghost"]})
    assert rc == 0
    errors = {e["job"]: e["error"] for e in result["errors"]}
    assert errors["two-agents"].startswith("result.json is not valid JSON")
    assert errors["errored"] == "config.json is missing"
    assert errors["ghost"] == "job directory not found"
    jobs = {j["name"]: j for j in result["jobs"]}
    assert jobs["pass-fail"]["error"] is None and jobs["pass-fail"]["pass_at_1"] == 0.5
    assert jobs["two-agents"]["status"] == "error" and jobs["two-agents"]["n_completed"] == 4


@pytest.mark.parametrize("args,message", [
    ({"jobs_dir": "/nonexistent/jobs"}, "jobs_dir /nonexistent/jobs is not a directory"),
    # Writing the summary is harbor_job_summary's (an _info module changes nothing).
    ({"output_dir": "/tmp/x"}, "module: output_dir"),
])
def test_bad_options_fail(capsys, jobs_dir, args, message):
    rc, result = run_module(capsys, dict({"jobs_dir": jobs_dir}, **args))
    assert rc == 1 and result["failed"] is True
    assert message in result["msg"]


def test_reads_only(capsys, jobs_dir):
    """An _info module changes nothing: the same summary in and out of check mode, the job tree untouched."""
    before = sorted((root, sorted(files)) for root, _dirs, files in os.walk(jobs_dir))
    rc, result = run_module(capsys, {"jobs_dir": jobs_dir, "jobs": ["pass-fail"]})
    rc_check, checked = run_module(capsys, {"jobs_dir": jobs_dir, "jobs": ["pass-fail"], "_ansible_check_mode": True})
    assert (rc, rc_check) == (0, 0) and result["changed"] is False and checked["changed"] is False
    assert "files" not in result and checked["pass_at_1"] == result["pass_at_1"]
    assert sorted((root, sorted(files)) for root, _dirs, files in os.walk(jobs_dir)) == before
