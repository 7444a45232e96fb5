"""Every row of docs/bad_input.md, run for real with ansible-playbook.

Each case runs one play and checks that
  * the play failed in exactly one task, whose ``msg`` contains the message of the doc's row
    (the table is parsed here, so the doc and the code cannot drift apart),
  * Ansible reports nothing changed, and
  * nothing changed where the role or module would have written: the target container's
    file system for roles, the temporary jobs and config directory for the Harbor modules.

Roles run against one throw-away container (``aisbench-badinput-*``, no network, not
privileged): their checks fail before anything is installed, so it needs no engine. The
Harbor modules run on the controller (``connection: local``) inside a pytest tmp_path only.
"""

import json
import os
import re
import shutil
import hashlib
import subprocess
import sys
import time
import uuid

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = os.path.join(ROOT, "docs", "bad_input.md")
FIXTURE_JOBS = os.path.join(ROOT, "tests", "fixtures", "harbor", "jobs")
COLLECTIONS = os.path.join(ROOT, ".cache", "collections")
COLLECTION_LINK = os.path.join(COLLECTIONS, "ansible_collections", "aisbench", "agent_runtime")
ANSIBLE_PLAYBOOK = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
TARGET_IMAGE = "aisbench-test/debian-systemd:13"

# Paths on the target that the kernel, Ansible itself (its remote temp) or the container's own processes touch.
TARGET_SNAPSHOT_PRUNE = ["/proc", "/sys", "/dev", "/run", "/var/log", "/root/.ansible"]

MISSING_API_KEY_FILE = "/nonexistent/aisbench-badinput/api_key.env"
GOOD_MATRIX = """\
agents:
  - name: oracle
  - name: nop
datasets:
  - path: /opt/swebench/tasks/hello
"""
MALFORMED_MATRIX = """\
agents:
  - name: oracle
datasets:
  - path: /opt/swebench/tasks/hello
    name: [hello
"""

