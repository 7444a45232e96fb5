"""harbor_job_summary's main() through AnsibleModule, on copies of the real fixture jobs: the summary harbor_job_info
returns, written as JSON, CSV and Markdown files."""

import json
import os
import shutil

import pytest

from ansible_collections.aisbench.agent_runtime.plugins.modules import harbor_job_info
from ansible_collections.aisbench.agent_runtime.plugins.modules import harbor_job_summary
import test_harbor_job_info
from test_harbor_job_info import jobs_dir  # a fixture  # noqa: F401  # pylint: disable=unused-import


def run_module(capsys, args, module=harbor_job_summary):
    return test_harbor_job_info.run_module(capsys, args, module)


def test_returns_what_harbor_job_info_returns(capsys, jobs_dir, tmp_path):
    args = {"jobs_dir": jobs_dir, "jobs": ["pass-fail", "multi-key-running"], "trials": True}
    rc, written = run_module(capsys, dict(args, output_dir=str(tmp_path / "out"), output_timestamp="n1"))
    rc_info, info = run_module(capsys, args, module=harbor_job_info)
    assert (rc, rc_info) == (0, 0)
    assert {key: written[key] for key in ("jobs", "pass_at_1", "progress", "errors")} == {
        key: info[key] for key in ("jobs", "pass_at_1", "progress", "errors")}
    with open(written["files"]["json"]) as handle:
        assert json.load(handle)["pass_at_1"] == info["pass_at_1"]


def test_reports_written(capsys, jobs_dir, tmp_path):
    out = tmp_path / "reports" / "nightly"
    rc, result = run_module(capsys, {"jobs_dir": jobs_dir, "jobs": ["latest"], "output_dir": str(out),
                                     "output_timestamp": "run-42"})
    assert rc == 0 and result["changed"] is True
    assert result["files"] == {f: str(out / ("summary-run-42." + f)) for f in ("json", "csv", "md")}
    assert sorted(os.listdir(str(out))) == ["summary-run-42.csv", "summary-run-42.json", "summary-run-42.md"]
    with open(result["files"]["json"]) as handle:
        assert [j["name"] for j in json.load(handle)["jobs"]] == [result["jobs"][0]["name"]]


def test_reports_only_some_formats_with_generated_timestamp(capsys, jobs_dir, tmp_path):
    rc, result = run_module(capsys, {"jobs_dir": jobs_dir, "output_dir": str(tmp_path), "output_formats": ["md", "md"]})
    assert rc == 0
    assert list(result["files"]) == ["md"]
    name = os.path.basename(result["files"]["md"])
    assert name.startswith("summary-") and len(name) == len("summary-YYYYMMDD-HHMMSS.md")


def test_check_mode_writes_nothing(capsys, jobs_dir, tmp_path):
    out = tmp_path / "reports"
    rc, result = run_module(capsys, {"jobs_dir": jobs_dir, "output_dir": str(out), "_ansible_check_mode": True})
    assert rc == 0 and result["changed"] is True
    assert set(result["files"]) == {"json", "csv", "md"}
    assert not out.exists()


@pytest.mark.parametrize("args,message", [
    ({"jobs_dir": "/nonexistent/jobs"}, "jobs_dir /nonexistent/jobs is not a directory"),
    ({"reward_key": " "}, "reward_key refused: an empty key"),
    ({"output_timestamp": "../x"}, "output_timestamp '../x' refused"),
    ({"output_formats": ["xml"]}, "value of output_formats must be one or more of"),
])
def test_bad_options_fail(capsys, jobs_dir, tmp_path, args, message):
    rc, result = run_module(capsys, dict({"jobs_dir": jobs_dir, "output_dir": str(tmp_path / "out")}, **args))
    assert rc == 1 and result["failed"] is True
    assert message in result["msg"]
    assert not (tmp_path / "out").exists()


def test_output_dir_is_required(capsys, jobs_dir):
    rc, result = run_module(capsys, {"jobs_dir": jobs_dir})
    assert rc == 1 and "missing required arguments: output_dir" in result["msg"]


def test_output_dir_that_is_a_file(capsys, jobs_dir, tmp_path):
    target = tmp_path / "file"
    target.write_text("x")
    rc, result = run_module(capsys, {"jobs_dir": jobs_dir, "output_dir": str(target)})
    assert rc == 1 and "exists and is not a directory" in result["msg"]
    assert target.read_text() == "x"


def test_rerun_with_the_same_timestamp_rewrites_nothing(capsys, jobs_dir, tmp_path):
    """A nightly rerun summarizes the same finished jobs into the same files: changed=false, files untouched."""
    out = tmp_path / "reports"
    args = {"jobs_dir": jobs_dir, "output_dir": str(out), "output_timestamp": "night-1"}
    rc, first = run_module(capsys, args)
    assert rc == 0 and first["changed"] is True
    mtimes = {fmt: os.stat(path).st_mtime_ns for fmt, path in first["files"].items()}
    rc, check = run_module(capsys, dict(args, _ansible_check_mode=True))
    assert rc == 0 and check["changed"] is False
    rc, second = run_module(capsys, args)
    assert rc == 0 and second["changed"] is False
    assert {fmt: os.stat(path).st_mtime_ns for fmt, path in second["files"].items()} == mtimes
    # A job's result changes: the files are rewritten.
    shutil.rmtree(os.path.join(jobs_dir, sorted(os.listdir(jobs_dir))[0]))
    rc, check = run_module(capsys, dict(args, _ansible_check_mode=True))
    assert rc == 0 and check["changed"] is True
    rc, third = run_module(capsys, args)
    assert rc == 0 and third["changed"] is True
    assert len(json.load(open(third["files"]["json"]))["jobs"]) == len(first["jobs"]) - 1
