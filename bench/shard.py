"""`make bench`, part "shard": one matrix through playbooks/nightly.yml in shard mode on 1, 2 and 3 targets.

Each target is a runtime container (`aisbench-bench-shard-N`, host-socket mode, aisbench/agent-runtime:$AISBENCH_RUNTIME_IMAGE_TAG, which make exports) with
its own root under the work directory, reached as its own inventory host (connection local): the nightly playbook
lists the matrix on every target, plans the night, runs each target's part as its own Harbor job and merges them in
the fleet report. The matrix is tests/fixtures/harbor/matrices/shard.yaml (pass, fail and errored tasks, oracle and
nop) with --shard-attempts attempts. Numbers: the playbook's wall time and the merged pass@1 of fleet-report.json
(which must be the same for every target count: the same outcomes, scored once).

All targets share this machine's cores and Docker engine, so more targets cannot make the trials themselves run
faster here; on real hosts each part runs on its own CPUs. The bench shows the split's overhead and that the
merged numbers do not depend on it.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import time

from docker_cli import docker

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "plugins", "module_utils"))
from _runtime_contract import build_contract  # noqa: E402  pylint: disable=wrong-import-position
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "harbor")
RECORDED_ROOT = "/tmp/harbor-modules-fixtures"
IMAGE = "aisbench/agent-runtime:%s" % os.environ.get("AISBENCH_RUNTIME_IMAGE_TAG", "0.26.0")
PREFIX = "aisbench-bench-shard-"
TASK_BASE = re.compile(r"^FROM harbor-modules/task-base:bookworm$", re.M)


def prepare_tasks(workdir):
    """The fixture tasks, once, at one path every target sees (hosts of one night must list the same matrix)."""
    tasks = os.path.join(workdir, "tasks")
    shutil.rmtree(tasks, ignore_errors=True)
    shutil.copytree(os.path.join(FIXTURES, "tasks"), tasks)
    for dirpath, _dirs, files in os.walk(tasks):
        if "Dockerfile" in files:  # the fixtures' base tag is the recording host's; the local minbase is the same
            path = os.path.join(dirpath, "Dockerfile")
            with open(path) as handle:
                text = TASK_BASE.sub("FROM local/debian:12-minbase", handle.read())
            with open(path, "w") as handle:
                handle.write(text)
    return tasks


def prepare_target(workdir, index, attempts, tasks):
    """A runtime container and its root (jobs, logs, config): what the runtime_container role leaves on a host."""
    name = "%s%d" % (PREFIX, index)
    root = os.path.join(workdir, "target-%d" % index)
    shutil.rmtree(root, ignore_errors=True)
    for sub in ("jobs", "logs", "config"):
        os.makedirs(os.path.join(root, sub))
    with open(os.path.join(FIXTURES, "matrices", "shard.yaml")) as handle:
        matrix = handle.read().replace(RECORDED_ROOT + "/tasks", tasks)
    matrix = re.sub(r"^n_attempts: \d+$", "n_attempts: %d" % attempts, matrix, flags=re.M)
    with open(os.path.join(root, "config", "matrix.yaml"), "w") as handle:
        handle.write(matrix)
    docker("rm", "-f", name, check=False)
    # The bench's own throw-away container; the runtime_container role would take minutes per target here.
    docker("run", "-d", "--name", name, "-e", "LITELLM_LOCAL_MODEL_COST_MAP=True",
           "-v", "/var/run/docker.sock:/var/run/docker.sock", "-v", "%s:%s" % (root, root),
           "-v", "%s:%s:ro" % (tasks, tasks), "-w", root, IMAGE, "sleep", "infinity")
    return name, root


def runtime_contract(name, root, tasks):
    """The runtime contract of a bench target (host-socket mode, every directory at its host path inside)."""
    mounts = {sub: {"source": os.path.join(root, sub), "target": os.path.join(root, sub)}
              for sub in ("jobs", "config", "logs", "agent-patches", "harbor-plugins", "secrets")}
    mounts["tasks"] = {"source": tasks, "target": tasks}
    return build_contract(mounts, name, "host_socket", "unix:///var/run/docker.sock", root, "", matrix=True)


def inventory(path, targets, tasks):
    hosts = {}
    for index, (name, root) in enumerate(targets, 1):
        # The role did not build these containers: nightly.yml gets their runtime contract from the inventory.
        hosts["target-%d" % index] = {
            "ansible_connection": "local", "ansible_python_interpreter": sys.executable,
            "aisbench_nightly_runtime": runtime_contract(name, root, tasks),
        }
    with open(path, "w") as handle:
        json.dump({"all": {"children": {"aisbench": {"hosts": hosts}}}}, handle, indent=2)


def run_night(workdir, count, targets, log):
    """nightly.yml in shard mode on the first `count` targets: wall seconds and the fleet report's rows."""
    reports = os.path.join(workdir, "reports-%d" % count)
    shutil.rmtree(reports, ignore_errors=True)
    path = os.path.join(workdir, "inventory-%d.json" % count)
    inventory(path, targets[:count], os.path.join(workdir, "tasks"))
    night = "bench-%d-targets" % count
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", path,
            os.path.join(ROOT, "playbooks", "nightly.yml"), "-e", json.dumps({
                "aisbench_nightly_mode": "shard", "aisbench_nightly_night": night, "aisbench_nightly_report_dir": reports,
                "aisbench_nightly_concurrency": 2, "aisbench_nightly_progress_interval": 600,
                "aisbench_nightly_poll_interval": 2})]
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"))
    log("shard: %d target(s): %s" % (count, " ".join(argv)))
    started = time.time()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=workdir, check=False)
    wall = round(time.time() - started, 1)
    if proc.returncode != 0:
        raise SystemExit("nightly.yml on %d target(s) failed:\n%s" % (count, proc.stdout[-4000:]))
    with open(os.path.join(reports, night, "fleet-report.json")) as handle:
        report = json.load(handle)
    rows = dict(("%s/%s/%s" % (row["benchmark"], row["agent"], row["model"] or "-"),
                 {"pass_at_1": row["pass_at_1"], "n_pass": row["n_pass"], "n_completed": row["n_completed"]})
                for row in report["fleet"]["rows"])
    shard = report["shard"]
    jobs = [{"host": item["host"], "job": item["job"], "units": item["n_units"]} for item in shard["shards"]]
    return {"targets": count, "wall_seconds": wall, "units": shard["n_units"], "missing": shard["n_missing"],
            "jobs": jobs, "rows": rows}