# case id (first column of the doc's table) -> how to produce it.
CASES = {
    "registry-mirror-not-url": {
        "role": "docker_engine",
        "vars": {"docker_engine_registry_mirrors": ["mirror.example:5000"]},
    },
    "registry-mirror-line-break": {
        "role": "docker_engine",
        "vars": {"docker_engine_registry_mirrors": ["https://mirror.example:5000\n"]},
    },
    "unknown-architecture": {
        "role": "qemu_binfmt",
        "vars": {"qemu_binfmt_mode": "yes", "qemu_binfmt_arches": ["pdp11"]},
    },
    "unknown-agent": {
        "role": "baked_images",
        "vars": {"baked_images_cases": [{"dataset": "demo", "id": "case-1"}], "baked_images_agents": ["nosuchagent"]},
    },
    "case-with-agents": {
        "role": "baked_images",
        "vars": {"baked_images_cases": [{"dataset": "demo", "id": "case-1", "agents": ["aider"]}]},
    },
    "agent-recipe-bad-check": {
        "role": "baked_images",
        "vars": {"baked_images_agents": ["mine"], "baked_images_agent_versions": {"mine": "1.0"},
                 "baked_images_agent_recipes": {"mine": {"import_path": "my_agents:Mine", "python_packages": ["mine"],
                                                         "check": ["/usr/bin/mine"]}}},
    },
    "package-index-url-with-query": {
        "role": "runtime_image",
        "vars": {"runtime_image_pip_index_url": "https://pypi.example/simple?token=abc"},
    },
    "relative-bind-path": {
        "role": "runtime_container",
        "vars": {"runtime_container_jobs_dir": "opt/swebench/jobs"},
    },
    "missing-api-key-file": {
        "role": "runtime_container",
        "vars": {"runtime_container_api_key_file": MISSING_API_KEY_FILE},
    },
    "task-platform-malformed": {
        "role": "runtime_container", "vars": {"runtime_container_task_platform": "amd64"},
    },
    "inner-storage-driver-unknown": {
        "role": "runtime_container", "vars": {"runtime_container_storage_driver": "overlay3"},
    },
    "inner-address-pool-malformed": {
        "role": "runtime_container",
        "vars": {"runtime_container_default_address_pools": [{"base": "10.300.0.0/16", "size": 24}]},
    },
    "job-name-slash": {"module": "harbor_job", "args": {"name": "nightly/2026-12-02", "config": "<good config>"}},
    "job-name-dotdot": {"module": "harbor_job", "args": {"name": "../escape", "config": "<good config>"}},
    "job-name-line-break": {"module": "harbor_job", "args": {"name": "nightly\n", "config": "<good config>"}},
    "malformed-matrix-yaml": {"module": "harbor_job", "args": {"name": "nightly", "config": "<config>"}},
    "malformed-matrix-yaml-filtered": {
        "module": "harbor_job", "args": {"name": "nightly", "config": "<config>", "datasets": ["hello"]},
    },
    "no-dataset-matches": {
        "module": "harbor_job", "args": {"name": "nightly", "config": "<good config>", "datasets": ["swebench-verified"]},
    },
    "no-agent-matches": {
        "module": "harbor_job", "args": {"name": "nightly", "config": "<good config>", "agents": ["openhands"]},
    },
    "agent-not-baked": {
        "module": "harbor_job", "args": {"name": "nightly", "config": {
            "agents": [{"name": "claude-code", "model_name": "anthropic/claude"}],
            "datasets": [{"path": "/opt/swebench/tasks/hello"}]}},
    },
    "harbor-unsupported": {"module": "harbor_job", "args": {"name": "nightly", "config": "<good config>",
                                                            "harbor_version": "0.24.1"}},
    "agent-unknown": {"module": "harbor_job", "runtime_container": True},
    "corrupt-result-json": {"module": "harbor_job_info", "args": {}},
    "daemon-log-max-size": {
        "role": "docker_engine", "vars": {"docker_engine_daemon_options": {"log-opts": {"max-size": "10X"}}},
    },
    "daemon-log-opt-number": {
        "role": "docker_engine", "vars": {"docker_engine_daemon_options": {"log-opts": {"max-file": 3}}},
    },
    "daemon-data-root-relative": {"role": "docker_engine", "vars": {"docker_engine_daemon_options": {"data-root": "docker"}}},
    "daemon-mirror-no-scheme": {
        "role": "docker_engine", "vars": {"docker_engine_daemon_options": {"registry-mirrors": ["mirror.example:5000"]}},
    },
    "host-arch-disagrees": {"module": "binfmt_handler", "args": {"host_arch": "riscv64"}},
    "job-config-fifo": {"module": "harbor_job", "args": {"name": "nightly", "config": "<fifo>"}},
    "job-timeout-zero": {"module": "harbor_job", "args": {"name": "nightly", "config": "<good config>", "timeout": 0}},
    "job-start-timeout-zero": {
        "module": "harbor_job", "args": {"name": "nightly", "config": "<good config>", "start_timeout": 0},
    },
    "job-damaged-result": {"module": "harbor_job", "args": {"name": "pass-fail"}, "damage": "cut-result"},
    "jobs-dir-symlink-loop": {
        "module": "harbor_job", "args": {"name": "nightly", "config": "<good config>", "jobs_dir": "<loop>"},
    },
    "job-start-timeout": {"module": "harbor_job", "runtime_container": True},
    "job-dir-symlink-loop": {"module": "harbor_job_info", "args": {}, "damage": "loop"},
    "result-json-fifo": {"module": "harbor_job_info", "args": {}, "damage": "fifo"},
    "status-damaged-jobs": {"playbook": "status.yml"},
    "empty-reward-key": {"module": "harbor_job_summary", "args": {"reward_key": " ", "output_dir": "<work>/summaries"}},
    "fleet-report-history": {"module": "fleet_report", "args": {"history": 0}},
    "nightly-unknown-mode": {"playbook": "nightly.yml", "vars": {"aisbench_nightly_mode": "parallel"}},
    "nightly-no-runtime-contract": {"playbook": "nightly.yml", "vars": {"aisbench_nightly_runtime": {}}},
    "nightly-key-file-to-harbor": {"playbook": "nightly.yml", "vars": {
        "aisbench_nightly_harbor_args": ["--env-file", "/opt/swebench/secrets/api_key.env"]}},
    "nightly-gateway-key-name": {"playbook": "nightly.yml", "vars": {}, "runtime_container": True},
    "shard-plan-zero-hosts": {"module": "fleet_shard_plan", "args": {"listings": {}}},
    "shard-malformed-units": {"module": "fleet_shard_plan", "args": {"listings": {"host-a": {
        "matrix": {}, "datasets": "hello", "agents": [{"agent": "oracle", "model": None}], "n_attempts": 1}}}},
    "shard-units-not-local": {"module": "harbor_matrix_units", "args": {"config": {
        "agents": [{"name": "oracle"}], "datasets": [{"name": "swebench-verified", "registry": {}}]}}},
    "shard-plan-damaged": {"module": "fleet_report", "args": {}, "plan": '{"format": 1, "assignments": "x"}'},
}
# make integration builds it first (runtime-image-tar, with the Makefile's RUNTIME_IMAGE_TAG).
RUNTIME_IMAGE = "aisbench/agent-runtime:%s" % os.environ.get("AISBENCH_RUNTIME_IMAGE_TAG", "0.26.0")


# --- the doc's table -------------------------------------------------------------------------

def doc_rows():
    """{case id: message} from the table of docs/bad_input.md whose first column is "case"."""
    rows = {}
    header = None
    with open(DOC, encoding="utf-8") as handle:
        lines = [line.strip() for line in handle]
    for line in lines:
        if not line.startswith("|"):
            if rows:
                break
            header = None
            continue
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if header is None:
            header = [cell.lower() for cell in cells]
            continue
        if header[0] != "case" or set(line) <= set("|-: "):
            continue
        assert len(cells) == len(header), "a row of %s has %d cells, not %d: %s" % (DOC, len(cells), len(header), line)
        row = dict(zip(header, cells))
        case = row["case"].strip("`")
        message = re.findall(r"`([^`]+)`", row["message"])
        assert len(message) == 1, "row %s needs one `message`" % case
        rows[case] = message[0]
    return rows


