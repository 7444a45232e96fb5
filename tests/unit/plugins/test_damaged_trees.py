# -*- coding: utf-8 -*-
"""Damaged job trees are data, never a traceback: harbor_job_info, status.yml's job_status filter, fleet report.

Every damage here is real on disk: symlink loops, a dangling link, a FIFO where a JSON file belongs, a directory in
its place, a cut result.json, a job without started_at.

Its tests that start a process: tests/integration/scripts/test_damaged_trees_module.py.
"""

import json
import os
import shutil
import sys

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
COLLECTIONS = os.path.join(ROOT, ".cache", "collections")
sys.path.insert(0, COLLECTIONS)

from ansible_collections.aisbench.agent_runtime.plugins.filter.status_table import job_status  # noqa: E402
from ansible_collections.aisbench.agent_runtime.plugins.plugin_utils import _fleet_report as fleet_report  # noqa: E402
from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _harbor_results as harbor_results  # noqa: E402

FIXTURE = os.path.join(ROOT, "tests", "fixtures", "harbor", "jobs", "nop-with-model")


def damaged_jobs_dir(root):
    """A jobs directory with one good job and every kind of damage the modules must report per job."""
    jobs = root / "jobs"
    jobs.mkdir()
    shutil.copytree(FIXTURE, str(jobs / "good"))
    os.symlink("loop", str(jobs / "loop"))  # points at itself: ELOOP
    os.symlink("/nonexistent-aisbench", str(jobs / "dangling"))
    cut = jobs / "cut"
    cut.mkdir()
    shutil.copy(os.path.join(FIXTURE, "config.json"), str(cut))
    with open(os.path.join(FIXTURE, "result.json"), "rb") as handle:
        (cut / "result.json").write_bytes(handle.read()[:100])
    fifo = jobs / "fifo"
    fifo.mkdir()
    shutil.copy(os.path.join(FIXTURE, "config.json"), str(fifo))
    os.mkfifo(str(fifo / "result.json"))
    isdir = jobs / "isdir"
    isdir.mkdir()
    (isdir / "result.json").mkdir()
    looped = jobs / "looped-file"
    looped.mkdir()
    os.symlink("result.json", str(looped / "result.json"))
    nostart = jobs / "nostart"
    shutil.copytree(FIXTURE, str(nostart))
    with open(str(nostart / "result.json")) as handle:
        data = json.load(handle)
    data.pop("started_at")
    (nostart / "result.json").write_text(json.dumps(data))
    return jobs


EXPECTED_ERRORS = {
    "loop": "the job directory cannot be read: Too many levels of symbolic links",
    "dangling": "the job directory cannot be read: No such file or directory",
    "cut": "result.json is not valid JSON: ",
    "fifo": "cannot read result.json: a FIFO",
    "isdir": "cannot read result.json: a directory",
    "looped-file": "cannot read result.json: Too many levels of symbolic links",
}


def test_summarize_reports_each_damaged_job_with_its_reason(tmp_path):
    jobs = damaged_jobs_dir(tmp_path)
    result = harbor_results.summarize(str(jobs), ["all"])
    by_name = {job["name"]: job for job in result["jobs"]}
    assert sorted(by_name) == sorted(list(EXPECTED_ERRORS) + ["good", "nostart"])
    for name, error in EXPECTED_ERRORS.items():
        assert by_name[name]["status"] == "error" and by_name[name]["error"].startswith(error), name
    assert by_name["good"]["error"] is None and by_name["good"]["status"] == "finished"
    assert by_name["nostart"]["error"] is None and by_name["nostart"]["started_at"] is None
    # latest still works with damaged neighbours and a job without started_at.
    assert harbor_results.select_jobs(str(jobs), ["latest"])[0] == ["good"]


def test_job_status_survives_missing_and_odd_timestamps():
    jobs = [{"name": "a", "status": "finished", "started_at": None, "error": None},
            {"name": "b", "status": "unfinished", "started_at": "2026-12-02T01:00:00", "error": None},
            {"name": "c", "status": "error", "error": "result.json is empty"},
            {"name": "d", "status": "finished", "started_at": 12, "error": None}]
    columns = job_status(jobs)
    assert columns["latest_jobs"][0] == "b" and columns["jobs_damaged"] == 1
    assert columns["problems"] == ["job c: result.json is empty"]


def test_fleet_report_names_damaged_jobs_and_unreadable_host_dirs(tmp_path):
    jobs = damaged_jobs_dir(tmp_path)
    night = tmp_path / "reports" / "2026-12-02"
    hosts = night / "hosts"
    (hosts / "gpu01").mkdir(parents=True)
    summary = harbor_results.summarize(str(jobs), ["all"])
    (hosts / "gpu01" / "summary.json").write_text(json.dumps(summary))
    os.symlink("looped-host", str(hosts / "looped-host"))
    (hosts / "fifo-host").mkdir()
    os.mkfifo(str(hosts / "fifo-host" / "summary.json"))
    entries = {entry["host"]: entry for entry in fleet_report.collect_hosts(str(night), str(hosts))}
    assert "job cut: result.json is not valid JSON: " in " ".join(entries["gpu01"]["notes"])
    assert "job loop: the job directory cannot be read: Too many levels of symbolic links" in entries["gpu01"]["notes"]
    assert entries["looped-host"]["status"] == "failed"
    assert entries["looped-host"]["error"] == "cannot read summary.json: Too many levels of symbolic links"
    assert entries["fifo-host"]["error"] == "cannot read summary.json: a FIFO"


@pytest.mark.parametrize("name", sorted(EXPECTED_ERRORS))
def test_summarize_job_alone(tmp_path, name):
    jobs = damaged_jobs_dir(tmp_path)
    summary = harbor_results.summarize_job(str(jobs / name), name)
    assert summary["error"].startswith(EXPECTED_ERRORS[name])
