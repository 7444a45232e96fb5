"""`make bench`, part "trial-throughput": oracle trials per minute of one runtime container at several concurrencies.

One runtime container from aisbench/agent-runtime:0.26.0 in dind mode, as the runtime_container role starts it
(privileged, a private cgroup namespace, the inner engine's /var/lib/docker on a named volume of the host engine,
HARBOR_TELEMETRY=0), its inner engine forced to overlay2. Three tasks, all with the oracle agent (no model):

- `hello-pass` and `hello-fail`, the sample tasks (playbooks/files/sample_tasks), FROM their L1 bases
  swebench/sample-hello-{pass,fail}-base:latest, both the sample L1 base bench/trial_overhead.py builds from
  local/debian:12-minbase with the baked_images role's template;
- `big`, hello-pass FROM a larger many-layer image on that base (bench/trial_overhead.py's builder,
  --throughput-big-mb of random data in --throughput-big-layers RUN layers).

A warm-up job (one trial of each task, one at a time) checks the outcomes first. Then, for each concurrency of
--throughput-concurrency, one Harbor job (`harbor job start -c CFG -y`, `n_concurrent_trials` = the concurrency,
`n_attempts` = --throughput-trials / 3, rounded up) of oracle trials over the three tasks. Every trial must have a
result and hello-pass must score 1, hello-fail 0, big 1, or the part stops. The numbers come from Harbor's own
result.json files: trials per minute over the job's started_at..finished_at, each trial's phases and overhead
(total minus agent execution and verifier, bench/trial_overhead.py's definition). CPU: the runtime container's
cgroup (cgroup v1 cpuacct, hierarchical, read from the host) before and after each job, split into the task
containers (the inner engine's `docker` cgroup below it, which keeps the usage of removed containers), Harbor's
own Python and the docker / docker compose CLIs it waited for (from /proc/PID/stat of the `harbor` process, read
while it is a zombie, see RUN_SCRIPT), and the engine (dockerd, containerd, shims, runc: the rest).

Then the highest concurrency once more with every docker CLI run Harbor makes timed by a shim on PATH (TRACE_SHIM,
only for that job and the warm-up): what a trial runs, how long each kind of command takes at concurrency 1 and at
the highest one, and how long a trial waits before its build (the trace joined with its result.json). Probes
(PROBE_SCRIPT) time single CLI runs: `docker compose` as Harbor spells it against the plugin binary called directly.
Last, side by side at the highest concurrency, a second runtime container without the Go GC target the role sets
(runtime_container_go_gc; Go's own default), jobs alternating the role's default, Go's, Go's, the role's. Everything is named
aisbench-bench-throughput-* and removed at the end (the job directories stay under the work directory).
"""

import datetime
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import time

import agents
import trial_overhead
from docker_cli import docker

IMAGE = trial_overhead.IMAGE
PREFIX = "aisbench-bench-throughput-"
CONTAINER = PREFIX + "runtime"
VOLUME = CONTAINER + "-docker"
# The runtime container gets the Go GC target the runtime_container role gives by default (runtime_container_go_gc,
# read from the role's defaults: what users run); the side-by-side variant runs without it (Go's default, 100), for
# every Go process in it: the docker and compose CLIs Harbor runs, dockerd, containerd and the shims.
ROLE_DEFAULTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "roles", "runtime_container",
                             "defaults", "main.yml")


def role_go_gc():
    """runtime_container_go_gc from the role's defaults ("" when it leaves Go's default)."""
    import yaml  # pylint: disable=import-outside-toplevel

    with open(ROLE_DEFAULTS) as handle:
        return str(yaml.safe_load(handle).get("runtime_container_go_gc") or "")


ROLE_ENV = ("GOGC=%s" % role_go_gc(),) if role_go_gc() else ()
VARIANT_CONTAINER = PREFIX + "gogc"
VARIANT_ENV = ()
VARIANT_SETTING = "GOGC unset (Go's default, 100)"
SAMPLE_IMAGE = PREFIX + "sample-base:1"
BIG_IMAGE = PREFIX + "big:1"
SAMPLE_BASES = ("swebench/sample-hello-pass-base:latest", "swebench/sample-hello-fail-base:latest")
INSIDE = "/opt/swebench"
HARBOR = "/opt/harbor/bin/harbor"
SAMPLE_TASKS = os.path.join(trial_overhead.ROOT, "playbooks", "files", "sample_tasks")
BIG_TASK_NAME = "aisbench-bench/throughput-big"
TASKS = {"aisbench-sample/hello-pass": "hello-pass", "aisbench-sample/hello-fail": "hello-fail", BIG_TASK_NAME: "big"}
EXPECTED = {"hello-pass": "reward 1.0", "hello-fail": "reward 0.0", "big": "reward 1.0"}
CPUACCT = "/sys/fs/cgroup/cpuacct"
TRACE_DIR = "/opt/aisbench-trace"
KEYS = agents.PHASES + ("remainder", "overhead", "total")

# Runs a command (harbor) in the runtime container and writes, to argv[1], its exit status and CPU seconds: its own
# (utime + stime) and those of the children it waited for (cutime + cstime: every docker and docker compose CLI
# Harbor ran, and their plugins), read from /proc/PID/stat once it has exited and before it is reaped, so nothing
# is sampled or lost.
RUN_SCRIPT = r"""
import json, os, subprocess, sys, time
out, argv = sys.argv[1], sys.argv[2:]
tick = os.sysconf("SC_CLK_TCK")
proc = subprocess.Popen(argv)
fields = None
while True:
    try:
        with open("/proc/%d/stat" % proc.pid) as handle:
            stat = handle.read().rsplit(")", 1)[1].split()
    except OSError:
        break
    fields = stat
    if stat[0] == "Z":
        break
    time.sleep(0.2)
rc = proc.wait()
cpu = [int(value) / tick for value in fields[11:15]] if fields and fields[0] == "Z" else None
with open(out, "w") as handle:
    json.dump({"rc": rc, "self": cpu and round(cpu[0] + cpu[1], 2), "children": cpu and round(cpu[2] + cpu[3], 2)},
              handle)
sys.exit(rc)
"""

