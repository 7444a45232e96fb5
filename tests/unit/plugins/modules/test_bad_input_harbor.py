"""Bad input the Harbor modules once let through (see docs/bad_input.md).

* harbor_job handed a config file to Harbor unread when no filter was set: a broken file made
  Harbor fail only after the module had written the job's files; a non-UTF-8 file raised a
  traceback when a filter was set.
* harbor_results raised RecursionError (a traceback) on a deeply nested result.json.
"""

import json
import os
import shutil

import pytest

from ansible.module_utils.testing import patch_module_args
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._harbor_results import summarize
from ansible_collections.aisbench.agent_runtime.plugins.modules import harbor_job

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".."))
FIXTURE_JOBS = os.path.join(ROOT, "tests", "fixtures", "harbor", "jobs")
NESTED = b"[" * 100000 + b"]" * 100000


def run_harbor_job(capsys, args):
    with patch_module_args(args):
        with pytest.raises(SystemExit) as exc:
            harbor_job.main()
    return exc.value.code, json.loads(capsys.readouterr().out)


def listing(path):
    return sorted(os.path.relpath(os.path.join(root, name), path) for root, dirs, files in os.walk(path) for name in dirs + files)


@pytest.mark.parametrize("content, filters, message", [
    (b"datasets:\n  - path: [x\n", {}, "cannot parse the job config %s: while parsing a flow sequence"),
    (b"datasets:\n  - path: [x\n", {"datasets": ["x"]}, "cannot parse the job config %s: while parsing a flow sequence"),
    (b"- just\n- a list\n", {}, "the job config %s is not a mapping"),
    (b"\xff\xfe not text", {}, "cannot read the job config %s: not UTF-8 text"),
    (b"\xff\xfe not text", {"agents": ["oracle"]}, "cannot read the job config %s: not UTF-8 text"),
])
def test_a_broken_config_file_is_refused_before_anything_is_written(capsys, tmp_path, content, filters, message):
    config = tmp_path / "matrix.yaml"
    config.write_bytes(content)
    jobs_dir = tmp_path / "jobs"
    jobs_dir.mkdir()
    args = dict({"name": "nightly", "config": str(config), "jobs_dir": str(jobs_dir), "state": "started",
                 "cli_spelling": "job", "harbor_version": "0.26.0", "harbor_executable": "/bin/false"}, **filters)
    rc, result = run_harbor_job(capsys, args)
    assert rc == 1 and result["msg"].startswith(message % config), result["msg"]
    assert listing(str(jobs_dir)) == []
    assert config.read_bytes() == content


def test_a_missing_config_file_is_refused_but_previewed_in_check_mode(capsys, tmp_path):
    missing = str(tmp_path / "written-by-an-earlier-task.yaml")
    args = {"name": "nightly", "config": missing, "jobs_dir": str(tmp_path), "cli_spelling": "job", "harbor_version": "0.26.0",
            "harbor_executable": "/bin/false"}
    rc, result = run_harbor_job(capsys, args)
    assert rc == 1 and result["msg"] == "the job config %s does not exist on the target" % missing
    rc, result = run_harbor_job(capsys, dict(args, _ansible_check_mode=True))
    assert rc == 0 and result["command"][3:5] == ["-c", missing]
    assert listing(str(tmp_path)) == []


@pytest.mark.parametrize("where", ["job", "trial"])
def test_a_deeply_nested_result_json_is_an_error_not_a_traceback(tmp_path, where):
    jobs_dir = tmp_path / "jobs"
    for job in ("pass-fail", "running"):
        shutil.copytree(os.path.join(FIXTURE_JOBS, job), str(jobs_dir / job))
    if where == "job":
        (jobs_dir / "pass-fail" / "result.json").write_bytes(NESTED)
        broken = "running"
    else:
        # An unfinished job reads the trial files its job-level result.json does not cover.
        trial = jobs_dir / "running" / "nested__trial"
        trial.mkdir()
        (trial / "result.json").write_bytes(NESTED)
        broken = "pass-fail"
    jobs = {job["name"]: job for job in summarize(str(jobs_dir), ["all"])["jobs"]}
    if where == "job":
        assert jobs["pass-fail"]["status"] == "error"
        assert jobs["pass-fail"]["error"].startswith("result.json is not valid JSON")
    else:
        assert {"trial": "nested__trial", "error": "result.json is not valid JSON"} in jobs["running"]["trial_errors"]
    assert jobs[broken]["error"] is None