DOC_ROWS = doc_rows()


def test_every_doc_row_has_a_case_and_back():
    assert sorted(DOC_ROWS) == sorted(CASES)


# --- running Ansible -------------------------------------------------------------------------

def ansible_env(tmp_path):
    if not os.path.exists(COLLECTION_LINK):
        os.makedirs(os.path.dirname(COLLECTION_LINK), exist_ok=True)
        os.symlink(ROOT, COLLECTION_LINK)
    env = dict(os.environ)
    env.update({
        "ANSIBLE_CONFIG": os.path.join(ROOT, "ansible.cfg"),
        "ANSIBLE_COLLECTIONS_PATH": COLLECTIONS,
        "ANSIBLE_HOME": os.path.join(ROOT, ".cache", "ansible-home"),
        "ANSIBLE_STDOUT_CALLBACK": "ansible.posix.json",
        "ANSIBLE_LOCAL_TEMP": str(tmp_path / "ansible-local-tmp"),
        "ANSIBLE_RETRY_FILES_ENABLED": "0",
        "ANSIBLE_FORCE_COLOR": "0",
        "NO_COLOR": "1",
    })
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return env


def run_play(tmp_path, play, inventory):
    """Run one play: (process, [(task name, result)] of failed tasks, [(task, host, result)], stats)."""
    play_dir = tmp_path / "play"
    play_dir.mkdir(exist_ok=True)
    # JSON is YAML: no quoting questions for the bad values.
    (play_dir / "playbook.yml").write_text(json.dumps([play], indent=2))
    (play_dir / "inventory.yml").write_text(json.dumps(inventory, indent=2))
    proc = subprocess.run(
        [ANSIBLE_PLAYBOOK, "-i", str(play_dir / "inventory.yml"), str(play_dir / "playbook.yml")],
        cwd=str(play_dir), env=ansible_env(tmp_path), capture_output=True, text=True, timeout=300, check=False,
    )
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        pytest.fail("ansible-playbook printed no JSON report (rc=%d):\n%s\n%s"
                    % (proc.returncode, proc.stdout[-3000:], proc.stderr[-3000:]))
    failed = []
    results = []
    for played in report["plays"]:
        for task in played["tasks"]:
            for host, result in task["hosts"].items():
                results.append((task["task"]["name"], host, result))
                if result.get("failed") and not result.get("ignore_errors"):
                    failed.append((task["task"]["name"], result))
    return proc, failed, results, report["stats"]


def localhost_inventory():
    return {"all": {"hosts": {"localhost": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}}}}


# --- what must stay unchanged ----------------------------------------------------------------

def tree_snapshot(root):
    """Every path under root with its type, mode and content hash."""
    entries = []
    for dirpath, dirnames, filenames in os.walk(str(root)):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            path = os.path.join(dirpath, name)
            info = os.lstat(path)
            digest = ""
            if os.path.isfile(path) and not os.path.islink(path):
                with open(path, "rb") as handle:
                    digest = hashlib.sha256(handle.read()).hexdigest()
            entries.append((os.path.relpath(path, str(root)), oct(info.st_mode), digest))
    return entries


def target_snapshot(container):
    """Every path on the target with its type and mode, and size and mtime for all but directories.

    A directory's own mtime is left out: Ansible's modules create and remove temporary files
    (in /tmp, for one); every entry a role would leave behind is listed itself.
    """
    prune = " -o ".join("-path %s" % path for path in TARGET_SNAPSHOT_PRUNE)
    script = ("find / -xdev \\( %s -o -name __pycache__ \\) -prune -o -type d -printf '%%p %%y %%m\\n' "
              "-o -printf '%%p %%y %%m %%s %%T@\\n' | sort" % prune)
    # docker exec: the snapshot must not go through the code under test.
    proc = subprocess.run(["docker", "exec", container, "sh", "-c", script], capture_output=True, text=True, check=True)
    return proc.stdout.splitlines()


@pytest.fixture(scope="session")
def target():
    """A throw-away Debian 13 container for the roles; removed at the end."""
    if shutil.which("docker") is None:
        pytest.skip("no docker CLI")
    name = "aisbench-badinput-%s" % uuid.uuid4().hex[:8]
    subprocess.run(
        ["docker", "run", "-d", "--name", name, "--network", "none", "--label", "org.aisbench.test=badinput",
         TARGET_IMAGE, "sleep", "infinity"],
        check=True, capture_output=True,
    )
    try:
        # Ansible's own remote temp directory, made now so that its creation is not a change of the role's.
        subprocess.run(["docker", "exec", name, "mkdir", "-p", "-m", "700", "/root/.ansible/tmp"], check=True, capture_output=True)
        yield name
    finally:
        subprocess.run(["docker", "rm", "-f", "-v", name], capture_output=True, check=False)


def test_the_target_snapshot_sees_a_change(target):
    before = target_snapshot(target)
    assert len(before) > 1000
    subprocess.run(["docker", "exec", target, "mkdir", "/opt/aisbench-badinput-probe"], check=True)
    try:
        assert target_snapshot(target) != before
    finally:
        subprocess.run(["docker", "exec", target, "rmdir", "/opt/aisbench-badinput-probe"], check=True)