def run_benchmark(workdir, sizes, attempts, log):
    os.makedirs(workdir, exist_ok=True)
    targets = []
    try:
        tasks = prepare_tasks(workdir)
        for index in range(1, max(sizes) + 1):
            targets.append(prepare_target(workdir, index, attempts, tasks))
        # One warm-up night so every size finds the task images built (Harbor builds them per trial otherwise
        # once per machine, which would count against whichever size runs first).
        run_night(workdir, 1, targets, log)
        rows = [run_night(workdir, size, targets, log) for size in sorted(sizes)]
    finally:
        docker("rm", "-f", *[name for name, _root in targets], check=False)
    merged = set(json.dumps(row["rows"], sort_keys=True) for row in rows)
    return {"attempts": attempts, "rows": rows, "merged_equal": len(merged) == 1}


def _pass_at_1(value):
    """None: no trial of the row was scored (Harbor 0.26 scores only trials whose reward is valid)."""
    return "n/a (none scored)" if value is None else "%.3f" % value


def render(section, measured):
    out = [
        "## Shard mode: one matrix on 1, 2 and 3 targets",
        "",
        "`playbooks/nightly.yml -e aisbench_nightly_mode=shard` on runtime containers of this machine's engine, the "
        "matrix `tests/fixtures/harbor/matrices/shard.yaml` (3 tasks x oracle, nop x %d attempts). All targets share "
        "the same 2 cores and engine, so the trials cannot run faster with more targets here; the rows show the "
        "split's cost and that the merged pass@1 does not depend on it." % section["attempts"],
        "",
        "| targets | jobs (units each) | wall time | units | missing | merged pass@1 (benchmark/agent) |",
        "|---:|---|---:|---:|---:|---|",
    ]
    for row in section["rows"]:
        out.append("| %d | %s | %.0f s | %d | %d | %s |" % (
            row["targets"], ", ".join("%s (%d)" % (job["job"], job["units"]) for job in row["jobs"]),
            row["wall_seconds"], row["units"], row["missing"],
            ", ".join("%s %s" % (key, _pass_at_1(value["pass_at_1"])) for key, value in sorted(row["rows"].items()))))
    out += ["", "Merged pass@1 equal on every target count: %s. %s" % (
        "yes" if section["merged_equal"] else "NO", measured), ""]
    return out
