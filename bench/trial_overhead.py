"""`make bench`, part "trial-overhead": what a trial costs beyond its agent and verifier, inner engine vfs vs overlay2.

Two runtime containers from the runtime image make builds (IMAGE) in dind mode (privileged, inner engine,
`/var/lib/docker` on a named volume of the host engine), one with the inner engine forced to `vfs`, one to `overlay2`
(AIS_BENCH_AGENT_STORAGE_DRIVER, the variable the runtime_container role sets from
runtime_container_storage_driver). Each gets two tasks, both with the oracle agent (no model):

- `sample`: the sample task hello-pass (playbooks/files/sample_tasks), FROM its L1 base
  swebench/sample-hello-pass-base:latest, built here from local/debian:12-minbase with the baked_images role's
  template;
- `big`: the same task FROM a large many-layer image built on that base (--overhead-big-mb of random data in
  --overhead-big-layers RUN layers), the shape of a SWE-bench image.

Getting them there is timed: building the big image on the host engine, starting each inner engine, `docker save |
docker load` of each image into it. Then --overhead-rounds rounds alternate the engines (vfs, overlay2, then
overlay2, vfs, ...), each round one Harbor job per engine with one trial of each task, one trial at a time. The
numbers are Harbor's own phase timestamps from each trial's result.json (agents.trial_times); overhead is the
trial's total minus agent execution and verifier. Probes inside each runtime container (the same docker and docker
compose CLIs Harbor calls) time the steps environment_setup and the remainder are made of.

Everything is named aisbench-bench-overhead-* and removed at the end, the big image and the volumes too.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import time

import jinja2

import agents
from docker_cli import docker

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, ".cache", "collections"))
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._harbor_runner import (  # noqa: E402  pylint: disable=wrong-import-position
    start_command,
)

# The runtime image `make runtime-image-tar` builds (make exports its RUNTIME_IMAGE_TAG); trial_throughput uses it too.
IMAGE = "aisbench/agent-runtime:" + os.environ.get("AISBENCH_RUNTIME_IMAGE_TAG", "0.26.0")
PREFIX = "aisbench-bench-overhead-"
DRIVERS = ("vfs", "overlay2")
BASE_IMAGE = "local/debian:12-minbase"
SAMPLE_BASE = "swebench/sample-hello-pass-base:latest"  # what hello-pass's Dockerfile starts FROM
SAMPLE_IMAGE = "aisbench-bench-overhead-sample-base:1"  # built here as baked_images bakes it, loaded as SAMPLE_BASE
BIG_IMAGE = "aisbench-bench-overhead-big:1"
L1_TEMPLATE = os.path.join(ROOT, "roles", "baked_images", "templates", "base.Dockerfile.j2")
INSIDE = "/opt/swebench"
HARBOR = "/opt/harbor/bin/harbor"
SAMPLE_TASK = os.path.join(ROOT, "playbooks", "files", "sample_tasks", "hello-pass")
TASKS = {"aisbench-sample/hello-pass": "sample", "aisbench-bench/overhead-big": "big"}
OVERHEAD_TARGET = 3.0  # seconds per trial beyond agent and verifier (issue 15)

# Run inside a runtime container with its python3: the docker and docker compose commands Harbor's Docker
# environment runs for a trial of a Dockerfile task (harbor/environments/docker/docker.py: start, exec, stop), each
# timed, on a project shaped like Harbor's (docker-compose-build.yaml: build, `sh -c "sleep infinity"`), and the same
# project's stop with `init: true` (an init as PID 1 passes the SIGTERM on; Harbor's `sh` as PID 1 ignores it).
# The trials themselves run with the inner engine's own daemon.json (the image's default, `init: true`).
PROBE_SCRIPT = r"""
import json, os, subprocess, sys, tempfile, time
image, repeat = sys.argv[1], int(sys.argv[2])
project = tempfile.mkdtemp(prefix="overhead-probe-")
os.mkdir(os.path.join(project, "environment"))
with open(os.path.join(project, "environment", "Dockerfile"), "w") as handle:
    handle.write("FROM %s\n" % image)
service = "    build: {context: environment}\n    pull_policy: build\n    command: [sh, -c, 'sleep infinity']\n"
# init: false is Harbor's own main service on an engine without an init default; the runtime container's inner
# engine has one (inner_daemon_config), so the plain project spells it out.
for name, extra in (("compose.yaml", "    init: false\n"), ("compose-init.yaml", "    init: true\n")):
    with open(os.path.join(project, name), "w") as handle:
        handle.write("services:\n  main:\n" + service + extra)