# On PATH before /usr/bin for the traced jobs only: times every docker CLI run (start, end, status, argv; one line
# each, appended to $AISBENCH_TRACE_LOG). Bash's $EPOCHREALTIME: no extra process per run.
TRACE_SHIM = r"""#!/bin/bash
start=$EPOCHREALTIME
/usr/bin/docker "$@"
rc=$?
args="$*"
printf '%s\t%s\t%s\t%s\n' "$start" "$EPOCHREALTIME" "$rc" "${args//[$'\t\n']/ }" >>"${AISBENCH_TRACE_LOG:-/dev/null}"
exit $rc
"""
# docker compose options that take a value (Harbor's: --project-name, --project-directory, -f).
COMPOSE_VALUE_OPTIONS = ("-p", "--project-name", "--project-directory", "-f", "--file", "--env-file", "--profile")
# The docker CLI runs of the trace, in the order a trial makes them (docker.py: start, exec, upload, stop).
COMMANDS = ("docker info", "compose build", "docker inspect", "compose down", "compose up", "compose exec",
            "compose cp", "docker version")

# Run inside the runtime container with its python3: single docker CLI runs of the kinds a trial makes, each
# `repeat` times one after the other on a running one-service project of the sample base shaped
# like Harbor's (build, `sh -c "sleep infinity"`), timed, with the CPU seconds of the CLI processes (rusage of the
# waited-for children) and of the whole runtime container (its cgroup, the root of its private cgroup namespace:
# CLIs, engine, task container). `docker compose` is Harbor's spelling: the docker CLI, which first runs the plugin
# with `docker-cli-plugin-metadata`, then the plugin; `docker-compose` is the same binary called directly.
PROBE_SCRIPT = r"""
import json, os, resource, subprocess, sys, tempfile, time
image, repeat = sys.argv[1], int(sys.argv[2])
project = tempfile.mkdtemp(prefix="throughput-probe-")
os.mkdir(os.path.join(project, "environment"))
with open(os.path.join(project, "environment", "Dockerfile"), "w") as handle:
    handle.write("FROM %s\n" % image)
with open(os.path.join(project, "compose.yaml"), "w") as handle:
    handle.write("services:\n  main:\n    build: {context: environment}\n    pull_policy: build\n"
                 "    command: [sh, -c, 'sleep infinity']\n")
flags = ["-p", "throughput-probe", "--project-directory", project, "-f", os.path.join(project, "compose.yaml")]
def usage():
    with open("/sys/fs/cgroup/cpuacct/cpuacct.usage") as handle:
        return int(handle.read()) / 1e9
def cli():
    own = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime
subprocess.run(["docker", "compose"] + flags + ["up", "--detach", "--wait"], check=True, capture_output=True)
probes = [
    ("compose_exec", {}, ["docker", "compose"] + flags + ["exec", "main", "true"]),
    ("compose_exec_direct", {}, ["docker-compose"] + flags + ["exec", "main", "true"]),
    ("plugin_metadata", {}, ["/usr/libexec/docker/cli-plugins/docker-compose", "docker-cli-plugin-metadata"]),
    ("compose_exec_gogc", {"GOGC": "100"}, ["docker", "compose"] + flags + ["exec", "main", "true"]),
    ("compose_cp", {}, ["docker", "compose"] + flags + ["cp", os.path.join(project, "compose.yaml"), "main:/tmp/"]),
    ("docker_info", {}, ["docker", "info", "--format", "{{.OSType}}"]),
    ("docker_exec", {}, ["docker", "exec", "throughput-probe-main-1", "true"]),
]
rows = {}
for name, env, argv in probes:
    environ = dict(os.environ, **env)
    cpu, container, started = cli(), usage(), time.perf_counter()
    for _ in range(repeat):
        subprocess.run(argv, check=True, capture_output=True, env=environ)
    rows[name] = {"wall_ms": round((time.perf_counter() - started) * 1000 / repeat),
                  "cli_cpu_ms": round((cli() - cpu) * 1000 / repeat),
                  "container_cpu_ms": round((usage() - container) * 1000 / repeat)}
subprocess.run(["docker", "compose"] + flags + ["down", "--rmi", "local", "--volumes"], check=True, capture_output=True)
print(json.dumps(rows))
"""
PROBES = ("compose_exec", "compose_exec_direct", "plugin_metadata", "compose_exec_gogc", "compose_cp", "docker_info",
          "docker_exec")
PROBE_LABELS = {
    "compose_exec": "`docker compose exec main true` (Harbor's spelling)",
    "compose_exec_direct": "`docker-compose exec main true` (the same plugin binary, called directly)",
    "plugin_metadata": "`docker-compose docker-cli-plugin-metadata` (what the docker CLI runs before each plugin run)",
    "compose_exec_gogc": "`docker compose exec main true` with `GOGC=100` (Go's default; the others run with the container's)",
    "compose_cp": "`docker compose cp FILE main:/tmp/`",
    "docker_info": "`docker info --format {{.OSType}}`",
    "docker_exec": "`docker exec CONTAINER true`",
}


# ---------------------------------------------------------------------------- pure parts (tests/unit)

def big_task_dockerfile():
    return "# The sample task on a larger many-layer image (bench/trial_throughput.py).\nFROM %s\n" % BIG_IMAGE


def attempts_for(trials, tasks=len(TASKS)):
    """Harbor's n_attempts for at least `trials` trials over `tasks` tasks (each attempt runs every task once)."""
    if trials < 1:
        raise ValueError("need at least one trial (got %d)" % trials)
    return int(math.ceil(trials / float(tasks)))


def job_config(job_name, concurrency, attempts):
    """The job config: the oracle agent over the three tasks, `attempts` times, `concurrency` trials at a time."""
    return {"job_name": job_name, "jobs_dir": INSIDE + "/jobs", "n_attempts": attempts,
            "n_concurrent_trials": concurrency, "quiet": True, "environment": {"type": "docker"},
            "agents": [{"name": "oracle"}], "datasets": [{"path": INSIDE + "/tasks"}]}


def _time(text):
    moment = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=datetime.timezone.utc)


def job_seconds(job_result):
    """The job's own wall time: finished_at - started_at of its result.json (Harbor writes both, same clock)."""
    if not job_result.get("started_at") or not job_result.get("finished_at"):
        return None
    return (_time(job_result["finished_at"]) - _time(job_result["started_at"])).total_seconds()


def trial_row(result):
    """Phases, remainder and overhead of one trial result (trial_overhead.overhead_times), short task name."""
    return trial_overhead.overhead_times(result, TASKS)


