# -*- coding: utf-8 -*-
"""Damaged job trees are data, never a traceback: harbor_job_info, status.yml's job_status filter, fleet report.

Every damage here is real on disk: symlink loops, a dangling link, a FIFO where a JSON file belongs, a directory in
its place, a cut result.json, a job without started_at.

Its pure tests: tests/unit/plugins/test_damaged_trees.py.
"""

import json
import os
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
COLLECTIONS = os.path.join(ROOT, ".cache", "collections")
sys.path.insert(0, COLLECTIONS)

from ansible_collections.aisbench.agent_runtime.plugins.filter.status_table import job_status  # noqa: E402

from test_damaged_trees import damaged_jobs_dir


EXPECTED_ERRORS = {
    "loop": "the job directory cannot be read: Too many levels of symbolic links",
    "dangling": "the job directory cannot be read: No such file or directory",
    "cut": "result.json is not valid JSON: ",
    "fifo": "cannot read result.json: a FIFO",
    "isdir": "cannot read result.json: a directory",
    "looped-file": "cannot read result.json: Too many levels of symbolic links",
}


def test_harbor_job_info_module_reports_them_without_failing(tmp_path):
    jobs = damaged_jobs_dir(tmp_path)
    args = tmp_path / "args.json"
    args.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": {"jobs_dir": str(jobs)}}))
    env = dict(os.environ, PYTHONPATH=COLLECTIONS)
    module = os.path.join(COLLECTIONS, "ansible_collections", "aisbench", "agent_runtime", "plugins", "modules",
                          "harbor_job_info.py")
    proc = subprocess.run([sys.executable, module, str(args)], stdout=subprocess.PIPE, timeout=60, env=env, check=False)
    result = json.loads(proc.stdout.decode())
    assert not result.get("failed"), result
    errors = {item["job"]: item["error"] for item in result["errors"]}
    assert sorted(errors) == sorted(EXPECTED_ERRORS)
    # status.yml's columns for the same jobs: no sort error on the missing started_at, one problem per damaged job.
    columns = job_status(result["jobs"])
    assert columns["jobs_total"] == 8 and columns["jobs_damaged"] == 6 and columns["jobs_finished"] == 2
    assert columns["latest_jobs"][0] == "good"
    assert "job loop: the job directory cannot be read: Too many levels of symbolic links" in columns["problems"]