def compose(name):
    return ["docker", "compose", "-p", "overhead-probe", "--project-directory", project, "-f",
            os.path.join(project, name)]
def timed(argv):
    started = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True)
    return round(time.perf_counter() - started, 3)
rows = {}
def add(key, seconds):
    rows.setdefault(key, []).append(seconds)
for _ in range(repeat):
    add("docker_version", timed(["docker", "version", "--format", "{{.Server.Version}}"]))
    add("compose_build", timed(compose("compose.yaml") + ["build"]))
    add("compose_down_idle", timed(compose("compose.yaml") + ["down", "--remove-orphans"]))
    add("compose_up_wait", timed(compose("compose.yaml") + ["up", "--detach", "--wait"]))
    add("compose_exec", timed(compose("compose.yaml") + ["exec", "-T", "main", "true"]))
    add("docker_exec", timed(["docker", "exec", "overhead-probe-main-1", "true"]))
    add("compose_down", timed(compose("compose.yaml") + ["down", "--rmi", "local", "--volumes", "--remove-orphans"]))
    timed(compose("compose-init.yaml") + ["up", "--detach", "--wait"])
    add("compose_down_init", timed(compose("compose-init.yaml") + ["down", "--rmi", "local", "--volumes",
                                                                   "--remove-orphans"]))