# --- the cases -------------------------------------------------------------------------------

def check_failure(case, proc, failed, stats, replacements=None):
    expected = DOC_ROWS[case]
    for placeholder, value in (replacements or {}).items():
        expected = expected.replace(placeholder, value)
    assert proc.returncode != 0, "the play did not fail:\n%s" % proc.stdout[-3000:]
    assert len(failed) == 1, "expected one failed task, got %s" % [name for name, _unused in failed]
    task_name, result = failed[0]
    assert expected in result.get("msg", ""), "task %r failed with\n%s\nnot\n%s" % (task_name, result.get("msg"), expected)
    assert "Traceback" not in json.dumps(result)
    assert all(host_stats["changed"] == 0 for host_stats in stats.values()), stats
    return task_name


ROLE_CASES = [case for case, spec in CASES.items() if "role" in spec]


@pytest.mark.parametrize("case", ROLE_CASES)
def test_role_refuses_bad_input(case, target, tmp_path):
    spec = CASES[case]
    inventory = localhost_inventory()
    inventory["all"]["hosts"]["target"] = {
        "ansible_connection": "community.docker.docker",
        "ansible_host": target,
        "ansible_python_interpreter": "/usr/bin/python3",
    }
    play = {
        "name": "Bad input for %s" % spec["role"],
        "hosts": "target",
        "gather_facts": True,
        "roles": [dict({"role": "aisbench.agent_runtime.%s" % spec["role"]}, **spec["vars"])],
    }
    before = target_snapshot(target)
    proc, failed, _results, stats = run_play(tmp_path, play, inventory)
    check_failure(case, proc, failed, stats)
    after = target_snapshot(target)
    assert after == before, "the target changed: %s" % sorted(set(after) ^ set(before))[:20]


HARBOR_JOB_CASES = [case for case, spec in CASES.items()
                    if spec.get("module") == "harbor_job" and not spec.get("runtime_container")]


@pytest.mark.parametrize("case", HARBOR_JOB_CASES)
def test_harbor_job_refuses_bad_input(case, tmp_path):
    work = tmp_path / "work"
    jobs_dir = work / "jobs"
    # An existing finished job next to the refused one: it must stay as it is too.
    shutil.copytree(os.path.join(FIXTURE_JOBS, "pass-fail"), str(jobs_dir / "pass-fail"))
    (work / "matrix.yaml").write_text(GOOD_MATRIX)
    (work / "malformed.yaml").write_text(MALFORMED_MATRIX)
    os.mkfifo(str(work / "fifo.yaml"))
    os.symlink("loop", str(work / "loop"))
    if CASES[case].get("damage") == "cut-result":
        result_json = jobs_dir / "pass-fail" / "result.json"
        result_json.write_bytes(result_json.read_bytes()[:200])
    replacements = {"<good config>": str(work / "matrix.yaml"), "<config>": str(work / "malformed.yaml"),
                    "<fifo>": str(work / "fifo.yaml"), "<loop>": str(work / "loop"), "<jobs>": str(work / "loop")}
    args = {
        "jobs_dir": str(jobs_dir),
        "state": "started",
        # A real executable and a fixed CLI spelling: a check that let the input through would
        # start it and leave the job's files behind, which the snapshot below would see.
        "harbor_executable": "/bin/false",
        "cli_spelling": "job",
        "harbor_version": "0.26.0",
        "start_timeout": 30,
    }
    args.update({key: replacements.get(value, value) if isinstance(value, str) else value
                 for key, value in CASES[case]["args"].items()})
    play = {
        "name": "Bad input for harbor_job",
        "hosts": "localhost",
        "gather_facts": False,
        "tasks": [{"name": "Submit the job", "aisbench.agent_runtime.harbor_job": args}],
    }
    before = tree_snapshot(work)
    proc, failed, _results, stats = run_play(tmp_path, play, localhost_inventory())
    check_failure(case, proc, failed, stats, replacements)
    assert tree_snapshot(work) == before


def test_binfmt_handler_refuses_a_host_arch_the_kernel_does_not_run(tmp_path):
    """The stale-fact outage: the host's own architecture asked for while host_arch says it is foreign."""
    kernel = subprocess.run(["uname", "-m"], capture_output=True, text=True, check=True).stdout.strip()
    work = tmp_path / "work"
    (work / "binfmt_misc").mkdir(parents=True)
    args = dict(CASES["host-arch-disagrees"]["args"], arches=[kernel], proc_dir=str(work / "binfmt_misc"),
                binfmt_d_dir=str(work / "binfmt.d"), manifest=str(work / "state" / "manifest.json"))
    play = {"name": "Bad input for binfmt_handler", "hosts": "localhost", "gather_facts": False,
            "tasks": [{"name": "Register", "aisbench.agent_runtime.binfmt_handler": args}]}
    before = tree_snapshot(work)
    proc, failed, _results, stats = run_play(tmp_path, play, localhost_inventory())
    check_failure("host-arch-disagrees", proc, failed, stats, {"<kernel>": kernel})
    assert tree_snapshot(work) == before


