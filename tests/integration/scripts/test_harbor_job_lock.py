# -*- coding: utf-8 -*-
"""harbor_job: the job lock, damaged jobs, refused timeouts and configs that would hang Harbor.

Two real submissions of one job at once (real Harbor, two real nightly.yml runs) run in the harbor_modules Molecule
scenario; here the lock itself is taken by real processes and the refusals run through main().

Its pure tests: tests/unit/plugins/modules/test_harbor_job_hardening.py.
"""

import os
import subprocess
import sys

import pytest

from ansible_collections.aisbench.agent_runtime.plugins.module_utils._harbor_runner import (  # noqa: E402
    HarborJobError,
    JobFiles,
    JobLock,
)

HOLD_LOCK = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
os.write(fd, b'{"pid": %d, "host": "other-controller", "since": "2026-12-02T03:00:00Z"}' % os.getpid())
print("held", flush=True)
time.sleep(float(sys.argv[2]))
"""


def hold_lock(path, seconds):
    proc = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, path, str(seconds)], stdout=subprocess.PIPE)
    assert proc.stdout.readline() == b"held\n"
    return proc


def test_the_lock_waits_for_another_process_and_then_holds(tmp_path):
    files = JobFiles(str(tmp_path), str(tmp_path), "night")
    files.ensure_dir()
    holder = hold_lock(files.host(JobLock.FILENAME), 2)
    lock = JobLock(files)
    waited = lock.acquire(timeout=30, poll=0.1)
    assert 1.0 <= waited < 30 and holder.wait(timeout=10) == 0
    assert lock.holder()["pid"] == os.getpid()
    # Now a third process cannot take it while this one holds it.
    probe = subprocess.run([sys.executable, "-c", "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR); "
                            "fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)", lock.path], stderr=subprocess.PIPE, check=False)
    assert probe.returncode != 0 and b"Resource temporarily unavailable" in probe.stderr
    lock.release()


def test_a_lock_held_too_long_is_a_clear_error_naming_the_holder(tmp_path):
    files = JobFiles(str(tmp_path), str(tmp_path), "night")
    files.ensure_dir()
    holder = hold_lock(files.host(JobLock.FILENAME), 30)
    try:
        with pytest.raises(HarborJobError) as info:
            JobLock(files).acquire(timeout=1, poll=0.1)
        assert "another run is still submitting this job (pid %d on other-controller" % holder.pid in str(info.value)
        assert "nothing was started" in str(info.value)
    finally:
        holder.kill()
        holder.wait()