def check_level(job_result, rows, expected_trials):
    """What is wrong with a job's results: a missing trial, an unfinished one, an unexpected outcome (list)."""
    problems = []
    if job_result.get("n_total_trials") != expected_trials:
        problems.append("the job planned %s trials, not %d" % (job_result.get("n_total_trials"), expected_trials))
    if len(rows) != expected_trials:
        problems.append("%d of %d trials have a result.json" % (len(rows), expected_trials))
    if job_seconds(job_result) is None:
        problems.append("the job has no finished_at")
    for row in rows:
        wanted = EXPECTED.get(row["task"])
        if wanted is None:
            problems.append("unknown task %s" % row["task"])
        elif row["outcome"] != wanted or row["total"] is None:
            problems.append("%s: %s, expected %s" % (row.get("trial") or row["task"], row["outcome"], wanted))
    return problems


def cpu_split(before, after, harbor):
    """CPU seconds of a job from the cgroup counters before and after it ({"container", "tasks", "machine"}) and
    the harbor process's own ({"self", "children"}): total, task containers, Harbor, CLIs, engine (the rest)."""
    def delta(key):
        if before.get(key) is None or after.get(key) is None:
            return None
        return round(after[key] - before[key], 2)

    total, tasks = delta("container"), delta("tasks")
    split = {"total": total, "task_containers": tasks, "harbor": (harbor or {}).get("self"),
             "clis": (harbor or {}).get("children"), "machine": delta("machine"), "engine": None}
    if None not in (total, tasks, split["harbor"], split["clis"]):
        split["engine"] = round(total - tasks - split["harbor"] - split["clis"], 2)
    return split


def command_kind(argv):
    """The trace's label of one docker CLI run: "compose <subcommand>" or "docker <command>"."""
    words = argv.split()
    if not words:
        return "docker"
    if words[0] != "compose":
        return "docker " + words[0]
    index = 1
    while index < len(words) and words[index].startswith("-"):
        index += 2 if words[index] in COMPOSE_VALUE_OPTIONS else 1
    return "compose " + (words[index] if index < len(words) else "?")


def _project(argv):
    """The compose project a trace line's argv names (None for a docker command)."""
    words = argv.split()
    for index, word in enumerate(words[:-1]):
        if word in ("-p", "--project-name"):
            return words[index + 1]
    return None


def build_waits(text, results):
    """Seconds from each trial's environment_setup start (its result.json) to the start of its `compose build`
    (the trace): Harbor's `docker info` and the per-task build lock lie between."""
    builds = {}
    for line in text.splitlines():
        parts = line.split("\t", 3)
        if len(parts) == 4 and command_kind(parts[3]) == "compose build":
            builds.setdefault(_project(parts[3]), float(parts[0]))
    waits = []
    for result in results:
        started = (result.get("environment_setup") or {}).get("started_at")
        # harbor/environments/docker/docker.py: the project is the session id, "<trial name>__env", sanitized.
        project = re.sub(r"[^a-z0-9_-]", "-", "%s__env" % result.get("trial_name", "").lower())
        if started and project in builds:
            waits.append(builds[project] - _time(started).timestamp())
    return waits


def summarize_trace(text, trials, results=None):
    """Per kind of docker CLI run in a trace (TRACE_SHIM's lines): runs per trial, median and max seconds, seconds
    per trial; the totals per trial; with the trials' `results`, the median and max wait before their build."""
    kinds = {}
    for line in text.splitlines():
        parts = line.split("\t", 3)
        if len(parts) != 4:
            continue
        kinds.setdefault(command_kind(parts[3]), []).append(float(parts[1]) - float(parts[0]))
    summary = {kind: {"per_trial": round(len(values) / float(trials), 2), "median": round(statistics.median(values), 2),
                      "max": round(max(values), 2), "seconds_per_trial": round(sum(values) / trials, 2)}
               for kind, values in kinds.items()}
    compose = [kind for kind in kinds if kind.startswith("compose ")]
    waits = build_waits(text, results or [])
    return {"trials": trials, "commands": summary,
            "runs_per_trial": round(sum(len(values) for values in kinds.values()) / float(trials), 1),
            "compose_runs_per_trial": round(sum(len(kinds[kind]) for kind in compose) / float(trials), 1),
            "seconds_per_trial": round(sum(sum(values) for values in kinds.values()) / trials, 1),
            "build_wait": {"median": round(statistics.median(waits), 2), "max": round(max(waits), 2),
                           "trials": len(waits)} if waits else None}


def summarize_level(concurrency, job_result, rows, cpu=None, load=None, trace=None):
    """One job's numbers: trials, Harbor's job wall time, trials per minute, phase medians (and max) over the
    trials, outcomes per task, CPU seconds (and per trial), load, trace summary."""
    wall = job_seconds(job_result)
    level = {"concurrency": concurrency, "trials": len(rows), "job_seconds": round(wall, 1) if wall else None,
             "trials_per_minute": round(len(rows) * 60.0 / wall, 1) if wall else None,
             "summary": agents.phase_summary(rows, KEYS, digits=2, with_max=True),
             "outcomes": {task: sorted({row["outcome"] for row in rows if row["task"] == task})
                          for task in sorted({row["task"] for row in rows})},
             "total_mean": round(statistics.mean(row["total"] for row in rows), 2) if rows else None,
             "cpu": cpu or {}, "load": load, "trace": trace}
    level["cpu_per_trial"] = {key: (round(value / len(rows), 2) if value is not None and rows else None)
                              for key, value in level["cpu"].items() if key != "machine"}
    return level


def _s(value, digits=1):
    return "-" if value is None else "%.*f s" % (digits, value)


def _outcome(level):
    return ", ".join("%s %s" % (task, "/".join(outcomes)) for task, outcomes in sorted(level["outcomes"].items()))


def cpu_ceiling(level, cores):
    """Trials per minute the machine's cores allow at this level's CPU seconds per trial (None if unknown)."""
    per_trial = level["cpu_per_trial"].get("total")
    return round(cores * 60.0 / per_trial, 1) if per_trial else None