@pytest.mark.parametrize("case", [case for case, spec in CASES.items()
                                  if spec.get("module") == "harbor_job_info" and spec.get("damage")])
def test_harbor_job_info_reports_a_damaged_job_and_summarizes_the_rest(case, tmp_path):
    jobs_dir = tmp_path / "jobs"
    for job in ("pass-fail", "two-agents"):
        shutil.copytree(os.path.join(FIXTURE_JOBS, job), str(jobs_dir / job))
    if CASES[case]["damage"] == "loop":
        damaged = "loop"
        os.symlink("loop", str(jobs_dir / "loop"))
    else:
        damaged = "pass-fail"
        (jobs_dir / "pass-fail" / "result.json").unlink()
        os.mkfifo(str(jobs_dir / "pass-fail" / "result.json"))
    result, jobs = summarize_read_only(tmp_path, jobs_dir)
    assert jobs[damaged]["status"] == "error" and jobs[damaged]["error"].startswith(DOC_ROWS[case])
    assert result["errors"] == [{"job": damaged, "error": jobs[damaged]["error"]}]
    assert jobs["two-agents"]["status"] == "finished" and jobs["two-agents"]["error"] is None


def summarize_read_only(tmp_path, jobs_dir):
    """Run harbor_job_info on jobs_dir: it must succeed without a traceback, change nothing and touch no file."""
    play = {"name": "Summaries with a damaged job", "hosts": "localhost", "gather_facts": False,
            "tasks": [{"name": "Summarize the jobs", "aisbench.agent_runtime.harbor_job_info": {"jobs_dir": str(jobs_dir)},
                       "register": "summary"}]}
    before = tree_snapshot(jobs_dir)
    proc, failed, results, stats = run_play(tmp_path, play, localhost_inventory())
    assert proc.returncode == 0 and not failed, proc.stdout[-3000:]
    (_name, _host, result), = results
    assert "Traceback" not in json.dumps(result)
    assert all(host_stats["changed"] == 0 for host_stats in stats.values())
    assert tree_snapshot(jobs_dir) == before
    return result, {job["name"]: job for job in result["jobs"]}