print(json.dumps(rows))
"""
PROBES = ("docker_version", "docker_exec", "compose_exec", "compose_build", "compose_down_idle", "compose_up_wait",
          "compose_down", "compose_down_init")


# ---------------------------------------------------------------------------- pure parts (tests/unit)

def sample_base_dockerfile():
    """The sample task's L1 base, from the baked_images role's own template (/testbed, /logs, WORKDIR)."""
    with open(L1_TEMPLATE) as handle:
        template = jinja2.Template(handle.read(), keep_trailing_newline=True)
    return template.render(baked_images_from=BASE_IMAGE, baked_images_case={"dataset": "sample", "id": "hello-pass"})


def big_image_dockerfile(total_mb, layers, base=SAMPLE_IMAGE):
    """A Dockerfile of `layers` RUN layers writing random data, `total_mb` MiB in all (random: nothing compresses)."""
    if layers < 1 or total_mb < layers:
        raise ValueError("need at least one layer and 1 MiB per layer (got %d MiB in %d layers)" % (total_mb, layers))
    sizes = [total_mb // layers + (1 if index < total_mb % layers else 0) for index in range(layers)]
    lines = ["FROM %s" % base]
    lines += ["RUN mkdir -p /opt/overhead && head -c %dM /dev/urandom > /opt/overhead/layer-%02d" % (size, index)
              for index, size in enumerate(sizes, 1)]
    return "\n".join(lines) + "\n"


def big_task_toml(sample_toml, name="aisbench-bench/overhead-big"):
    """The sample task's task.toml under the big task's name (same timeouts, so only the image differs)."""
    old = 'name = "aisbench-sample/hello-pass"'
    if old not in sample_toml:
        raise ValueError("the sample task.toml does not name aisbench-sample/hello-pass")
    return sample_toml.replace(old, 'name = "%s"' % name).replace(
        # Building FROM a large image on vfs copies it: more than the sample's 120 s on a loaded machine.
        "build_timeout_sec = 120.0", "build_timeout_sec = 900.0")


def overhead_times(result, tasks=None):
    """agents.trial_times of one trial result, plus its task (short name from `tasks`, default TASKS), the remainder
    (total minus the four phases: trial start, healthcheck, log transfers, the environment's stop) and the overhead
    (total minus agent and verifier)."""
    row = agents.trial_times(result)
    row["task"] = (TASKS if tasks is None else tasks).get(result.get("task_name"), result.get("task_name"))
    if row["total"] is None:
        row["remainder"] = row["overhead"] = None
        return row
    row["remainder"] = row["total"] - sum(row[phase] or 0.0 for phase in agents.PHASES)
    row["overhead"] = row["total"] - (row["agent_execution"] or 0.0) - (row["verifier"] or 0.0)
    return row


def summarize(rows):
    """Per task and driver: the trials, their outcomes and the median (and max) of every phase."""
    summary = {}
    for row in rows:
        summary.setdefault(row["task"], {}).setdefault(row["driver"], []).append(row)
    keys = agents.PHASES + ("remainder", "overhead", "total")
    return {task: {driver: agents.phase_summary(trials, keys, digits=2, with_max=True)
                   for driver, trials in sorted(by_driver.items())}
            for task, by_driver in sorted(summary.items())}


def job_wall(wall, rows):
    """A job's wall time and the part of it outside its trials' own start-to-end (Harbor's start and end)."""
    return {"wall": wall, "outside_trials": round(wall - sum(row["total"] or 0.0 for row in rows), 1)}


def summarize_probes(samples):
    """Median seconds of each probe, from {probe: [seconds, ...]}."""
    return {probe: round(statistics.median(values), 3) for probe, values in samples.items() if values}


def _cell(value):
    return "-" if value is None else "%.1f s" % value


def markdown(section):
    """The rendered section (docs/performance.md, "Per-trial overhead")."""
    setup = section["setup"]
    out = [
        "| task | inner engine | trials | environment setup | agent setup | agent execution | verifier | remainder "
        "| **overhead** (max) | trial total | outcome |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for task in ("sample", "big"):
        for driver in DRIVERS:
            row = section["summary"].get(task, {}).get(driver)
            if not row:
                continue
            out.append("| %s | %s | %d | %s | %s | %s | %s | %s | **%s** (%s) | %s | %s |" % (
                task, driver, row["trials"], _cell(row["environment_setup"]), _cell(row["agent_setup"]),
                _cell(row["agent_execution"]), _cell(row["verifier"]), _cell(row["remainder"]),
                _cell(row["overhead"]), _cell(row["overhead_max"]), _cell(row["total"]), ", ".join(row["outcomes"])))
    out += [
        "",
        "Getting the tasks there (wall time): big image built on the host engine %s (%d MiB in %d layers, %s); "
        "per inner engine:" % (_cell(setup["big_build_seconds"]), section["big_mb"], section["big_layers"],
                               setup["big_image_size"]),
        "",
        "| inner engine | engine start | load sample base (`docker save \\| docker load`) | load big image | "
        "inner data-root after loading |",
        "|---|---:|---:|---:|---:|",
    ]
    for driver in DRIVERS:
        engine = setup["engines"][driver]
        out.append("| %s | %s | %s | %s | %s |" % (driver, _cell(engine["start_seconds"]),
                                                   _cell(engine["load_seconds"]["sample"]),
                                                   _cell(engine["load_seconds"]["big"]), engine["data_root_size"]))
    out += [
        "",
        "Probes inside the runtime container (median of %d, seconds): the docker and docker compose commands a "
        "trial's environment runs, on a one-service project of the task's image." % section["probe_repeat"],
        "",
        "| inner engine | image | %s |" % " | ".join("`%s`" % PROBE_LABELS[probe] for probe in PROBES),
        "|---|---|%s" % ("---:|" * len(PROBES)),
    ]
    for driver in DRIVERS:
        for task in ("sample", "big"):
            probes = section["probes"][driver][task]
            out.append("| %s | %s | %s |" % (driver, task, " | ".join("%.2f" % probes[probe] for probe in PROBES)))
    return "\n".join(out)


PROBE_LABELS = {
    "docker_version": "docker version",
    "docker_exec": "docker exec true",
    "compose_exec": "compose exec true",
    "compose_build": "compose build",
    "compose_down_idle": "compose down (none running)",
    "compose_up_wait": "compose up --wait",
    "compose_down": "compose down --rmi local, init: false",
    "compose_down_init": "same, init: true",
}


# ---------------------------------------------------------------------------- the run

def _container(driver):
    return PREFIX + driver


def _volume(driver):
    return PREFIX + driver + "-docker"


def prepare_tasks(tasks_dir):
    """hello-pass as it is, and its copy FROM the big image."""
    shutil.rmtree(tasks_dir, ignore_errors=True)
    shutil.copytree(SAMPLE_TASK, os.path.join(tasks_dir, "hello-pass"))
    big = os.path.join(tasks_dir, "overhead-big")
    shutil.copytree(SAMPLE_TASK, big)
    with open(os.path.join(big, "task.toml")) as handle:
        toml = big_task_toml(handle.read())
    with open(os.path.join(big, "task.toml"), "w") as handle:
        handle.write(toml)
    with open(os.path.join(big, "environment", "Dockerfile"), "w") as handle:
        handle.write("# The sample task on a large many-layer image (bench/trial_overhead.py).\nFROM %s\n" % BIG_IMAGE)


def build_images(total_mb, layers, log):
    """The sample L1 base, then the big image on it: seconds of the big one's build and its size."""
    # docker build from stdin: no context, nothing pulled (the bases are local).
    docker("build", "--pull=false", "-t", SAMPLE_IMAGE, "-", input=sample_base_dockerfile())
    log("trial-overhead: building %s (%d MiB in %d layers)" % (BIG_IMAGE, total_mb, layers))
    started = time.perf_counter()
    docker("build", "--pull=false", "-t", BIG_IMAGE, "-", input=big_image_dockerfile(total_mb, layers))
    seconds = time.perf_counter() - started
    size = int(docker("image", "inspect", "--format", "{{.Size}}", BIG_IMAGE).stdout.strip())
    return round(seconds, 1), "%.2f GB" % (size / 1e9)


def start_engine(driver, root, tasks_dir, timeout=300):
    """A runtime container in dind mode with its inner engine forced to `driver`; seconds until `docker info` works.

    Its own network namespace (not the role's default host network): two inner engines, and the Molecule
    scenarios' ones, would otherwise share the host's bridges and iptables chains."""
    name = _container(driver)
    docker("rm", "-f", "-v", name, check=False)
    docker("volume", "rm", "-f", _volume(driver), check=False)
    os.makedirs(os.path.join(root, "jobs"), exist_ok=True)
    started = time.perf_counter()
    docker("run", "-d", "--name", name, "--privileged",
           "-e", "AIS_BENCH_AGENT_INNER_DOCKER=1", "-e", "AIS_BENCH_AGENT_STORAGE_DRIVER=" + driver,
           "-e", "AIS_BENCH_ROOT=" + INSIDE, "-e", "LITELLM_LOCAL_MODEL_COST_MAP=True",
           "-v", "%s:/var/lib/docker" % _volume(driver),
           "-v", "%s:%s/jobs" % (os.path.join(root, "jobs"), INSIDE), "-v", "%s:%s/tasks:ro" % (tasks_dir, INSIDE),
           IMAGE, "sleep", "infinity")
    deadline = time.monotonic() + timeout
    while docker("exec", name, "docker", "info", check=False).returncode != 0:
        if time.monotonic() > deadline:
            raise SystemExit("trial-overhead: the %s inner engine did not start:\n%s" % (
                driver, docker("logs", "--tail", "30", name, check=False).stderr))
        time.sleep(0.5)
    seconds = time.perf_counter() - started
    chosen = docker("exec", name, "docker", "info", "--format", "{{.Driver}}").stdout.strip()
    if chosen != driver:
        raise SystemExit("trial-overhead: the inner engine of %s runs %s, not %s" % (name, chosen, driver))
    return round(seconds, 1)


def load_image(driver, image, tag=None):
    """`docker save | docker load` of a host image into the inner engine (what baked_images does), seconds."""
    name = _container(driver)
    started = time.perf_counter()
    save = subprocess.Popen(["docker", "save", image], stdout=subprocess.PIPE)
    load = subprocess.run(["docker", "exec", "-i", name, "docker", "load", "-q"], stdin=save.stdout,
                          capture_output=True, text=True, check=False)
    save.stdout.close()
    if save.wait() != 0 or load.returncode != 0:
        raise SystemExit("trial-overhead: loading %s into %s failed: %s" % (image, name, load.stderr))
    if tag:
        docker("exec", name, "docker", "tag", image, tag)
    return round(time.perf_counter() - started, 1)


def data_root_size(driver):
    out = docker("exec", _container(driver), "du", "-sh", "/var/lib/docker", check=False).stdout.split()
    return (out[0] + "B") if out else "?"


def run_job(driver, root, job_name, log, timeout=1800):
    """One Harbor job (oracle, both tasks, one trial at a time) in the driver's runtime container: its trial rows."""
    config = {"job_name": job_name, "jobs_dir": INSIDE + "/jobs", "n_attempts": 1, "n_concurrent_trials": 1,
              "quiet": True, "environment": {"type": "docker"}, "agents": [{"name": "oracle"}],
              "datasets": [{"path": INSIDE + "/tasks"}]}
    with open(os.path.join(root, "jobs", job_name + ".json"), "w") as handle:
        json.dump(config, handle)
    argv = start_command(HARBOR, "job", "%s/jobs/%s.json" % (INSIDE, job_name), job_name, INSIDE + "/jobs")
    log("trial-overhead: %s: %s" % (driver, " ".join(argv)))
    started = time.perf_counter()
    proc = docker("exec", "-w", INSIDE, _container(driver), *argv, check=False, timeout=timeout)
    wall = round(time.perf_counter() - started, 1)
    trials = [dict(overhead_times(result), driver=driver, job=job_name)
              for result in agents.trial_results(os.path.join(root, "jobs", job_name))]
    if proc.returncode != 0 or not trials:
        raise SystemExit("trial-overhead: job %s on %s failed (rc %d):\n%s\n%s" % (
            job_name, driver, proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:]))
    log("trial-overhead: %s: %s in %.0f s: %s" % (driver, job_name, wall, ", ".join(
        "%s overhead %.1f s (%s)" % (row["task"], row["overhead"] or -1, row["outcome"]) for row in trials)))
    return trials, wall


def run_probes(driver, image, repeat):
    out = docker("exec", _container(driver), "python3", "-c", PROBE_SCRIPT, image, str(repeat), timeout=900).stdout
    return summarize_probes(json.loads(out))


def cleanup(log):
    log("trial-overhead: removing its containers, volumes and the big image")
    for driver in DRIVERS:
        docker("rm", "-f", "-v", _container(driver), check=False)
        docker("volume", "rm", "-f", _volume(driver), check=False)
    docker("image", "rm", "-f", BIG_IMAGE, SAMPLE_IMAGE, check=False)


def run_benchmark(workdir, rounds, big_mb, big_layers, log, probe_repeat=3):
    os.makedirs(workdir, exist_ok=True)
    started = time.time()
    tasks_dir = os.path.join(workdir, "tasks")
    roots = {driver: os.path.join(workdir, driver) for driver in DRIVERS}
    for root in roots.values():
        shutil.rmtree(root, ignore_errors=True)
    run_id = time.strftime("%Y%m%d-%H%M%S")
    try:
        prepare_tasks(tasks_dir)
        setup = {"engines": {}}
        setup["big_build_seconds"], setup["big_image_size"] = build_images(big_mb, big_layers, log)
        for driver in DRIVERS:
            engine = {"start_seconds": start_engine(driver, roots[driver], tasks_dir)}
            engine["load_seconds"] = {"sample": load_image(driver, SAMPLE_IMAGE, SAMPLE_BASE),
                                      "big": load_image(driver, BIG_IMAGE)}
            engine["data_root_size"] = data_root_size(driver)
            log("trial-overhead: %s engine: %s" % (driver, engine))
            setup["engines"][driver] = engine
        trials, job_walls = [], {driver: [] for driver in DRIVERS}
        for index in range(rounds):
            # Alternating order, so neither engine always runs right after the other's trials.
            for driver in DRIVERS if index % 2 == 0 else tuple(reversed(DRIVERS)):
                rows, wall = run_job(driver, roots[driver], "overhead-%s-%s-%d" % (run_id, driver, index + 1), log)
                trials += rows
                job_walls[driver].append(job_wall(wall, rows))
        probes = {driver: {"sample": run_probes(driver, SAMPLE_BASE, probe_repeat),
                           "big": run_probes(driver, BIG_IMAGE, probe_repeat)} for driver in DRIVERS}
        log("trial-overhead: probes %s" % json.dumps(probes))
    finally:
        cleanup(log)
    return {"image": IMAGE, "rounds": rounds, "big_mb": big_mb, "big_layers": big_layers, "probe_repeat": probe_repeat,
            "setup": setup, "summary": summarize(trials), "trials": trials, "job_wall_seconds": job_walls,
            "probes": probes, "wall_seconds": round(time.time() - started, 1)}


def render(section, measured):
    """The "Per-trial overhead" section of docs/performance.md."""
    summary, probes = section["summary"], section["probes"]
    out = [
        "## Per-trial overhead: inner engine vfs vs overlay2",
        "",
        "`bench/trial_overhead.py`: two runtime containers (`%s`, dind mode: privileged, "
        "inner engine on a named volume of the host engine, whose data-root is on ext4), the inner engine forced to "
        "`vfs` in one and `overlay2` in the other (`AIS_BENCH_AGENT_STORAGE_DRIVER`, which the runtime_container role "
        "sets from `runtime_container_storage_driver`). Oracle agent (no model), one trial at a time, on two tasks: "
        "`sample` is the sample task hello-pass on its L1 base (Debian 12 minbase, baked with the baked_images "
        "template), `big` the same task on a %d MiB image of %d random-data layers on that base (%s in all). "
        "%d rounds, each one Harbor job per engine with one trial of each task, the engines' order alternating. "
        "Seconds are Harbor's own phase timestamps from each trial's result.json (median over the trials; max in "
        "brackets). **Overhead** is everything but agent execution and verifier: environment setup + agent setup + "
        "remainder, where the remainder is the trial's total minus its four phases." % (
            section["image"], section["big_mb"], section["big_layers"], section["setup"]["big_image_size"],
            section["rounds"]),
        "",
        markdown(section),
        "",
        "What Harbor does in each part (the same in 0.25.0 and 0.26.0: `harbor/trial/trial.py`, "
        "`harbor/environments/docker/docker.py`): **environment setup** is the Docker environment's `start`: "
        "`docker info` (the daemon's OS type), `docker compose build` (a task with an "
        "`environment/Dockerfile`, as both here), `docker inspect` of the image, `docker compose down "
        "--remove-orphans` (stale containers), `docker compose up --detach --wait`, then `compose exec` calls that "
        "create the mount targets. **agent setup** is the agent's install (nothing for oracle). The **remainder** is "
        "the trial's start (task load, trial directory), the environment's healthcheck, the agent-log upload and "
        "artifact collection between the phases, and, after the verifier, the environment's `stop`: a `compose exec` "
        "chown of the log mounts and `docker compose down --rmi local --volumes --remove-orphans`. Every `docker "
        "compose` call starts the compose CLI afresh; every command in the trial is one `docker compose exec`.",
        "",
    ]
    out += _findings(summary, probes)
    jobs = [job for driver in DRIVERS for job in section["job_wall_seconds"][driver]]
    out += ["", "Each Harbor job (`harbor job start` in the runtime container, two trials) took %s wall time "
            "(median), %s of it outside its trials' own start and end: Harbor's start (imports, task loading) and "
            "end, once per job, not per trial. Whole part: %.0f s. %s" % (
                _cell(statistics.median(job["wall"] for job in jobs)),
                _cell(statistics.median(job["outside_trials"] for job in jobs)), section["wall_seconds"], measured), ""]
    return out


def _findings(summary, probes):
    """Sentences computed from the numbers: where the overlay2 sample trial's overhead goes."""
    sample = summary.get("sample", {}).get("overlay2")
    big = summary.get("big", {})
    if not sample or not probes.get("overlay2"):
        return []
    probe = probes["overlay2"]["sample"]
    lines = [
        "Where the seconds go (overlay2, sample task): overhead %.1f s = environment setup %.1f s + agent setup %.1f s "
        "+ remainder %.1f s. The probes put the floor of environment setup at compose build %.1f s + down (none "
        "running) %.1f s + up --wait %.1f s = %.1f s of compose runs (plus `docker inspect` and a `compose exec`). "
        "The remainder is the stop and the calls between: `compose down` of Harbor's main service takes %.1f s with "
        "an init as PID 1 (the inner engine's default, `init: true` in its daemon.json) and %.1f s without one "
        "(`init: false`: Harbor's `sh -c \"sleep infinity\"` as PID 1 ignores SIGTERM, so Docker waits its 10 s stop "
        "timeout), plus a few `compose exec` calls (%.2f s each; a plain `docker exec` %.2f s). That is the floor of "
        "Harbor's Docker environment here: three compose runs, a `docker inspect` and a `compose exec` to "
        "start, one compose run to stop, a few `compose exec` calls between, each a fresh compose CLI: %s." % (
            sample["overhead"], sample["environment_setup"], sample["agent_setup"], sample["remainder"],
            probe["compose_build"], probe["compose_down_idle"], probe["compose_up_wait"],
            probe["compose_build"] + probe["compose_down_idle"] + probe["compose_up_wait"], probe["compose_down_init"],
            probe["compose_down"], probe["compose_exec"], probe["docker_exec"],
            ("within the %.0f s target" % OVERHEAD_TARGET) if sample["overhead"] <= OVERHEAD_TARGET else
            ("the %.0f s target needs fewer of them (Harbor's code), not a faster engine" % OVERHEAD_TARGET)),
    ]
    if big.get("vfs") and big.get("overlay2"):
        lines += [
            "",
            "Large image: environment setup %.1f s on vfs vs %.1f s on overlay2 (median), overhead %.1f s vs %.1f s: "
            "vfs copies the whole image for each container (compose up --wait %.1f s vs %.1f s in the probes), "
            "overlay2 stacks the layers, so its cost does not grow with the image." % (
                big["vfs"]["environment_setup"], big["overlay2"]["environment_setup"], big["vfs"]["overhead"],
                big["overlay2"]["overhead"], probes["vfs"]["big"]["compose_up_wait"],
                probes["overlay2"]["big"]["compose_up_wait"]),
        ]
    return lines
