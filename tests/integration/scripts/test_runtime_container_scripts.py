"""runtime_container: the script that finds running Harbor jobs (run against real processes); api_key.env is
rendered by the env_file filter (test_env_file.py).

Its pure tests: tests/unit/roles/test_runtime_container.py.
"""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROLE = Path(__file__).resolve().parents[3] / "roles/runtime_container"


@pytest.fixture
def start_harbor(tmp_path):
    """Starts real processes shaped like Harbor's (interpreter, then a script called harbor, then arguments)."""
    harbor = tmp_path / "bin" / "harbor"
    harbor.parent.mkdir()
    harbor.write_text("#!/bin/sh\nsleep 60\n")  # no exec: the shell keeps harbor's command line
    harbor.chmod(0o755)
    started = []

    def start(*argv, command=None):
        proc = subprocess.Popen(command or ["/bin/sh", str(harbor)] + list(argv), start_new_session=True)
        proc.argv = command or ["/bin/sh", str(harbor)] + list(argv)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as handle:
            return handle.read().decode().split("\0")[:-1]
    except OSError:
        return None


def wait_until_running(procs, timeout=10.0):
    """Poll until every process shows its command line in /proc, which is what harbor-jobs.sh reads."""
    deadline = time.monotonic() + timeout
    while any(cmdline(proc.pid) != proc.argv for proc in procs):
        assert time.monotonic() < deadline, [(proc.argv, cmdline(proc.pid)) for proc in procs]
        time.sleep(0.01)


def running_jobs(pids):
    """The script's lines for the given processes (the host may run other Harbor jobs)."""
    out = subprocess.run(["sh", "-c", (ROLE / "files/harbor-jobs.sh").read_text(), "harbor-jobs"],
                         capture_output=True, text=True, check=True).stdout
    wanted = {str(pid) for pid in pids}
    return sorted(line.split("\t", 1)[1] for line in out.splitlines() if line.split("\t", 1)[0] in wanted)


def test_harbor_jobs_finds_real_harbor_processes(start_harbor):
    start = start_harbor
    procs = [
        start("job", "start", "-c", "/opt/swebench/config/matrix.yaml", "--job-name", "nightly", "-o", "/opt/swebench/jobs"),
        start("jobs", "start", "--job-name=older-cli"),
        start("job", "resume", "-p", "/opt/swebench/jobs/resumed-job"),
        start("run", "-d", "terminal-bench"),
        start("job", "start", "-c", "/x.yaml"),
        # Not jobs: other subcommands, and a shell whose script merely mentions harbor.
        start("--version"),
        start("job", "list"),
        start(command=["/bin/sh", "-c", "sleep 60; : harbor job start --job-name fake", "harbor"]),
    ]
    wait_until_running(procs)
    assert running_jobs(p.pid for p in procs) == ["(unnamed)", "(unnamed)", "nightly", "older-cli", "resumed-job"]


def test_harbor_jobs_prints_nothing_without_jobs():
    out = subprocess.run(["sh", "-c", (ROLE / "files/harbor-jobs.sh").read_text(), "harbor-jobs"],
                         capture_output=True, text=True, check=True)
    mine = {str(os.getpid())}
    assert [line for line in out.stdout.splitlines() if line.split("\t", 1)[0] in mine] == []
    assert out.returncode == 0


# plan.yml's task platform and environment on a host of an architecture, rendered in a fresh
# interpreter whose plugin loader knows the collection (its filters are called by FQCN).
PLATFORM_ENV_SCRIPT = """
import json, sys
from pathlib import Path
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.plugins.loader import init_plugin_loader
from ansible.template import Templar, trust_as_template
role, collections, architecture, override = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
init_plugin_loader([collections])
plan = next(task["vars"] for task in yaml.safe_load((role / "tasks/plan.yml").read_text())
            if "_runtime_container_env_all" in task.get("vars", {}))
platform, env = plan["_runtime_container_task_platform"], plan["_runtime_container_env_all"]
variables = dict(yaml.safe_load((role / "defaults/main.yml").read_text()), _runtime_container_dind=True,
                 _runtime_container_daemon_json={}, ansible_facts={"architecture": architecture},
                 runtime_container_task_platform=override)
variables["_runtime_container_task_platform"] = Templar(DataLoader(), variables=variables).template(trust_as_template(platform))
print(json.dumps(Templar(DataLoader(), variables=variables).template(trust_as_template(env))))
"""


def platform_env(architecture, override=""):
    result = subprocess.run([sys.executable, "-c", PLATFORM_ENV_SCRIPT, str(ROLE), str(ROLE.parents[1] / ".cache/collections"),
                             architecture, override], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_trials_platform_is_amd64_on_arm64_hosts_only():
    """docker exec sees the container's environment, not the entrypoint's exports: Harbor's compose build needs it."""
    assert "DOCKER_DEFAULT_PLATFORM" not in platform_env("x86_64")
    assert platform_env("aarch64")["DOCKER_DEFAULT_PLATFORM"] == "linux/amd64"
    assert platform_env("aarch64", "linux/arm64")["DOCKER_DEFAULT_PLATFORM"] == "linux/arm64"