def test_status_playbook_counts_and_names_damaged_jobs(tmp_path):
    root = tmp_path / "swebench"
    jobs_dir = root / "jobs"
    shutil.copytree(os.path.join(FIXTURE_JOBS, "pass-fail"), str(jobs_dir / "pass-fail"))
    shutil.copytree(os.path.join(FIXTURE_JOBS, "two-agents"), str(jobs_dir / "no-start"))
    result_json = jobs_dir / "no-start" / "result.json"
    data = json.loads(result_json.read_text())
    data.pop("started_at")
    result_json.write_text(json.dumps(data))
    os.symlink("loop", str(jobs_dir / "loop"))
    table = tmp_path / "status.txt"
    inventory = localhost_inventory()
    before = tree_snapshot(root)
    contract = runtime_contract_at(root)
    proc = subprocess.run(
        [ANSIBLE_PLAYBOOK, "-i", json.dumps(inventory) and "localhost,", "-c", "local",
         os.path.join(ROOT, "playbooks", "status.yml"), "-e", json.dumps({
             "aisbench_status_hosts": "localhost", "aisbench_status_runtime": contract, "aisbench_status_file": str(table),
             "ansible_python_interpreter": sys.executable})],
        cwd=str(tmp_path), env=ansible_env(tmp_path), capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    text = table.read_text()
    assert "Traceback" not in proc.stdout
    rows = [result["ansible_facts"]["aisbench_status_row"] for played in json.loads(proc.stdout)["plays"]
            for task in played["tasks"] for result in task["hosts"].values()
            if "aisbench_status_row" in result.get("ansible_facts", {})]
    assert DOC_ROWS["status-damaged-jobs"] in rows[-1]["problem"]  # the table cuts long cells
    header, _dashes, row = text.splitlines()[:3]
    damaged_column = header.index("damaged")
    assert row[damaged_column:].split()[0] == "1"
    assert tree_snapshot(root) == before


def start_runtime_container(tmp_path, *docker_args):
    """A throw-away container from the runtime image (real Harbor), sharing a directory at the same path."""
    if subprocess.run(["docker", "image", "inspect", RUNTIME_IMAGE], capture_output=True, check=False).returncode != 0:
        pytest.skip("%s is not built (make runtime-image-tar)" % RUNTIME_IMAGE)
    shared = tmp_path / "shared"
    (shared / "jobs").mkdir(parents=True)
    (shared / "tasks").mkdir()
    name = "aisbench-badinput-harbor-%s" % uuid.uuid4().hex[:8]
    subprocess.run(["docker", "run", "-d", "--name", name, "--network", "none", "--label", "org.aisbench.test=badinput",
                    "-v", "%s:%s" % (shared, shared)] + list(docker_args) + ["--entrypoint", "sleep", RUNTIME_IMAGE, "infinity"],
                   check=True, capture_output=True)
    return name, shared


@pytest.fixture
def runtime_container(tmp_path):
    name, shared = start_runtime_container(tmp_path)
    try:
        yield name, shared
    finally:
        subprocess.run(["docker", "rm", "-f", "-v", name], capture_output=True, check=False)


@pytest.fixture
def runtime_container_on_the_engine(tmp_path):
    """The same with the host's engine socket: harbor_job lists the toolchain volumes of the engine its trials use."""
    name, shared = start_runtime_container(tmp_path, "-v", "/var/run/docker.sock:/var/run/docker.sock")
    try:
        yield name, shared
    finally:
        subprocess.run(["docker", "rm", "-f", "-v", name], capture_output=True, check=False)


def test_a_misspelled_agent_is_refused_as_unknown_by_the_harbor_that_would_run_it(runtime_container_on_the_engine, tmp_path):
    container, shared = runtime_container_on_the_engine
    args = {"name": "nightly", "state": "started", "container": container, "jobs_dir": str(shared / "jobs"),
            "config": {"agents": [{"name": "mini-swe-agnet", "model_name": "openai/m"}],
                       "datasets": [{"path": str(shared / "tasks")}]}}
    play = {"name": "A misspelled agent", "hosts": "localhost", "gather_facts": False,
            "tasks": [{"name": "Submit the job", "aisbench.agent_runtime.harbor_job": args}]}
    before = tree_snapshot(shared)
    proc, failed, _results, stats = run_play(tmp_path, play, localhost_inventory())
    check_failure("agent-unknown", proc, failed, stats)
    assert "(did you mean mini-swe-agent?)" in failed[0][1]["msg"] and "Harbor's acp, aider" in failed[0][1]["msg"]
    assert tree_snapshot(shared) == before


def test_a_job_harbor_does_not_start_in_time_is_stopped_and_said_so(runtime_container, tmp_path):
    container, shared = runtime_container
    # A hung engine: the socket accepts and never answers, so Harbor's own preflight (`docker info`, 10 s timeout)
    # keeps it from starting the job for longer than start_timeout, whatever the machine's speed.
    hung_engine = ("import socket, time\n"
                   "s = socket.socket(socket.AF_UNIX); s.bind('/var/run/docker.sock'); s.listen(16)\n"
                   "held = []\n"
                   "while True: held.append(s.accept())\n")
    subprocess.run(["docker", "exec", "-d", container, "python3", "-c", hung_engine], check=True)
    for _unused in range(50):
        if subprocess.run(["docker", "exec", container, "test", "-S", "/var/run/docker.sock"], check=False).returncode == 0:
            break
        time.sleep(0.1)
    (shared / "matrix.yaml").write_text("agents:\n  - name: oracle\ndatasets:\n  - path: %s/tasks\n" % shared)
    args = {"name": "slow-start", "state": "started", "config": str(shared / "matrix.yaml"), "container": container,
            "jobs_dir": str(shared / "jobs"), "start_timeout": 1, "cancel_grace_period": 20}
    play = {"name": "A start that takes longer than start_timeout", "hosts": "localhost", "gather_facts": False,
            "tasks": [{"name": "Submit the job", "aisbench.agent_runtime.harbor_job": args}]}
    proc, failed, _results, _stats = run_play(tmp_path, play, localhost_inventory())
    assert proc.returncode != 0 and len(failed) == 1
    message = failed[0][1]["msg"]
    assert DOC_ROWS["job-start-timeout"] in message and "nothing keeps running" in message, message
    listing = subprocess.run(["docker", "exec", container, "ps", "-eo", "args"], capture_output=True, text=True, check=False).stdout
    assert "slow-start" not in listing, listing


# Damaged jobs are reported, not refused: they have their own tests above.
REPORT_CASES = [case for case, spec in CASES.items() if case != "corrupt-result-json" and not spec.get("damage")
                and spec.get("module") in ("harbor_job_info", "harbor_job_summary", "fleet_report", "fleet_shard_plan",
                                           "harbor_matrix_units")]


@pytest.mark.parametrize("case", REPORT_CASES)
def test_summary_and_report_refuse_bad_input(case, tmp_path):
    """harbor_job_summary and fleet_report refuse bad options before they write a summary or a report."""
    work = tmp_path / "work"
    shutil.copytree(os.path.join(FIXTURE_JOBS, "pass-fail"), str(work / "jobs" / "pass-fail"))
    (work / "reports" / "2026-12-02" / "hosts" / "host-a").mkdir(parents=True)
    spec = CASES[case]
    args = {key: value.replace("<work>", str(work)) if isinstance(value, str) else value
            for key, value in spec["args"].items()}
    if spec["module"] in ("harbor_job_info", "harbor_job_summary"):
        args["jobs_dir"] = str(work / "jobs")
    elif spec["module"] == "fleet_shard_plan":
        args.update(report_dir=str(work / "reports"), night="2026-12-02", job_base="nightly-2026-12-02")
    elif spec["module"] == "fleet_report":
        args.update(report_dir=str(work / "reports"), night="2026-12-02")
    if spec.get("plan"):
        (work / "reports" / "2026-12-02" / "shard-plan.json").write_text(spec["plan"])
    play = {
        "name": "Bad input for %s" % spec["module"],
        "hosts": "localhost",
        "gather_facts": False,
        "tasks": [{"name": "Summarize or report", "aisbench.agent_runtime.%s" % spec["module"]: args}],
    }
    before = tree_snapshot(work)
    proc, failed, _results, stats = run_play(tmp_path, play, localhost_inventory())
    check_failure(case, proc, failed, stats)
    assert tree_snapshot(work) == before


def test_nightly_refuses_an_unknown_mode_before_it_writes_anything(tmp_path):
    reports = tmp_path / "reports"
    proc = subprocess.run(
        [ANSIBLE_PLAYBOOK, "-i", "localhost,", "-c", "local", os.path.join(ROOT, "playbooks", "nightly.yml"),
         "-e", json.dumps(dict(CASES["nightly-unknown-mode"]["vars"], aisbench_nightly_hosts="localhost",
                               aisbench_nightly_report_dir=str(reports), ansible_python_interpreter=sys.executable))],
        cwd=str(tmp_path), env=ansible_env(tmp_path), capture_output=True, text=True, timeout=300, check=False)
    report = json.loads(proc.stdout)
    failed = [(task["task"]["name"], result) for played in report["plays"] for task in played["tasks"]
              for result in task["hosts"].values() if result.get("failed")]
    check_failure("nightly-unknown-mode", proc, failed, report["stats"])
    assert not reports.exists()


def runtime_contract_at(root, api_keys=False):
    """A runtime contract (docs/layers.md) for a container the role did not build: every directory at one path."""
    dirs = ["jobs", "tasks", "config", "logs", "agent-patches", "harbor-plugins", "secrets"]
    contract = {"version": 1, "container": "aisbench-badinput-no-such-container", "mode": "host_socket",
                "engine_docker_host": "unix:///var/run/docker.sock", "trial_docker_host": "unix:///var/run/docker.sock",
                "root": str(root), "matrix": "", "api_keys": api_keys, "api_key_file": str(root / "secrets/api_key.env"),
                "host_api_key_file": str(root / "secrets/api_key.env"),
                "mounts": {name: {"host": str(root / name), "container": str(root / name)} for name in dirs}}
    for name in dirs:
        contract[name.replace("-", "_") + "_dir"] = contract["host_" + name.replace("-", "_") + "_dir"] = str(root / name)
    return contract


def nightly_failure(tmp_path, case, night, **extra_vars):
    """Run nightly.yml on localhost with the case's variables; the host's failure.json and its report directory."""
    reports = tmp_path / "reports"
    proc = subprocess.run(
        [ANSIBLE_PLAYBOOK, "-i", "localhost,", "-c", "local", os.path.join(ROOT, "playbooks", "nightly.yml"),
         "-e", json.dumps(dict(CASES[case]["vars"], aisbench_nightly_hosts="localhost",
                               aisbench_nightly_night=night, aisbench_nightly_report_dir=str(reports),
                               aisbench_nightly_tasks_source=str(tmp_path / "no-such-tasks"),
                               ansible_python_interpreter=sys.executable, **extra_vars))],
        cwd=str(tmp_path), env=ansible_env(tmp_path), capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    host_dir = reports / night / "hosts" / "localhost"
    return json.loads((host_dir / "failure.json").read_text()), host_dir


def test_nightly_records_a_host_without_a_runtime_contract_and_goes_on(tmp_path):
    failure, host_dir = nightly_failure(tmp_path, "nightly-no-runtime-contract", "no-contract")
    assert failure["stage"] == "contract"
    assert DOC_ROWS["nightly-no-runtime-contract"] in failure["error"]
    # Refused before the first step that touches the host: no summary, no progress log.
    assert sorted(path.name for path in host_dir.iterdir()) == ["failure.json"]


def test_nightly_refuses_the_key_file_as_a_harbor_argument_while_the_gateway_holds_the_key(tmp_path):
    root = tmp_path / "runtime"
    root.mkdir()
    before = tree_snapshot(root)
    # A container holding API keys: the model gateway is on by default.
    failure, host_dir = nightly_failure(tmp_path, "nightly-key-file-to-harbor", "key-file",
                                        aisbench_nightly_runtime=runtime_contract_at(root, api_keys=True))
    assert failure["stage"] == "contract"
    assert DOC_ROWS["nightly-key-file-to-harbor"] in failure["error"]
    # Refused before the tasks, the gateway or Harbor: no summary, no progress log, nothing in the runtime root.
    assert sorted(path.name for path in host_dir.iterdir()) == ["failure.json"]
    assert tree_snapshot(root) == before


def test_nightly_refuses_a_gateway_key_the_runtime_container_does_not_hold(runtime_container, tmp_path):
    container, shared = runtime_container
    # A runtime container whose key file (the path the contract names) holds another provider's key.
    root = shared / "runtime"
    (root / "secrets").mkdir(parents=True)
    key_file = root / "secrets" / "api_key.env"
    key_file.write_text("# Managed by Ansible\nANTHROPIC_API_KEY='sk-badinput-not-a-key'\n")
    contract = dict(runtime_contract_at(root, api_keys=True), container=container)
    before = tree_snapshot(root)
    failure, host_dir = nightly_failure(tmp_path, "nightly-gateway-key-name", "key-name", aisbench_nightly_runtime=contract)
    assert failure["stage"] == "contract"
    assert DOC_ROWS["nightly-gateway-key-name"].replace("<key file>", str(key_file)) in failure["error"]
    assert "sk-badinput-not-a-key" not in json.dumps(failure)
    # Refused by the gateway's own check before the tasks, the gateway or Harbor.
    assert sorted(path.name for path in host_dir.iterdir()) == ["failure.json"]
    assert tree_snapshot(root) == before
    listing = subprocess.run(["docker", "exec", container, "ps", "-eo", "args"], capture_output=True, text=True, check=False).stdout
    assert "litellm" not in listing and "aisbench-model-gateway" not in listing, listing


def test_harbor_job_info_reports_a_corrupt_result_json_and_summarizes_the_rest(tmp_path):
    jobs_dir = tmp_path / "jobs"
    for job in ("pass-fail", "two-agents", "errored"):
        shutil.copytree(os.path.join(FIXTURE_JOBS, job), str(jobs_dir / job))
    result_json = jobs_dir / "pass-fail" / "result.json"
    # Cut in the middle, as a full disk or a crash would leave it.
    result_json.write_bytes(result_json.read_bytes()[:200])
    result, jobs = summarize_read_only(tmp_path, jobs_dir)
    expected = DOC_ROWS["corrupt-result-json"]
    assert jobs["pass-fail"]["status"] == "error"
    assert jobs["pass-fail"]["error"].startswith(expected), jobs["pass-fail"]["error"]
    assert result["errors"] == [{"job": "pass-fail", "error": jobs["pass-fail"]["error"]}]
    # The job is still summarized from its trial files, and the others as usual.
    assert jobs["pass-fail"]["n_completed"] == 2 and jobs["pass-fail"]["n_pass"] == 1
    assert jobs["two-agents"]["status"] == "finished" and jobs["two-agents"]["error"] is None
    assert jobs["errored"]["status"] == "finished" and jobs["errored"]["n_completed"] == 3
    assert {row["agent"] for row in result["pass_at_1"]} >= {"oracle", "nop"}


def test_nightly_in_check_mode_changes_nothing_and_says_what_it_would_run(runtime_container_on_the_engine, tmp_path):
    """Not bad input: nightly.yml --check on a fresh night, with the model gateway on, through this file's real
    runtime container. It checks the gateway's key, says which job it would submit, and writes, starts and submits
    nothing (no report, no job, no gateway)."""
    container, shared = runtime_container_on_the_engine
    root = shared / "runtime"
    (root / "secrets").mkdir(parents=True)
    (root / "secrets" / "api_key.env").write_text("OPENAI_API_KEY='sk-checkmode-not-a-key'\n")
    (shared / "matrix.yaml").write_text("agents:\n  - name: oracle\ndatasets:\n  - path: %s/tasks\n" % shared)
    contract = dict(runtime_contract_at(root, api_keys=True), container=container, matrix=str(shared / "matrix.yaml"),
                    jobs_dir=str(shared / "jobs"), host_jobs_dir=str(shared / "jobs"))
    before = tree_snapshot(shared)
    reports = tmp_path / "reports"
    proc = subprocess.run(
        [ANSIBLE_PLAYBOOK, "--check", "-i", "localhost,", "-c", "local", os.path.join(ROOT, "playbooks", "nightly.yml"),
         "-e", json.dumps(dict(aisbench_nightly_hosts="localhost", aisbench_nightly_night="check-mode",
                               aisbench_nightly_report_dir=str(reports), aisbench_nightly_runtime=contract,
                               ansible_python_interpreter=sys.executable))],
        cwd=str(tmp_path), env=ansible_env(tmp_path), capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    results = {task["task"]["name"].split(" : ", 1)[-1]: result for played in report["plays"]
               for task in played["tasks"] for result in task["hosts"].values()}
    assert report["stats"]["localhost"]["failures"] == 0 and report["stats"]["localhost"]["rescued"] == 0, report["stats"]
    assert not results["Check that the runtime container's key file holds the gateway's key (before the night starts anything)"].get("skipped")
    assert results["Submit the job in the runtime container (a finished job is not resubmitted)"]["changed"] is True
    assert results["Say which jobs the night would submit or resume (check mode)"]["msg"] == (
        "check mode: localhost would run nightly-check-mode; nothing submitted")
    assert results["Start the night's model gateway (trials get its URL and the night's token, never the provider key)"]["skipped"]
    assert not reports.exists()
    assert tree_snapshot(shared) == before
    listing = subprocess.run(["docker", "exec", container, "ps", "-eo", "args"], capture_output=True, text=True, check=False).stdout
    assert "litellm" not in listing and "harbor job" not in listing, listing
    assert "sk-checkmode-not-a-key" not in proc.stdout + proc.stderr
