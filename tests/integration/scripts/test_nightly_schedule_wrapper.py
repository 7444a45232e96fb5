"""nightly_schedule's wrapper and units, rendered by Ansible's templating engine and run for real.

The wrapper runs this virtualenv's real ansible-playbook on small local playbooks: the lock (a second
run refused at once, naming the holder), quoting of arguments and environment, the log per night, a
process the playbook leaves behind not keeping the lock, SIGTERM, the run-time limit and log retention.
The Molecule scenario covers systemd, cron and the role itself on a Debian 13 controller.

Its pure tests: tests/unit/roles/test_nightly_schedule.py.
"""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from test_nightly_schedule import render
ANSIBLE_PLAYBOOK = str(Path(sys.executable).parent / "ansible-playbook")
LOCKED_EXIT = 75

PLAYBOOK = """\
- name: Stand-in nightly run
  hosts: localhost
  connection: local
  gather_facts: false
  vars:
    sleep_seconds: 0
    marker: manual
  tasks:
    - name: Take a while
      ansible.builtin.command: sleep {{ sleep_seconds }}
      changed_when: false
    - name: Record what the run got
      ansible.builtin.copy:
        dest: "{{ out_dir }}/{{ marker }}.json"
        content: "{{ {'night': lookup('env', 'AISBENCH_NIGHT'), 'greeting': lookup('env', 'GREETING'),
                      'spaced': spaced | default(''), 'cwd': lookup('pipe', 'pwd')} | to_json }}"
        mode: "0644"
"""

LEAVE_BEHIND = """\
- name: Leaves a process behind
  hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: Start a daemon-like process that outlives the playbook
      ansible.builtin.shell: nohup sleep 30 >/dev/null 2>&1 & echo $! > {{ out_dir }}/leftover.pid
      changed_when: true
"""


