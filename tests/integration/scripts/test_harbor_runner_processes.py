"""harbor_runner: names, matrix filtering, commands, process matching, module files.
Its pure tests: tests/unit/plugins/module_utils/test_harbor_runner.py."""
import os
import subprocess
import time

import pytest
from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _harbor_runner as hrun  # noqa: E402


class LocalRuntime(hrun.Runtime):
    """The probe run on this machine (no container): what harbor_job does with a Harbor on the target."""

    def __init__(self):
        super().__init__(module=None)

    def run(self, argv, check=True, env=None):
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        return done.returncode, done.stdout, done.stderr


def test_the_probe_refuses_what_is_not_harbors_console_script(tmp_path):
    script = tmp_path / "harbor"
    script.write_text("#!/bin/sh\necho 0.26.0\n")
    script.chmod(0o755)
    with pytest.raises(hrun.HarborJobError, match="cannot tell which Harbor release .*harbor is \\(rc=126\\): .* is not a "
                                                  "Python console script \\(first line: #!/bin/sh\\); set harbor_version"):
        hrun.probe_harbor(LocalRuntime(), str(script))
    with pytest.raises(hrun.HarborJobError, match="harbor_executable /nonexistent/harbor not found on the target"):
        hrun.probe_harbor(LocalRuntime(), "/nonexistent/harbor")


class _NoModule:
    """Runtime in host mode needs no AnsibleModule for process listing and signals."""


def test_host_processes_and_detached_spawn(tmp_path):
    """A real detached process through the wrapper: pid file, log, /proc matching, SIGTERM."""
    runtime = hrun.Runtime(_NoModule())
    pidfile = str(tmp_path / "harbor.pid")
    logfile = str(tmp_path / "harbor.log")
    jobs_dir = str(tmp_path)
    # A stand-in process whose command line has Harbor's shape (argv[0] named harbor):
    # the code under test only looks at command lines and signals.
    launcher = tmp_path / "harbor"
    launcher.write_text("#!/bin/sh\necho started; exec sleep 60\n")
    launcher.chmod(0o755)
    argv = [str(launcher), "job", "start", "--job-name", "n1", "-o", jobs_dir]
    runtime.spawn(argv, pidfile, logfile, env={"HARBOR_TEST_SECRET": "s3cret"})
    deadline = time.time() + 10
    while not os.path.exists(pidfile) and time.time() < deadline:
        time.sleep(0.1)
    pid = int(open(pidfile).read())
    deadline = time.time() + 10
    while "started" not in open(logfile).read() and time.time() < deadline:
        time.sleep(0.1)
    assert "started" in open(logfile).read()
    # The launcher echoes, then execs sleep: while the kernel sets up the new image, /proc/PID/environ reads empty.
    deadline = time.time() + 10
    environ = b""
    while not environ and time.time() < deadline:
        with open("/proc/%d/environ" % pid, "rb") as handle:
            environ = handle.read()
        time.sleep(0.05)
    assert b"HARBOR_TEST_SECRET=s3cret" in environ.split(b"\0")
    # exec keeps the pid: the recorded pid is the job's process; it runs in its own session.
    assert os.getsid(pid) == pid
    assert pid not in runtime.job_pids("n1", jobs_dir, os.path.join(jobs_dir, "n1"))  # "sleep 60" is no harbor
    assert all(isinstance(p, int) and isinstance(a, list) for p, a in runtime.processes())
    assert any(p == os.getpid() for p, _unused in runtime.processes())
    runtime.send_signal(pid, 15)
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            with open("/proc/%d/stat" % pid) as handle:
                if handle.read().split(") ", 1)[1].startswith("Z"):
                    break
        except FileNotFoundError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the process ignored SIGTERM")
    runtime.send_signal(pid, 15)  # gone: no error


def test_harbor_named_process_is_found(tmp_path):
    """A real process with Harbor's command-line shape is matched by job name and directory."""
    launcher = tmp_path / "harbor"
    launcher.write_text("#!/bin/sh\nsleep 60\n")
    launcher.chmod(0o755)
    jobs_dir = str(tmp_path)
    proc = subprocess.Popen([str(launcher), "job", "start", "--job-name", "n1", "-o", jobs_dir])
    try:
        runtime = hrun.Runtime(_NoModule())
        deadline = time.time() + 5
        pids = []
        # sh forks sleep: for an instant the child still carries the launcher's command line (a second match).
        while time.time() < deadline and pids != [proc.pid]:
            pids = runtime.job_pids("n1", jobs_dir, os.path.join(jobs_dir, "n1"))
            time.sleep(0.05)
        assert pids == [proc.pid]
        assert runtime.job_pids("n2", jobs_dir, os.path.join(jobs_dir, "n2")) == []
    finally:
        proc.kill()
        proc.wait()
