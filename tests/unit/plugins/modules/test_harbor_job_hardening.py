# -*- coding: utf-8 -*-
"""harbor_job: the job lock, damaged jobs, refused timeouts and configs that would hang Harbor.

Two real submissions of one job at once (real Harbor, two real nightly.yml runs) run in the harbor_modules Molecule
scenario; here the lock itself is taken by real processes and the refusals run through main().

Its tests that start a process: tests/integration/scripts/test_harbor_job_lock.py.
"""

import os
import time

import pytest

from test_harbor_job import base, jobs_dir, run_module, snapshot  # jobs_dir is a fixture  # noqa: F401  # pylint: disable=unused-import


def cut(path):
    with open(path, "rb") as handle:
        data = handle.read()
    with open(path, "wb") as handle:
        handle.write(data[: len(data) // 2])


@pytest.mark.parametrize("state", ["started", "finished", "resumed"])
def test_a_finished_job_with_a_cut_result_is_never_resumed(capsys, jobs_dir, state):  # noqa: F811
    cut(os.path.join(jobs_dir, "pass-fail", "result.json"))
    before = snapshot(jobs_dir)
    rc, result, _unused = run_module(capsys, base(jobs_dir, name="pass-fail", state=state))
    assert rc == 1 and result["job_state"] == "damaged"
    assert result["msg"].startswith("job pass-fail cannot be read (result.json is not valid JSON: ")
    assert "Harbor was not started on it. Fix or move %s" % os.path.join(jobs_dir, "pass-fail") in result["msg"]
    assert result["action"] == "none" and result["command"] == []
    assert snapshot(jobs_dir) == before


def test_a_job_directory_that_is_a_symlink_loop_is_damaged(capsys, jobs_dir):  # noqa: F811
    os.symlink("loop", os.path.join(jobs_dir, "loop"))
    rc, result, _unused = run_module(capsys, base(jobs_dir, name="loop", state="started", config={}))
    assert rc == 1 and result["job_state"] == "damaged"
    assert result["damage"] == "the job directory cannot be read: Too many levels of symbolic links"


def test_cancelling_a_damaged_job_is_fine(capsys, jobs_dir):  # noqa: F811
    cut(os.path.join(jobs_dir, "interrupted", "config.json"))
    rc, result, _unused = run_module(capsys, base(jobs_dir, name="interrupted", state="cancelled"))
    assert rc == 0 and result["changed"] is False and result["job_state"] == "damaged"


def test_a_host_jobs_dir_that_is_a_loop_is_a_clear_error(capsys, tmp_path):
    loop = tmp_path / "jobs"
    os.symlink("jobs", str(loop))
    rc, result, _unused = run_module(capsys, base(str(loop), name="night", config={}))
    assert rc == 1 and result["msg"] == "host_jobs_dir %s cannot be read: Too many levels of symbolic links" % loop


def test_a_fifo_config_is_refused_without_blocking(capsys, jobs_dir, tmp_path):  # noqa: F811
    fifo = tmp_path / "matrix.yaml"
    os.mkfifo(str(fifo))
    before = snapshot(jobs_dir)
    started = time.time()
    for extra in ({}, {"agents": ["oracle"]}):
        rc, result, _unused = run_module(capsys, base(jobs_dir, name="night", config=str(fifo), **extra))
        assert rc == 1 and result["msg"] == (
            "the job config %s cannot be used: it is a FIFO, not a regular file (reading it would block)" % fifo)
    assert time.time() - started < 10
    assert snapshot(jobs_dir) == before


@pytest.mark.parametrize("option,message", [
    ("timeout", "timeout 0 is refused: state=finished would submit the job and fail at once while it runs on. "
                "Use state=started to submit without waiting, or a timeout of at least 1 second"),
    ("start_timeout", "start_timeout 0 is refused: the module could never see Harbor start the job; use at least "
                      "1 second"),
])
def test_zero_timeouts_are_refused_before_anything_starts(capsys, jobs_dir, option, message):  # noqa: F811
    before = snapshot(jobs_dir)
    rc, result, _unused = run_module(capsys, base(jobs_dir, name="night", config={}, **{option: 0}))
    assert rc == 1 and result["msg"] == message
    assert snapshot(jobs_dir) == before


def test_bad_input_leaves_no_state_directory(capsys, jobs_dir):  # noqa: F811
    rc, result, _unused = run_module(capsys, base(jobs_dir, name="night", config={}, harbor_executable="/nonexistent/harbor",
                                                  cli_spelling="auto"))
    assert rc == 1 and not os.path.exists(os.path.join(jobs_dir, ".harbor_job", "night"))