@pytest.fixture
def setup(tmp_path):
    """A project with an inventory and the stand-in playbook, and a rendered wrapper."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "inventory.ini").write_text("localhost ansible_connection=local ansible_python_interpreter=%s\n"
                                           % sys.executable)
    (project / "nightly.yml").write_text(PLAYBOOK)
    (project / "leave-behind.yml").write_text(LEAVE_BEHIND)
    out_dir = tmp_path / "out"
    out_dir.mkdir()

    def make(playbook="nightly.yml", **overrides):
        variables = dict(
            nightly_schedule_name="test-nightly",
            nightly_schedule_inventory="inventory.ini",
            nightly_schedule_playbook=playbook,
            nightly_schedule_chdir=str(project),
            nightly_schedule_ansible_playbook=ANSIBLE_PLAYBOOK,
            nightly_schedule_extra_args=["-e", "out_dir=%s" % out_dir],
            nightly_schedule_lock_file=str(tmp_path / "lock" / "test-nightly.lock"),
            nightly_schedule_log_dir=str(tmp_path / "logs"),
            nightly_schedule_environment={"GREETING": "it's a 'quoted' $VALUE `x`", "ANSIBLE_NOCOLOR": "1",
                                          "ANSIBLE_HOME": str(tmp_path / "ansible-home")},
        )
        variables.update(overrides)
        wrapper = tmp_path / "test-nightly"
        wrapper.write_text(render("nightly-wrapper.sh.j2", **variables))
        wrapper.chmod(0o755)
        return wrapper

    return {"make": make, "tmp": tmp_path, "out": out_dir, "logs": tmp_path / "logs",
            "lock": tmp_path / "lock" / "test-nightly.lock"}


def start(wrapper, *args, env=None):
    return subprocess.Popen([str(wrapper)] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, **(env or {})), start_new_session=True)


def run(wrapper, *args, env=None, timeout=120):
    proc = start(wrapper, *args, env=env)
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def lock_is_held(path):
    if not path.exists():
        return False
    return subprocess.run(["flock", "--nonblock", "--conflict-exit-code", "9", str(path), "true"], check=False).returncode == 9


def wait_for(predicate, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def night_log(setup, night):
    return (setup["logs"] / ("test-nightly-%s.log" % night)).read_text()


def test_wrapper_parses():
    text = render("nightly-wrapper.sh.j2", nightly_schedule_inventory="inv", nightly_schedule_playbook="/p.yml")
    assert subprocess.run(["bash", "-n"], input=text, text=True, check=False).returncode == 0


def test_second_run_is_refused_while_the_first_holds_the_lock(setup):
    wrapper = setup["make"]()
    first = start(wrapper, "-e", "sleep_seconds=6", "-e", "marker=first", env={"AISBENCH_NIGHT": "2026-12-02"})
    assert wait_for(lambda: lock_is_held(setup["lock"])), first.communicate()
    started = time.monotonic()
    rc, out, err = run(wrapper, "-e", "marker=second", env={"AISBENCH_NIGHT": "2026-12-02"})
    assert time.monotonic() - started < 3
    assert rc == LOCKED_EXIT and out == ""
    assert err == ("test-nightly: refused: another nightly run holds the lock %s (pid %d); not starting a second run\n"
                   % (setup["lock"], first.pid))
    out, err = first.communicate(timeout=120)
    assert first.returncode == 0, out + err
    assert out.splitlines() == ["test-nightly: night 2026-12-02 started, log %s/test-nightly-2026-12-02.log" % setup["logs"],
                                "test-nightly: night 2026-12-02 finished with exit code 0, log %s/test-nightly-2026-12-02.log"
                                % setup["logs"]]
    assert (setup["out"] / "first.json").exists() and not (setup["out"] / "second.json").exists()
    log = night_log(setup, "2026-12-02")
    assert "start of night 2026-12-02, pid %d" % first.pid in log
    assert "refused: another nightly run holds the lock" in log
    assert "PLAY RECAP" in log
    assert log.rstrip().endswith("end of night 2026-12-02, pid %d, exit code 0" % first.pid)
    # Once the first run is over, the next one gets the lock.
    assert not lock_is_held(setup["lock"])
    rc, out, err = run(wrapper, "-e", "marker=third", env={"AISBENCH_NIGHT": "2026-12-02"})
    assert rc == 0 and (setup["out"] / "third.json").exists()


def test_arguments_environment_and_directory_reach_the_playbook(setup):
    import json

    wrapper = setup["make"](nightly_schedule_extra_args=["-e", "out_dir=%s" % setup["out"], "-e",
                                                         "spaced='two words; $(rm -rf /)'"])
    rc, out, err = run(wrapper, "-e", "marker=quoted")
    assert rc == 0, out + err
    record = json.loads((setup["out"] / "quoted.json").read_text())
    assert record["greeting"] == "it's a 'quoted' $VALUE `x`"
    assert record["spaced"] == "two words; $(rm -rf /)"
    assert record["cwd"] == str(setup["tmp"] / "project")
    assert record["night"] == time.strftime("%Y-%m-%d", time.gmtime()) or record["night"] == time.strftime(
        "%Y-%m-%d", time.gmtime(time.time() - 120))
    assert (setup["logs"] / ("test-nightly-%s.log" % record["night"])).exists()


def test_a_process_left_behind_does_not_keep_the_lock(setup):
    wrapper = setup["make"](playbook="leave-behind.yml")
    rc, out, err = run(wrapper)
    pid_file = setup["out"] / "leftover.pid"
    try:
        assert rc == 0, out + err
        leftover = int(pid_file.read_text())
        os.kill(leftover, 0)  # still running after the wrapper ended
        assert not lock_is_held(setup["lock"])
    finally:
        if pid_file.exists():
            os.kill(int(pid_file.read_text()), signal.SIGTERM)


def test_sigterm_stops_the_run_and_is_logged(setup):
    wrapper = setup["make"]()
    proc = start(wrapper, "-e", "sleep_seconds=60", env={"AISBENCH_NIGHT": "2026-12-03"})
    assert wait_for(lambda: "TASK [Take a while]" in (setup["logs"] / "test-nightly-2026-12-03.log").read_text()
                    if (setup["logs"] / "test-nightly-2026-12-03.log").exists() else False)
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert time.monotonic() - started < 30
    assert proc.returncode != 0
    assert "finished with exit code %d" % proc.returncode in out
    assert "exit code %d" % proc.returncode in night_log(setup, "2026-12-03")
    assert not lock_is_held(setup["lock"])


def test_max_runtime_stops_a_run_that_takes_too_long(setup):
    wrapper = setup["make"](nightly_schedule_max_runtime=3)
    rc, out, err = run(wrapper, "-e", "sleep_seconds=60", env={"AISBENCH_NIGHT": "2026-12-04"})
    assert rc == 124
    assert "timeout --kill-after=60 3 %s" % ANSIBLE_PLAYBOOK in night_log(setup, "2026-12-04")


def test_old_logs_are_deleted_after_a_run(setup):
    wrapper = setup["make"](nightly_schedule_log_retention_days=30)
    setup["logs"].mkdir()
    old = setup["logs"] / "test-nightly-2026-10-01.log"
    recent = setup["logs"] / "test-nightly-2026-11-30.log"
    other = setup["logs"] / "unrelated-2026-10-01.log"
    for path in (old, recent, other):
        path.write_text("x\n")
    forty_days_ago = time.time() - 40 * 86400
    os.utime(old, (forty_days_ago, forty_days_ago))
    os.utime(other, (forty_days_ago, forty_days_ago))
    rc, out, err = run(wrapper, env={"AISBENCH_NIGHT": "2026-12-05"})
    assert rc == 0, out + err
    assert not old.exists() and recent.exists() and other.exists()


def test_bad_night_and_missing_executable(setup):
    wrapper = setup["make"]()
    rc, out, err = run(wrapper, env={"AISBENCH_NIGHT": "../../etc"})
    assert rc == 2 and "AISBENCH_NIGHT='../../etc' refused" in err
    wrapper = setup["make"](nightly_schedule_ansible_playbook="/nonexistent/ansible-playbook")
    rc, out, err = run(wrapper)
    assert rc == 127 and "/nonexistent/ansible-playbook not found" in err
    assert not lock_is_held(setup["lock"])