def markdown(section):
    """The tables of the "Trial throughput" section."""
    levels = section["levels"]
    out = [
        "| concurrency | trials | job wall time | trials/min | **overhead** median (max) | environment setup median "
        "| CPU s per trial | outcome |",
        "|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for level in levels:
        summary = level["summary"]
        out.append("| %d | %d | %s | **%.1f** | **%s** (%s) | %s | %s | %s |" % (
            level["concurrency"], level["trials"], _s(level["job_seconds"]), level["trials_per_minute"],
            _s(summary["overhead"]), _s(summary["overhead_max"]), _s(summary["environment_setup"]),
            _s(level["cpu_per_trial"].get("total"), 2), _outcome(level)))
    out += [
        "",
        "Phase medians (max in brackets) and where the CPU seconds per trial go: the task containers' own cgroups "
        "(the oracle's and verifier's commands, their shells and runc's init for the container and for every "
        "exec), Harbor's Python, the docker / docker compose CLIs it ran, and the engine (dockerd, containerd, "
        "shims). Machine CPU busy is the whole machine's (everyone's) CPU time over %d cores × the job's "
        "runtime-side wall time; load is the 1-min load average before and after the job." % section["cores"],
        "",
        "| concurrency | environment setup | agent setup | agent execution | verifier | remainder | trial total | "
        "CPU: task containers | Harbor | CLIs | engine | machine CPU busy | load |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for level in levels:
        summary, per_trial = level["summary"], level["cpu_per_trial"]
        busy = level.get("machine_busy")
        out.append("| %d | %s | %s | %s | %s | %s | %s (%s) | %s | %s | %s | %s | %s | %s |" % (
            level["concurrency"], _s(summary["environment_setup"]), _s(summary["agent_setup"]),
            _s(summary["agent_execution"]), _s(summary["verifier"]), _s(summary["remainder"]), _s(summary["total"]),
            _s(summary["total_max"]), _s(per_trial.get("task_containers"), 2), _s(per_trial.get("harbor"), 2),
            _s(per_trial.get("clis"), 2), _s(per_trial.get("engine"), 2),
            "-" if busy is None else "%d%%" % round(100 * busy),
            "–".join("%.1f" % value for value in level["load"]) if level.get("load") else "-"))
    traces = [level for level in (section.get("warmup"), section.get("traced")) if level and level.get("trace")]
    if traces:
        out += [
            "",
            "Every docker CLI run of the traced jobs (a timing shim on PATH: the warm-up, %s): runs per trial, "
            "median (max) seconds of each run." % ", ".join(
                "concurrency %d, %d trials" % (level["concurrency"], level["trials"]) for level in traces),
            "",
            "| command | runs per trial | %s |" % " | ".join("concurrency %d" % level["concurrency"] for level in traces),
            "|---|---:|%s" % ("---:|" * len(traces)),
        ]
        kinds = [kind for kind in COMMANDS if any(kind in level["trace"]["commands"] for level in traces)]
        kinds += sorted({kind for level in traces for kind in level["trace"]["commands"]} - set(kinds))
        for kind in kinds:
            cells = [level["trace"]["commands"].get(kind) for level in traces]
            runs = next(cell["per_trial"] for cell in reversed(cells) if cell)
            out.append("| `%s` | %s | %s |" % (kind, ("%.2f" % runs).rstrip("0").rstrip("."), " | ".join(
                "%.2f (%.2f)" % (cell["median"], cell["max"]) if cell else "-" for cell in cells)))
        cells = ["%.1f s (%.1f runs, %.1f compose)" % (
            level["trace"]["seconds_per_trial"], level["trace"]["runs_per_trial"],
            level["trace"]["compose_runs_per_trial"]) for level in traces]
        out.append("| all, seconds per trial (runs) | | %s |" % " | ".join(cells))
    return "\n".join(out)


def probe_markdown(section):
    """The probes' table: per kind of CLI run, wall and CPU milliseconds (CLI processes, whole runtime container)."""
    probes = section.get("probes")
    if not probes:
        return []
    out = ["| single CLI run, %d times one after the other | wall | CPU in the CLI processes | CPU in the runtime "
           "container |" % section["probe_repeat"], "|---|---:|---:|---:|"]
    for probe in PROBES:
        if probe in probes:
            row = probes[probe]
            out.append("| %s | %d ms | %d ms | %d ms |" % (
                PROBE_LABELS[probe], row["wall_ms"], row["cli_cpu_ms"], row["container_cpu_ms"]))
    return out


def side_by_side_summary(side):
    """Mean CPU seconds per trial (total, CLIs, engine) and trials per minute of each setting's jobs."""
    by_setting = {}
    for job in side["jobs"]:
        by_setting.setdefault(job["setting"], []).append(job)
    summary = {}
    for setting, jobs in by_setting.items():
        entry = {"jobs": len(jobs), "trials_per_minute": round(statistics.mean(
            job["trials_per_minute"] for job in jobs), 1)}
        for key in ("total", "clis", "engine"):
            values = [job["cpu_per_trial"].get(key) for job in jobs]
            entry[key] = round(statistics.mean(values), 2) if None not in values else None
        summary[setting] = entry
    return summary


def _setting_label(side, setting):
    """The side-by-side table's name of a setting: "default" is the role's (its GOGC, if any)."""
    if setting == "default":
        role = " ".join(side.get("role_env") or [])
        return "the role's default (`%s`)" % role if role else "the role's default"
    return "`%s`" % setting


def side_by_side_markdown(section):
    side = section.get("side_by_side")
    if not side:
        return []
    variant = " ".join(side["env"])
    out = ["| job (in run order) | runtime container environment | trials | trials/min | **overhead** median (max) | "
           "environment setup median | CPU s per trial | of it CLIs | engine | machine CPU busy |",
           "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for index, job in enumerate(side["jobs"], 1):
        summary, per_trial = job["summary"], job["cpu_per_trial"]
        out.append("| %d | %s | %d | %.1f | **%s** (%s) | %s | %s | %s | %s | %s |" % (
            index, _setting_label(side, job["setting"]), job["trials"],
            job["trials_per_minute"], _s(summary["overhead"]), _s(summary["overhead_max"]),
            _s(summary["environment_setup"]), _s(per_trial.get("total"), 2), _s(per_trial.get("clis"), 2),
            _s(per_trial.get("engine"), 2),
            "-" if job.get("machine_busy") is None else "%d%%" % round(100 * job["machine_busy"])))
    means = side_by_side_summary(side)
    default, other = means.get("default"), means.get(variant)
    memory = side.get("memory") or {}
    out += ["", "Peak resident memory of the inner engine after its jobs (VmHWM): %s." % "; ".join(
        "%s: dockerd %s MiB, containerd %s MiB" % (_setting_label(side, setting), peaks.get("dockerd"),
                                                   peaks.get("containerd"))
        for setting, peaks in memory.items())]
    if default and other and default["total"] and other["total"]:
        out += ["", "Mean of the two jobs each: CPU per trial %s with %s, %s with %s (%+d%%; the CLIs %s → %s, "
                "the engine %s → %s); %.1f vs %.1f trials/min." % (
                    _s(default["total"], 2), _setting_label(side, "default"), _s(other["total"], 2),
                    _setting_label(side, variant),
                    round(100 * (other["total"] - default["total"]) / default["total"]), _s(default["clis"], 2),
                    _s(other["clis"], 2), _s(default["engine"], 2), _s(other["engine"], 2),
                    default["trials_per_minute"], other["trials_per_minute"])]
    return out


def probe_findings(section):
    """What the docker CLI front end costs each compose run, and so each trial (from the probes and the trace)."""
    probes = section.get("probes") or {}
    trace = (section.get("traced") or section.get("warmup") or {}).get("trace")
    if not all(probe in probes for probe in ("compose_exec", "compose_exec_direct")) or not trace:
        return []
    front = probes["compose_exec"]["cli_cpu_ms"] - probes["compose_exec_direct"]["cli_cpu_ms"]
    per_trial = front * trace["compose_runs_per_trial"] / 1000.0
    cpu = section["levels"][-1]["cpu_per_trial"].get("total") if section["levels"] else None
    return ["A `docker compose exec` costs %d ms of CPU in the runtime container, %d ms of it in the CLI processes; "
            "the same plugin binary called as `docker-compose` needs %d ms: the docker CLI front end and its "
            "`docker-cli-plugin-metadata` run of the plugin (%d ms alone) cost %d ms on each of a trial's %.0f "
            "compose runs, %s per trial%s. Harbor 0.26.0 hard-codes `docker compose` (`ContainerRuntime.compose` in "
            "`harbor/environments/docker/runtime.py`): cutting that is a change to Harbor, not a setting." % (
                probes["compose_exec"]["container_cpu_ms"], probes["compose_exec"]["cli_cpu_ms"],
                probes["compose_exec_direct"]["cli_cpu_ms"], probes.get("plugin_metadata", {}).get("cli_cpu_ms", 0),
                front, trace["compose_runs_per_trial"], _s(per_trial, 2),
                " (%d%% of the %s a trial costs at concurrency %d)" % (
                    round(100 * per_trial / cpu), _s(cpu, 2), section["levels"][-1]["concurrency"]) if cpu else "")]


def findings(section):
    """"What dominates", computed from the levels: the phase that grows, the CPU bound, the CPU split, the trace."""
    levels = section["levels"]
    if not levels:
        return []
    low, high = levels[0], levels[-1]
    lines = []
    if len(levels) > 1:
        growth = {key: (high["summary"][key] or 0.0) - (low["summary"][key] or 0.0)
                  for key in agents.PHASES + ("remainder",)}
        grower = max(growth, key=growth.get)
        lines.append(
            "From concurrency %d to %d the trial's median total goes from %s to %s; the phase that grows most is "
            "**%s** (%s → %s), then %s (%s → %s). Throughput goes from %.1f to %.1f trials/min (×%.1f for ×%g "
            "concurrency)." % (
                low["concurrency"], high["concurrency"], _s(low["summary"]["total"]), _s(high["summary"]["total"]),
                grower.replace("_", " "), _s(low["summary"][grower]), _s(high["summary"][grower]),
                *_second(growth, grower, low, high), low["trials_per_minute"], high["trials_per_minute"],
                high["trials_per_minute"] / low["trials_per_minute"], high["concurrency"] / float(low["concurrency"])))
        best = max(levels, key=lambda level: level["trials_per_minute"])
        if best is not high:
            lines[-1] += " The most trials per minute came at concurrency %d (%.1f): beyond it the trials only wait " \
                         "longer for the same cores." % (best["concurrency"], best["trials_per_minute"])
    ceiling = cpu_ceiling(high, section["cores"])
    per_trial = high["cpu_per_trial"]
    if ceiling:
        parts = [(key, per_trial.get(key)) for key in ("engine", "clis", "harbor", "task_containers")]
        parts = sorted([part for part in parts if part[1] is not None], key=lambda part: -part[1])
        labels = {"engine": "the engine (dockerd, containerd, shims)", "clis": "the docker / compose CLIs",
                  "harbor": "Harbor's Python", "task_containers": "the task containers"}
        lines.append(
            "Each trial costs %s of CPU at concurrency %d (%s at %d): %s. %d cores at that cost allow %.1f "
            "trials/min; the job reached %.1f (%d%%)%s." % (
                _s(per_trial["total"], 2), high["concurrency"], _s(low["cpu_per_trial"].get("total"), 2),
                low["concurrency"], ", ".join("%s %s" % (labels[key], _s(value, 2)) for key, value in parts),
                section["cores"], ceiling, high["trials_per_minute"], round(100 * high["trials_per_minute"] / ceiling),
                _busy_note(high)))
    traced = section.get("traced") or {}
    trace, warm = traced.get("trace"), (section.get("warmup") or {}).get("trace")
    if trace:
        commands = trace["commands"]
        slowest = sorted(commands, key=lambda kind: -commands[kind]["seconds_per_trial"])[:3]
        total = traced.get("total_mean") or traced["summary"]["total"]
        slowest_text = ", ".join("`%s` (%s × %.2f s)" % (
            kind, ("%.1f" % commands[kind]["per_trial"]).rstrip("0").rstrip("."), commands[kind]["median"])
            for kind in slowest)
        lines.append(
            "A trial runs %.0f docker CLI commands (%.0f of them `docker compose`, each a fresh CLI and plugin "
            "process): at concurrency %d they take %s per trial (mean) of the traced trials' %s, most in %s. Every "
            "command's time stretches with the load (%s)." % (
                trace["runs_per_trial"], trace["compose_runs_per_trial"], traced["concurrency"],
                _s(trace["seconds_per_trial"]), _s(total), slowest_text,
                ", ".join("`%s` %.2f s → %.2f s" % (kind, warm["commands"][kind]["median"], commands[kind]["median"])
                          for kind in slowest if warm and kind in warm["commands"]) or "no warm-up trace"))
        wait, warm_wait = trace.get("build_wait"), (warm or {}).get("build_wait")
        if wait:
            lines.append(
                "The rest is waiting outside any docker command. From a trial's environment setup start to its "
                "`compose build` (Harbor's `docker info`, run blocking in the event loop that drives every trial, "
                "then the build lock of its task) takes %s median, %s max, at concurrency %d%s; the build itself "
                "%.2f s, run one at a time per task." % (
                    _s(wait["median"], 2), _s(wait["max"], 2), traced["concurrency"],
                    " (%s at concurrency 1)" % _s(warm_wait["median"], 2) if warm_wait else "",
                    commands.get("compose build", {}).get("median", 0.0)))
    return lines + probe_findings(section)


def _second(growth, grower, low, high):
    rest = {key: value for key, value in growth.items() if key != grower}
    second = max(rest, key=rest.get)
    return second.replace("_", " "), _s(low["summary"][second]), _s(high["summary"][second])


def _busy_note(level):
    busy = level.get("machine_busy")
    if busy is None:
        return ""
    return ", with the whole machine %d%% busy (other work included)" % round(100 * busy)


# ---------------------------------------------------------------------------- the run

def prepare_tasks(tasks_dir):
    """hello-pass and hello-fail as they are, and hello-pass FROM the big image."""
    shutil.rmtree(tasks_dir, ignore_errors=True)
    for name in ("hello-pass", "hello-fail"):
        shutil.copytree(os.path.join(SAMPLE_TASKS, name), os.path.join(tasks_dir, name))
    big = os.path.join(tasks_dir, "throughput-big")
    shutil.copytree(os.path.join(SAMPLE_TASKS, "hello-pass"), big)
    with open(os.path.join(big, "task.toml")) as handle:
        toml = trial_overhead.big_task_toml(handle.read(), BIG_TASK_NAME)
    with open(os.path.join(big, "task.toml"), "w") as handle:
        handle.write(toml)
    with open(os.path.join(big, "environment", "Dockerfile"), "w") as handle:
        handle.write(big_task_dockerfile())


def build_images(total_mb, layers, log):
    docker("build", "--pull=false", "-t", SAMPLE_IMAGE, "-", input=trial_overhead.sample_base_dockerfile())
    log("trial-throughput: building %s (%d MiB in %d layers)" % (BIG_IMAGE, total_mb, layers))
    started = time.perf_counter()
    docker("build", "--pull=false", "-t", BIG_IMAGE, "-",
           input=trial_overhead.big_image_dockerfile(total_mb, layers, base=SAMPLE_IMAGE))
    seconds = time.perf_counter() - started
    size = int(docker("image", "inspect", "--format", "{{.Size}}", BIG_IMAGE).stdout.strip())
    return round(seconds, 1), "%.2f GB" % (size / 1e9)


def start_runtime(root, tasks_dir, container=CONTAINER, env=(), timeout=300):
    """The runtime container in dind mode, overlay2; seconds until its inner engine answers.

    As the runtime_container role starts it (privileged, --cgroupns private: the inner engine's containers get
    cgroups below the runtime container's own, so its cgroup counts them too; HARBOR_TELEMETRY=0), but in its own
    network namespace, as trial_overhead's are, not the host's. `env`: more KEY=VALUE for the container."""
    volume = container + "-docker"
    docker("rm", "-f", "-v", container, check=False)
    docker("volume", "rm", "-f", volume, check=False)
    os.makedirs(os.path.join(root, "jobs"), exist_ok=True)
    started = time.perf_counter()
    docker("run", "-d", "--name", container, "--privileged", "--cgroupns", "private",
           *[arg for pair in env for arg in ("-e", pair)],
           "-e", "AIS_BENCH_AGENT_INNER_DOCKER=1", "-e", "AIS_BENCH_AGENT_STORAGE_DRIVER=overlay2",
           "-e", "AIS_BENCH_ROOT=" + INSIDE, "-e", "HARBOR_TELEMETRY=0", "-e", "LITELLM_LOCAL_MODEL_COST_MAP=True",
           "-v", "%s:/var/lib/docker" % volume,
           "-v", "%s:%s/jobs" % (os.path.join(root, "jobs"), INSIDE), "-v", "%s:%s/tasks:ro" % (tasks_dir, INSIDE),
           IMAGE, "sleep", "infinity")
    deadline = time.monotonic() + timeout
    while docker("exec", container, "docker", "info", check=False).returncode != 0:
        if time.monotonic() > deadline:
            raise SystemExit("trial-throughput: the inner engine of %s did not start:\n%s" % (
                container, docker("logs", "--tail", "30", container, check=False).stderr))
        time.sleep(0.5)
    seconds = time.perf_counter() - started
    chosen = docker("exec", container, "docker", "info", "--format", "{{.Driver}}").stdout.strip()
    if chosen != "overlay2":
        raise SystemExit("trial-throughput: the inner engine of %s runs %s, not overlay2" % (container, chosen))
    # The traced jobs' shim, on PATH only for them.
    docker("exec", "-i", container, "sh", "-c", "mkdir -p %s && cat > %s/docker && chmod 755 %s/docker" % (
        TRACE_DIR, TRACE_DIR, TRACE_DIR), input=TRACE_SHIM)
    return round(seconds, 1)


def load_image(image, *tags, container=CONTAINER):
    """`docker save | docker load` of a host image into the inner engine, tagged; seconds."""
    started = time.perf_counter()
    save = subprocess.Popen(["docker", "save", image], stdout=subprocess.PIPE)
    load = subprocess.run(["docker", "exec", "-i", container, "docker", "load", "-q"], stdin=save.stdout,
                          capture_output=True, text=True, check=False)
    save.stdout.close()
    if save.wait() != 0 or load.returncode != 0:
        raise SystemExit("trial-throughput: loading %s failed: %s" % (image, load.stderr))
    for tag in tags:
        docker("exec", container, "docker", "tag", image, tag)
    return round(time.perf_counter() - started, 1)


def _read_usage(path):
    try:
        with open(os.path.join(CPUACCT, path, "cpuacct.usage")) as handle:
            return int(handle.read()) / 1e9
    except (OSError, ValueError):
        return None


def cpu_counters(container_id):
    """CPU seconds so far (cgroup v1 cpuacct; None where not readable): the runtime container (hierarchical: its
    processes and the inner engine's containers), the inner engine's containers alone (its `docker` cgroup, which
    keeps the usage of removed ones; 0 before the first one), the whole machine."""
    tasks = _read_usage(os.path.join("docker", container_id, "docker"))
    container = _read_usage(os.path.join("docker", container_id))
    return {"container": container, "tasks": tasks if tasks is not None or container is None else 0.0,
            "machine": _read_usage("")}


def run_job(root, job_name, concurrency, attempts, log, traced=False, env=(), container=CONTAINER, timeout=3600):
    """One Harbor job in the runtime container (`env`: more KEY=VALUE for harbor and what it runs): its level
    numbers (summarize_level) and trial rows."""
    with open(os.path.join(root, "jobs", job_name + ".json"), "w") as handle:
        json.dump(job_config(job_name, concurrency, attempts), handle)
    argv = [HARBOR, "job", "start", "-c", "%s/jobs/%s.json" % (INSIDE, job_name), "--job-name", job_name,
            "-o", INSIDE + "/jobs", "-y", "-q"]
    env = [arg for pair in env for arg in ("-e", pair)]
    if traced:
        env += ["-e", "PATH=%s:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" % TRACE_DIR]
        env += ["-e", "AISBENCH_TRACE_LOG=%s/jobs/%s.trace" % (INSIDE, job_name)]
    container_id = docker("inspect", "-f", "{{.Id}}", container).stdout.strip()
    traced_text = ", traced" if traced else ""
    log("trial-throughput: %s: %d trials, %d at a time%s" % (job_name, attempts * len(TASKS), concurrency, traced_text))
    load = [round(os.getloadavg()[0], 2)]
    before = cpu_counters(container_id)
    started = time.perf_counter()
    proc = docker("exec", "-w", INSIDE, *env, container, "python3", "-c", RUN_SCRIPT,
                  "%s/jobs/%s.cpu.json" % (INSIDE, job_name), *argv, check=False, timeout=timeout)
    wall = time.perf_counter() - started
    after = cpu_counters(container_id)
    load.append(round(os.getloadavg()[0], 2))
    job_dir = os.path.join(root, "jobs", job_name)
    try:
        with open(os.path.join(job_dir, "result.json")) as handle:
            job_result = json.load(handle)
        with open(os.path.join(root, "jobs", job_name + ".cpu.json")) as handle:
            harbor = json.load(handle)
    except (OSError, ValueError) as exc:
        raise SystemExit("trial-throughput: job %s left no result (rc %d, %s):\n%s\n%s" % (
            job_name, proc.returncode, exc, proc.stdout[-2000:], proc.stderr[-2000:]))
    results = agents.trial_results(job_dir)
    rows = [dict(trial_row(result), trial=result.get("trial_name")) for result in results]
    problems = check_level(job_result, rows, attempts * len(TASKS))
    if proc.returncode != 0 or problems:
        raise SystemExit("trial-throughput: job %s (rc %d): %s\n%s" % (
            job_name, proc.returncode, "; ".join(problems), proc.stderr[-2000:]))
    trace = None
    if traced:
        with open(os.path.join(root, "jobs", job_name + ".trace")) as handle:
            trace = summarize_trace(handle.read(), len(rows), results)
    level = summarize_level(concurrency, job_result, rows, cpu_split(before, after, harbor), load, trace)
    level["exec_seconds"] = round(wall, 1)
    machine = level["cpu"].get("machine")
    level["machine_busy"] = round(machine / (os.cpu_count() * wall), 2) if machine is not None else None
    level["job"] = job_name
    log("trial-throughput: %s: %s trials/min (%s s), overhead median %s, CPU %s s per trial" % (
        job_name, level["trials_per_minute"], level["job_seconds"], level["summary"]["overhead"],
        level["cpu_per_trial"].get("total")))
    return level, rows


def engine_memory(container):
    """Peak resident memory (VmHWM, MiB) of the inner dockerd and containerd since they started (None if unread)."""
    script = "for name in dockerd containerd; do pid=$(pidof -s $name) && sed -n 's/^VmHWM:/'$name'/p' /proc/$pid/status; done"
    peaks = {}
    for line in docker("exec", container, "sh", "-c", script, check=False).stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == "kB":
            peaks[parts[0]] = round(int(parts[1]) / 1024.0)
    return {name: peaks.get(name) for name in ("dockerd", "containerd")}


def run_probes(repeat, container=CONTAINER):
    out = docker("exec", container, "python3", "-c", PROBE_SCRIPT, SAMPLE_BASES[0], str(repeat), timeout=900).stdout
    return json.loads(out)


def cleanup(log):
    log("trial-throughput: removing its containers, volumes and images")
    for container in (CONTAINER, VARIANT_CONTAINER):
        docker("rm", "-f", "-v", container, check=False)
        docker("volume", "rm", "-f", container + "-docker", check=False)
    docker("image", "rm", "-f", BIG_IMAGE, SAMPLE_IMAGE, check=False)


def _setup_container(root, tasks_dir, log, container=CONTAINER, env=()):
    setup = {"engine_start_seconds": start_runtime(root, tasks_dir, container=container, env=env)}
    setup["load_seconds"] = {"sample": load_image(SAMPLE_IMAGE, *SAMPLE_BASES, container=container),
                             "big": load_image(BIG_IMAGE, container=container)}
    log("trial-throughput: %s: %s" % (container, setup))
    return setup


def run_benchmark(workdir, concurrencies, trials, big_mb, big_layers, log, trace=True, variant=True,
                  probe_repeat=15):
    """Warm-up, one job per concurrency, the traced job, the probes, then the variant side by side at the highest
    concurrency: default, variant, variant, default (the levels' own job is the first default one)."""
    os.makedirs(workdir, exist_ok=True)
    started = time.time()
    tasks_dir, root, variant_root = (os.path.join(workdir, name) for name in ("tasks", "root", "root-variant"))
    for path in (root, variant_root):
        shutil.rmtree(path, ignore_errors=True)
    run_id = time.strftime("%Y%m%d-%H%M%S")
    attempts, top = attempts_for(trials), concurrencies[-1]
    levels, rows, traced, probes, side_by_side = [], [], None, None, None
    try:
        prepare_tasks(tasks_dir)
        setup = {}
        setup["big_build_seconds"], setup["big_image_size"] = build_images(big_mb, big_layers, log)
        setup.update(_setup_container(root, tasks_dir, log, env=ROLE_ENV))
        warmup = run_job(root, "throughput-%s-warmup" % run_id, 1, 1, log, traced=trace)[0]
        for concurrency in concurrencies:
            level, level_rows = run_job(root, "throughput-%s-c%d" % (run_id, concurrency), concurrency, attempts, log)
            levels.append(level)
            rows += [dict(row, concurrency=concurrency) for row in level_rows]
        if trace:
            traced = run_job(root, "throughput-%s-c%d-traced" % (run_id, top), top, attempts, log, traced=True)[0]
        probes = run_probes(probe_repeat)
        log("trial-throughput: probes %s" % json.dumps(probes))
        if variant:
            _setup_container(variant_root, tasks_dir, log, container=VARIANT_CONTAINER, env=VARIANT_ENV)
            run_job(variant_root, "throughput-%s-variant-warmup" % run_id, 1, 1, log, container=VARIANT_CONTAINER)
            jobs = [dict(levels[-1], setting="default")]
            for index in (1, 2):
                level = run_job(variant_root, "throughput-%s-c%d-variant-%d" % (run_id, top, index), top, attempts,
                                log, container=VARIANT_CONTAINER)[0]
                jobs.append(dict(level, setting=VARIANT_SETTING))
            level = run_job(root, "throughput-%s-c%d-again" % (run_id, top), top, attempts, log)[0]
            jobs.append(dict(level, setting="default"))
            side_by_side = {"env": [VARIANT_SETTING], "role_env": list(ROLE_ENV), "jobs": jobs,
                            "memory": {"default": engine_memory(CONTAINER),
                                       VARIANT_SETTING: engine_memory(VARIANT_CONTAINER)}}
    finally:
        cleanup(log)
    return {"image": IMAGE, "trials_per_level": attempts * len(TASKS), "attempts": attempts, "big_mb": big_mb,
            "big_layers": big_layers, "cores": os.cpu_count(), "setup": setup, "warmup": warmup, "levels": levels,
            "traced": traced, "probes": probes, "probe_repeat": probe_repeat, "side_by_side": side_by_side,
            "trials": rows, "jobs_dir": os.path.join(root, "jobs"), "wall_seconds": round(time.time() - started, 1)}


def render(section, measured):
    """The "Trial throughput" section of docs/performance.md."""
    setup = section["setup"]
    out = [
        "## Trial throughput: concurrent oracle trials in one runtime container",
        "",
        "`bench/trial_throughput.py`: one runtime container (`%s`, dind mode as the runtime_container role starts "
        "it: privileged, private cgroup namespace, inner engine on overlay2 on a named volume of the host engine, "
        "`HARBOR_TELEMETRY=0`). For each concurrency, one Harbor job (`harbor job start -c CFG -y`, "
        "`n_concurrent_trials` = the concurrency) of **%d oracle trials** (%d attempts × 3 tasks): the sample tasks "
        "hello-pass and hello-fail on the sample L1 base (Debian 12 minbase, baked_images' template) and `big`, "
        "hello-pass on a %d MiB image of %d random-data layers on that base (%s). Every trial has its result and "
        "scores as expected (hello-pass 1, hello-fail 0, big 1) or the part stops. From Harbor's own result.json "
        "files: **trials/min** is the trials over the job's `finished_at - started_at`; **overhead** is a trial's "
        "total minus agent execution and verifier (median, max in brackets). **CPU s per trial** is the runtime "
        "container's cgroup CPU time over the job (read on the host before and after `harbor job start`, so "
        "Harbor's own start is in it) over the trials; the task containers' cgroups are below it and counted in "
        "it, and are broken out in the second table: the oracle's `solve.sh` and the verifier's `test.sh` are a "
        "few shell commands, so nearly all of that CPU is Harbor, the CLIs and the engine around the trials." % (
            section["image"], section["trials_per_level"], section["attempts"], section["big_mb"],
            section["big_layers"], setup["big_image_size"]),
        "",
        markdown(section),
        "",
    ]
    for line in findings(section):
        out += [line, ""]
    warmup = section.get("warmup")
    out += [
        "What a trial runs (Harbor 0.26.0, `harbor/environments/docker/docker.py`, `harbor/trial/trial.py`): "
        "`docker info` (the daemon's OS type, a blocking `subprocess.run` in the event loop, so trials starting "
        "at once wait on each other's), `docker compose build` (under a lock per task: builds of one task run one "
        "at a time), `docker inspect` of a content-addressed image name that the build never tags (Harbor logs "
        "\"Skipping image OS validation\": a run that only fails), `compose down --remove-orphans`, `compose up "
        "--detach --wait` (`pull_policy: build`: it builds again), a `compose exec` to create the log "
        "directories; then the oracle's upload (`compose cp`), `solve.sh`, log downloads, the verifier's upload "
        "and `test.sh`, and `compose down --rmi local --volumes --remove-orphans`. Each compose run is a fresh "
        "docker CLI and compose plugin process that loads the project and calls the inner engine, each exec starts "
        "a runc process in the task container. Which commands run, how many and in which order is Harbor's code: "
        "the runtime image, the inner engine's daemon.json and the runtime_container role can only make each one "
        "cheaper.",
        "",
    ]
    probes = probe_markdown(section)
    if probes:
        out += ["Probes in the runtime container after the jobs (one-service project of the sample base, as "
                "Harbor's): what single CLI runs cost.", ""] + probes + [""]
    side = side_by_side_markdown(section)
    if side:
        out += [
            "### Side by side: the runtime container's Go GC target, %s against %s" % (
                _setting_label(section["side_by_side"], "default"),
                _setting_label(section["side_by_side"], " ".join(section["side_by_side"]["env"]))),
            "",
            "A setting, not a change to Harbor: the Go GC target of every Go process in the runtime container (the "
            "docker and compose CLIs Harbor runs, and dockerd, containerd and the shims), which the runtime_container "
            "role sets with `runtime_container_go_gc` (the tables above ran with the role's default). Short-lived CLIs "
            "collect garbage less often; the engine keeps a larger heap. A second runtime container started the "
            "same way with %s, and the highest concurrency run in both, alternating (the role's default, the other "
            "twice, the role's default), %d trials each; the first row is the table's own job." % (
                _setting_label(section["side_by_side"], " ".join(section["side_by_side"]["env"])),
                section["trials_per_level"]),
            "",
        ] + side + [""]
    out += [
        "Setup (wall time): big image built on the host engine %s; inner engine start %s; `docker save | docker "
        "load` of the sample base %s and of the big image %s; warm-up job (one trial of each task, one at a time, "
        "traced) %s. Whole part: %.0f s. %s" % (
            _s(setup["big_build_seconds"]), _s(setup["engine_start_seconds"]), _s(setup["load_seconds"]["sample"]),
            _s(setup["load_seconds"]["big"]), _s(warmup["job_seconds"]) if warmup else "-", section["wall_seconds"],
            measured),
        "",
    ]
    return out
