"""Benchmarks of aisbench.agent_runtime (`make bench`).

1. single: playbooks/site.yml on one fresh Debian 13 target (first run = provisioning, then
   idempotent reruns that must report changed=0), against a bare fact-gathering play
   (bench/facts.yml) on the same target.
2. fleet: site.yml with --fleet-tags on 1, 5, 10 ... targets: provisioned together once,
   then the idempotent rerun and the facts play limited to the first N targets.
3. harbor: harbor_job_info's summary (module_utils/_harbor_results) on 1k/10k/100k synthetic
   trials against a naive summarize script (bench/harbor_summary.py).
4. agents: the real mini-swe-agent and Qwen Code on a sample task, offline, on their baked toolchains and with
   Harbor's own per-trial install, side by side (bench/agents.yml, bench/agents.py): Harbor's phase times.
5. task-sync: 3,000 small task files put on a target with task_sync and with the file-by-file copy nightly.yml
   used before, first time and unchanged rerun (bench/task_sync_bench.py, bench/task_sync.yml).
6. shard: one matrix through nightly.yml's shard mode on 1, 2 and 3 targets (bench/shard.py): wall time and the
   merged pass@1.
7. trial-overhead: Harbor's phase times of oracle trials on the sample task and on a large many-layer image, in
   runtime containers whose inner engine runs vfs and overlay2, alternated in one run, with the time to get the
   images there and probes of the docker commands a trial runs (bench/trial_overhead.py).
8. trial-throughput: oracle trials per minute in one runtime container at several concurrencies (one Harbor job
   each), from Harbor's result.json files, with the container's CPU seconds per trial (bench/trial_throughput.py).
9. toolchains: a host's first provisioning with its agent toolchain pulled from the site registry (baked once by a
   build host) against baking it itself, on the registry scenario's targets and registries (bench/toolchains.py).

They run in the order 1, 2, 8, then 3-7 and 9: the rerun, the fleet and trials per minute first.

Targets are privileged containers from aisbench-test/debian-systemd:13 (systemd PID 1) on this
machine's engine, named aisbench-bench-*, reached with community.docker.docker and removed at
the end (also on failure or Ctrl-C). Docker comes from .deb files (docker_engine_source: offline),
downloaded once into --debs-cache by a throwaway container; the runtime image is loaded from
--runtime-image-tar, bind-mounted read-only into the targets.

Results go to .cache/bench/results.json; --output renders them as Markdown (docs/performance.md)
or copies the JSON (a path ending in .json). A skipped part keeps its numbers from the previous
results.json, labelled with the time and command that measured them. --render-only rewrites
--output from results.json without measuring.
"""

import argparse
import datetime
import hashlib
import json
import os
import platform
import re
import resource
import shlex
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))

import agents as agents_bench  # noqa: E402  pylint: disable=wrong-import-position
from docker_cli import docker  # noqa: E402  pylint: disable=wrong-import-position
import harbor_summary  # noqa: E402  pylint: disable=wrong-import-position
import task_sync_bench  # noqa: E402  pylint: disable=wrong-import-position
import shard as shard_bench  # noqa: E402  pylint: disable=wrong-import-position
import toolchains as toolchains_bench  # noqa: E402  pylint: disable=wrong-import-position
import trial_overhead  # noqa: E402  pylint: disable=wrong-import-position
import trial_throughput  # noqa: E402  pylint: disable=wrong-import-position

TARGET_IMAGE = "aisbench-test/debian-systemd:13"
PREFIX = "aisbench-bench-"
OFFLINE_PACKAGES = ["docker.io", "docker-cli", "python3-requests"]
RESULTS = os.path.join(ROOT, ".cache", "bench", "results.json")
LOGS = os.path.join(ROOT, ".cache", "bench", "logs")
# profile_tasks formats "{name + ' ':-<columns-9}{' %.02fs':->9}": a long task name with a two-digit time leaves two
# dashes, with a three-digit time one, with a four-digit time none. Read only after its "====" rule.
PROFILE_LINE = re.compile(r"^(?P<task>.+?) -* ?(?P<seconds>\d+\.\d\d)s$")
RECAP = re.compile(r"^(?P<host>\S+)\s*:\s*ok=(?P<ok>\d+)\s+changed=(?P<changed>\d+)\s+unreachable=(?P<unreachable>\d+)"
                   r"\s+failed=(?P<failed>\d+)\s+skipped=(?P<skipped>\d+)")


def log(message):
    print("[%s] %s" % (time.strftime("%H:%M:%S"), message), file=sys.stderr, flush=True)


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


# ---------------------------------------------------------------------------- machine and load

def machine_info():
    info = {"cpus": os.cpu_count(), "kernel": platform.release(), "os": "", "cpu_model": "", "memory_gib": None}
    try:
        with open("/etc/os-release") as handle:
            for line in handle:
                if line.startswith("PRETTY_NAME="):
                    info["os"] = line.split("=", 1)[1].strip().strip('"')
        with open("/proc/cpuinfo") as handle:
            info["cpu_model"] = next((line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")), "")
        with open("/proc/meminfo") as handle:
            info["memory_gib"] = round(int(handle.readline().split()[1]) / 2**20, 1)
    except OSError:
        pass
    info["docker"] = docker("version", "--format", "{{.Server.Version}}", check=False).stdout.strip()
    ansible = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible"), "--version"],
                             capture_output=True, text=True, check=False).stdout
    info["ansible"] = ansible.splitlines()[0] if ansible else ""
    info["python"] = platform.python_version()
    return info


def load_snapshot():
    """Load average and the containers of others (Molecule runs of other checkouts share the CPUs)."""
    names = docker("ps", "--format", "{{.Names}}", check=False).stdout.split()
    return {"loadavg_1m": round(os.getloadavg()[0], 2),
            "other_containers": len([name for name in names if not name.startswith(PREFIX)])}


CPUACCT = "/sys/fs/cgroup/cpuacct"


def cpu_counters(names):
    """CPU seconds so far: this process's waited-for children (the controller: ansible-playbook, its workers and ssh
    clients), every target container's cgroup (cgroup v1 cpuacct, hierarchical: sshd, sudo, the modules' Python)
    and the whole machine (the root cgroup: everyone's work, other checkouts' too). None where not readable."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    counters = {"controller": usage.ru_utime + usage.ru_stime, "targets": None, "machine": None}

    def read(path):
        try:
            with open(os.path.join(CPUACCT, path, "cpuacct.usage")) as handle:
                return int(handle.read()) / 1e9
        except (OSError, ValueError):
            return None

    counters["machine"] = read("")
    if names:
        ids = docker("inspect", "-f", "{{.Id}}", *names, check=False).stdout.split()
        values = [read(os.path.join("docker", cid)) for cid in ids]
        if len(values) == len(names) and None not in values:
            counters["targets"] = sum(values)
    return counters


def cpu_used(before, after):
    return {key: (round(after[key] - before[key], 2) if before[key] is not None and after[key] is not None else None)
            for key in before}


# ---------------------------------------------------------------------------- targets

def ensure_offline_debs(cache):
    """Docker and python3-requests for Debian 13 as .deb files, downloaded once (the air-gapped path)."""
    os.makedirs(cache, exist_ok=True)
    debs = sorted(os.path.join(cache, name) for name in os.listdir(cache) if name.endswith(".deb"))
    if any(os.path.basename(deb).startswith("docker.io_") for deb in debs):
        return debs
    log("downloading %s into %s" % (" ".join(OFFLINE_PACKAGES), cache))
    script = ("apt-get clean && apt-get update -qq && "
              "apt-get install -qq --download-only -y --no-install-recommends %s >/dev/null && "
              "cp /var/cache/apt/archives/*.deb /out/" % " ".join(OFFLINE_PACKAGES))
    docker("run", "--rm", "--name", PREFIX + "debs-download", "--entrypoint", "bash",
           "-v", "%s:/out" % os.path.abspath(cache), TARGET_IMAGE, "-c", script)
    return ensure_offline_debs(cache)


SSH_USER = "bench"
SSH_DIR = os.path.join(ROOT, ".cache", "bench", "ssh")
# Targets as users reach real hosts: sshd, a login user with passwordless sudo. Debian's openssh-server and sudo come
# from the Debian mirror; the key is made once on the controller (its hash tags the image).
SSH_DOCKERFILE = """FROM %s
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -qq -y --no-install-recommends \\
      openssh-server sudo >/dev/null && rm -rf /var/lib/apt/lists/* \\
    && useradd -m -s /bin/bash %s && echo '%s ALL=(ALL) NOPASSWD: ALL' > /etc/sudoers.d/bench \\
    && chmod 0440 /etc/sudoers.d/bench && systemctl enable ssh
COPY --chown=%s:%s authorized_keys /home/%s/.ssh/authorized_keys
""" % (TARGET_IMAGE, SSH_USER, SSH_USER, SSH_USER, SSH_USER, SSH_USER)


def ensure_ssh_image():
    """aisbench-bench/debian-systemd-sshd:13-KEYHASH, built once; returns (image, private key path)."""
    os.makedirs(SSH_DIR, exist_ok=True)
    key = os.path.join(SSH_DIR, "id_ed25519")
    if not os.path.exists(key):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "aisbench-bench", "-f", key], check=True)
    with open(key + ".pub") as handle:
        public = handle.read()
    image = "aisbench-bench/debian-systemd-sshd:13-%s" % hashlib.sha256(public.encode()).hexdigest()[:12]
    if docker("image", "inspect", image, check=False).returncode != 0:
        log("building %s (openssh-server, sudo)" % image)
        context = os.path.join(SSH_DIR, "image")
        os.makedirs(context, exist_ok=True)
        with open(os.path.join(context, "Dockerfile"), "w") as handle:
            handle.write(SSH_DOCKERFILE)
        with open(os.path.join(context, "authorized_keys"), "w") as handle:
            handle.write(public)
        docker("build", "-q", "-t", image, context)
    return image, key


def target_addresses(names):
    return {name: docker("inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}", name)
            .stdout.split()[0] for name in names}


def start_targets(names, mounts, image=TARGET_IMAGE):
    for name in names:
        argv = ["run", "-d", "--name", name, "--hostname", name, "--privileged", "--cgroupns", "host",
                "--tmpfs", "/run", "--tmpfs", "/run/lock", "--tmpfs", "/tmp", "-v", "/var/lib/docker"]
        for path in mounts:
            argv += ["-v", "%s:%s:ro" % (path, path)]
        docker(*(argv + [image]))
    deadline = time.monotonic() + 120
    for name in names:
        # "degraded" is fine in a container (units that need real hardware). Right after `docker run`
        # systemctl may not reach systemd yet: retry until the deadline.
        while True:
            state = docker("exec", name, "systemctl", "is-system-running", "--wait", check=False).stdout.strip()
            if state in ("running", "degraded"):
                break
            if time.monotonic() > deadline:
                raise RuntimeError("target %s did not boot: systemd is %r" % (name, state))
            time.sleep(1)


def remove_targets(names):
    existing = set(docker("ps", "-a", "--format", "{{.Names}}", check=False).stdout.split())
    ours = [name for name in names if name in existing]
    if ours:
        log("removing %s" % " ".join(ours))
        docker(*(["rm", "-f", "-v"] + ours), check=False)


CONNECTIONS = ("ssh", "docker")


def connection_vars(connection, key):
    """SSH with a login user and sudo (what real fleets use), or docker exec with sudo; both can pipeline."""
    if connection == "ssh":
        return {"ansible_connection": "ansible.builtin.ssh", "ansible_user": SSH_USER,
                "ansible_ssh_private_key_file": key, "ansible_become_method": "ansible.builtin.sudo",
                "ansible_ssh_common_args": "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null"}
    # su cannot pipeline (its become plugin says so); sudo root -> root can.
    return {"ansible_connection": "community.docker.docker", "ansible_become_method": "ansible.builtin.sudo"}


# The toolchains `make agent-toolchain-tars` exports (agent-<agent>-<version>.tar) whose recipes ship with the role;
# the docs' own-agent example (say-hello) brings its recipe in a vars file and is left out.
ROLE_AGENTS = ("mini-swe-agent", "qwen-coder", "aider", "openhands")


def agent_archives(images_dir):
    """{agent: tar} of the exported toolchains in <images_dir>/agents; every agent of ROLE_AGENTS is required."""
    folder = os.path.join(images_dir, "agents")
    found = {}
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        match = re.match(r"^agent-(?P<agent>.+)-(?P<version>[^-]+)\.tar$", name)
        if match and match.group("agent") in ROLE_AGENTS:
            found[match.group("agent")] = os.path.join(folder, name)
    missing = [agent for agent in ROLE_AGENTS if agent not in found]
    if missing:
        raise SystemExit("%s has no toolchain tar of %s: run `make agent-toolchain-tars` first"
                         % (folder, ", ".join(missing)))
    return found


def whole_site_vars(images_dir):
    """What the layers above the engine need to run as a user's site.yml does: the runtime container (dind, the sample
    matrix, an API key), the sample cases' L1 bases and the four agents' toolchains, all from local tars."""
    base = os.path.join(images_dir, "debian-12-minbase.tar")
    archives = agent_archives(images_dir)
    return {
        "runtime_container_mode": "dind",
        "runtime_container_production": True,
        "runtime_container_matrix_file": os.path.join(ROOT, "playbooks", "files", "sample_matrix.yaml"),
        "runtime_container_api_keys": {"OPENAI_API_KEY": "aisbench-bench-not-a-key"},
        "runtime_container_env": {"LITELLM_LOCAL_MODEL_COST_MAP": "True"},
        "baked_images_cases": [{"dataset": "sample", "id": case, "image": "local/debian:12-minbase", "archive": base,
                                "archive_remote": True} for case in ("hello-pass", "hello-fail")],
        "baked_images_agents": sorted(archives),
        "baked_images_agent_archives": archives,
        "baked_images_pull": False,
    }


def write_inventory(path, names, debs, runtime_tar, runtime_tag="0.26.0", connection="docker", key=None,
                    site_vars=None):
    addresses = target_addresses(names) if connection == "ssh" else {}
    inventory = {"all": {"children": {"aisbench": {
        "hosts": {name: ({"ansible_host": addresses[name]} if name in addresses else None) for name in names},
        "vars": dict(connection_vars(connection, key), **dict({
            "ansible_python_interpreter": "/usr/bin/python3",
            "docker_engine_source": "offline",
            "docker_engine_offline_debs": debs,
            "runtime_image_source": "load",
            "runtime_image_archive": runtime_tar,
            "runtime_image_archive_remote": True,
            "runtime_image_tag": runtime_tag,
        }, **(site_vars or {}))),
    }}}}
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        json.dump(inventory, handle, indent=2)  # JSON is YAML: the yaml inventory plugin reads it
    return path


# ---------------------------------------------------------------------------- playbook runs

def parse_recap(output):
    hosts = {}
    in_recap = False
    for line in output.splitlines():
        if line.startswith("PLAY RECAP"):
            in_recap = True
            continue
        match = RECAP.match(line.strip()) if in_recap else None
        if match:
            hosts[match.group("host")] = {key: int(value) for key, value in match.groupdict().items() if key != "host"}
    return hosts


def parse_profile(output, limit=5):
    """The slowest tasks from ansible.posix.profile_tasks' summary (already sorted, slowest first); limit=None: all."""
    tasks = []
    lines = output.splitlines()
    rules = [index for index, line in enumerate(lines) if line.strip() and set(line.strip()) == {"="}]
    for line in lines[rules[-1] + 1:] if rules else []:
        match = PROFILE_LINE.match(line.strip())
        if match:
            tasks.append({"task": match.group("task").strip(), "seconds": float(match.group("seconds"))})
    return tasks[:limit] if limit else tasks


def role_seconds(tasks):
    """Seconds per role ("aisbench.agent_runtime.ROLE : task" names), the rest under the play's own tasks."""
    roles = {}
    for task in tasks:
        role = task["task"].split(" : ", 1)[0].rsplit(".", 1)[-1] if " : " in task["task"] else "play (facts, set-up)"
        roles[role] = round(roles.get(role, 0.0) + task["seconds"], 2)
    return roles


def run_playbook(label, playbook, inventory, args_extra, forks, pipelining=True, env_extra=None, cpu_targets=None):
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", inventory,
            "-f", str(forks)] + args_extra + [playbook]
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"),
               ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".cache", "collections"),
               ANSIBLE_HOME=os.path.join(ROOT, ".cache", "ansible-home"), NO_COLOR="1", ANSIBLE_NOCOLOR="1",
               ANSIBLE_CALLBACKS_ENABLED="ansible.posix.profile_tasks", PROFILE_TASKS_TASK_OUTPUT_LIMIT="all",
               # For SSH and docker exec alike (ansible.cfg sets it for SSH only); sudo can pipeline, su cannot.
               ANSIBLE_PIPELINING=str(bool(pipelining)), **(env_extra or {}))
    os.makedirs(LOGS, exist_ok=True)
    log_path = os.path.join(LOGS, label + ".log")
    before = load_snapshot()
    # Streamed to the log file so that a long run can be followed with tail -f.
    with open(log_path, "w") as handle:
        handle.write("$ %s\n" % shlex.join(argv))
        handle.flush()
        cpu_before = cpu_counters(cpu_targets)
        started = time.perf_counter()
        returncode = subprocess.run(argv, cwd=ROOT, env=env, stdout=handle, stderr=subprocess.STDOUT,
                                    check=False).returncode
        seconds = time.perf_counter() - started
        cpu = cpu_used(cpu_before, cpu_counters(cpu_targets))
    with open(log_path) as handle:
        output = handle.read()
    hosts = parse_recap(output)
    tasks = parse_profile(output, limit=None)
    if returncode != 0 or not hosts or any(h["failed"] or h["unreachable"] for h in hosts.values()):
        raise RuntimeError("%s failed (rc %d), see %s:\n%s" % (label, returncode, log_path,
                                                               "\n".join(output.splitlines()[-30:])))
    result = {"seconds": round(seconds, 2), "hosts": len(hosts),
              "changed": sum(h["changed"] for h in hosts.values()),
              "tasks_ok": sum(h["ok"] for h in hosts.values()),
              "tasks_skipped": sum(h["skipped"] for h in hosts.values()),
              "slowest_tasks": tasks[:5], "role_seconds": role_seconds(tasks), "pipelining": bool(pipelining),
              "load_before": before, "load_after": load_snapshot(), "cpu_seconds": cpu,
              "settings": sorted("%s=%s" % item for item in (env_extra or {}).items()),
              "command": "ansible-playbook " + shlex.join(argv[1:])}
    log("%s: %.1f s, %d hosts, changed=%d, CPU s %s" % (label, seconds, result["hosts"], result["changed"], cpu))
    return result


def tag_args(tags, skip_tags):
    return (["--tags", tags] if tags else []) + (["--skip-tags", skip_tags] if skip_tags else [])


def rerun_and_baseline(label, inventory, site_args, forks, repeat, limit=None, pipelining=True, env_extra=None,
                       facts_env=None, cpu_targets=None, others=None):
    """Idempotent site.yml reruns and facts plays, interleaved so both see the same load. env_extra: settings of the
    reruns (and of the facts plays unless facts_env is given: the baseline stays the plain facts play). others:
    {name: site.yml arguments} of further reruns in the same rounds (the tag-filtered subset next to the whole play),
    returned under their names with their ratio to the same facts plays."""
    limit_args = ["--limit", ",".join(limit)] if limit else []
    reruns, facts = [], []
    other_runs = {name: [] for name in (others or {})}
    for index in range(repeat):
        reruns.append(run_playbook("%s-rerun-%d" % (label, index + 1), "playbooks/site.yml", inventory,
                                   limit_args + site_args, forks, pipelining, env_extra, cpu_targets))
        for name, other_args in (others or {}).items():
            other_runs[name].append(run_playbook("%s-%s-rerun-%d" % (label, name, index + 1), "playbooks/site.yml",
                                                 inventory, limit_args + other_args, forks, pipelining, env_extra,
                                                 cpu_targets))
        facts.append(run_playbook("%s-facts-%d" % (label, index + 1), "bench/facts.yml", inventory,
                                  limit_args, forks, pipelining, env_extra if facts_env is None else facts_env,
                                  cpu_targets))
    best_rerun = min(run["seconds"] for run in reruns)
    best_facts = min(run["seconds"] for run in facts)
    result = {"reruns": reruns, "facts": facts, "rerun_seconds": best_rerun, "facts_seconds": best_facts,
              "ratio": round(best_rerun / best_facts, 2), "changed": max(run["changed"] for run in reruns),
              "settings": sorted("%s=%s" % item for item in (env_extra or {}).items())}
    for name, runs in other_runs.items():
        best = min(run["seconds"] for run in runs)
        result[name] = {"reruns": runs, "facts": facts, "rerun_seconds": best, "facts_seconds": best_facts,
                        "ratio": round(best / best_facts, 2), "changed": max(run["changed"] for run in runs),
                        "args": others[name]}
    return result


def fact_cache_env(workdir, label):
    """jsonfile fact cache with gathering=smart: a play skips fact gathering for hosts whose facts are cached."""
    path = os.path.join(workdir, "fact-cache-" + label)
    if os.path.isdir(path):
        for name in os.listdir(path):
            os.remove(os.path.join(path, name))
    return {"ANSIBLE_GATHERING": "smart", "ANSIBLE_CACHE_PLUGIN": "ansible.builtin.jsonfile",
            "ANSIBLE_CACHE_PLUGIN_CONNECTION": path, "ANSIBLE_CACHE_PLUGIN_TIMEOUT": "3600"}


def mitogen_env(path):
    """Mitogen's linear strategy from a directory holding the mitogen package (pip install --target DIR mitogen)."""
    strategy = os.path.join(path, "ansible_mitogen", "plugins", "strategy")
    if not os.path.isdir(strategy):
        raise SystemExit("--mitogen %s: no ansible_mitogen/plugins/strategy there (pip install --target %s mitogen)"
                         % (path, path))
    return {"ANSIBLE_STRATEGY_PLUGINS": strategy, "ANSIBLE_STRATEGY": "mitogen_linear"}


def settings_variants(args, workdir, label):
    """The optional controller settings measured next to the default rerun: {key: (env of the reruns, env of the
    facts plays)}. The fact cache is warmed by one facts play first (its time is not counted)."""
    variants = {}
    if args.fact_cache:
        variants["fact_cache"] = (fact_cache_env(workdir, label), {})
    if args.mitogen:
        variants["mitogen"] = (mitogen_env(args.mitogen), mitogen_env(args.mitogen))
    return variants


def measure_variants(args, workdir, label, inventory, site_args, forks, limit=None, cpu_targets=None):
    out = {}
    for key, (rerun_env, facts_env) in settings_variants(args, workdir, label).items():
        if key == "fact_cache":
            limit_args = ["--limit", ",".join(limit)] if limit else []
            run_playbook("%s-fact-cache-warm" % label, "bench/facts.yml", inventory, limit_args, forks, True, rerun_env)
        out[key] = rerun_and_baseline("%s-%s" % (label, key.replace("_", "-")), inventory, site_args, forks,
                                      args.repeat, limit=limit, env_extra=rerun_env, facts_env=facts_env,
                                      cpu_targets=cpu_targets)
    return out


def bench_single(args, debs, workdir, connection, image, key):
    name = PREFIX + "single-" + connection
    site_args = tag_args(args.tags, args.skip_tags)
    others = {"subset": tag_args("", args.subset_skip_tags)} if args.subset_skip_tags else {}
    site_vars = whole_site_vars(args.images_dir)
    remove_targets([name])
    try:
        start_targets([name], sorted({os.path.dirname(args.runtime_image_tar), args.images_dir}), image)
        inventory = write_inventory(os.path.join(workdir, "single-%s.yml" % connection), [name], debs,
                                    args.runtime_image_tar, args.runtime_image_tag, connection, key, site_vars)
        first = run_playbook("single-%s-first" % connection, "playbooks/site.yml", inventory, site_args, args.forks)
        result = rerun_and_baseline("single-" + connection, inventory, site_args, args.forks, args.repeat,
                                    cpu_targets=[name], others=others)
        if connection == "ssh" and not args.skip_no_pipelining:
            result["no_pipelining"] = rerun_and_baseline("single-ssh-no-pipelining", inventory, site_args, args.forks,
                                                         args.repeat, pipelining=False, cpu_targets=[name])
        result["variants"] = measure_variants(args, workdir, "single-" + connection, inventory, site_args, args.forks,
                                              cpu_targets=[name])
    finally:
        if not args.keep_targets:
            remove_targets([name])
    result.update(first=first, tags=args.tags, skip_tags=args.skip_tags, connection=connection)
    return result


def bench_fleet(args, debs, workdir, image, key):
    sizes = sorted(args.hosts)
    connection = args.fleet_connection
    names = [PREFIX + "fleet-%02d" % (index + 1) for index in range(sizes[-1])]
    site_args = tag_args(args.fleet_tags, "")
    forks = max(args.forks, sizes[-1])
    remove_targets(names)
    try:
        log("starting %d targets" % len(names))
        start_targets(names, [], image)
        inventory = write_inventory(os.path.join(workdir, "fleet.yml"), names, debs, args.runtime_image_tar,
                                    args.runtime_image_tag, connection, key)
        first = run_playbook("fleet-first-%d" % len(names), "playbooks/site.yml", inventory, site_args, forks)
        rows = []
        for size in sizes:
            row = rerun_and_baseline("fleet-%d" % size, inventory, site_args, forks, args.repeat, limit=names[:size],
                                     cpu_targets=names[:size])
            row.update(hosts=size, per_host_seconds=round(row["rerun_seconds"] / size, 2),
                       variants=measure_variants(args, workdir, "fleet-%d" % size, inventory, site_args, forks,
                                                 limit=names[:size], cpu_targets=names[:size]))
            rows.append(row)
    finally:
        if not args.keep_targets:
            remove_targets(names)
    return {"first": first, "tags": args.fleet_tags, "forks": forks, "rows": rows, "connection": connection,
            "cpus": os.cpu_count()}


# ---------------------------------------------------------------------------- report

def _seconds(value):
    return "%.1f s" % value


def _load_note(runs):
    loads = [run[key]["loadavg_1m"] for run in runs for key in ("load_before", "load_after")]
    others = [run[key]["other_containers"] for run in runs for key in ("load_before", "load_after")]

    def span(low, high, fmt):
        return fmt % low if fmt % low == fmt % high else (fmt + "–" + fmt) % (low, high)

    return "1-min load average %s, %s other containers running" % (
        span(min(loads), max(loads), "%.1f"), span(min(others), max(others), "%d"))


def _slowest(run):
    tasks = run.get("slowest_tasks") or []
    return ", ".join("%s %.1f s" % (task["task"], task["seconds"]) for task in tasks[:5])


def _best(runs):
    return min(runs, key=lambda run: run["seconds"])


def _part_load(section):
    """The load a part saw (before and after it), for parts that recorded one."""
    if not section.get("load"):
        return ""
    return "%s (before and after). " % _load_note([{"load_before": section["load"][0], "load_after": section["load"][1]}])


def _measured(section):
    commit = " at commit %s" % section["commit"] if section.get("commit") else ""
    return "Measured %s%s with `%s`." % (section["measured_at"], commit, section["command"])


def git_commit():
    """The checkout's commit, with +changes when the working tree differs from it (what a part measured)."""
    head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                          check=False).stdout.strip()
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                           text=True, check=False).stdout.strip()
    return (head + ("+changes" if dirty else "")) if head else ""


CONNECTION_LABELS = {"ssh": "SSH + sudo", "docker": "docker exec + sudo"}


VARIANT_LABELS = {"fact_cache": "warm fact cache", "mitogen": "Mitogen"}


def _cpu(run, key):
    value = (run.get("cpu_seconds") or {}).get(key)
    return "-" if value is None else "%.1f s" % value


def _per_task_cpu(run):
    """Controller CPU seconds per task run (ok + skipped over all hosts) of a playbook run, as text."""
    controller = (run.get("cpu_seconds") or {}).get("controller")
    tasks = run.get("tasks_ok", 0) + run.get("tasks_skipped", 0)
    return "-" if controller is None or not tasks else "%.3f s" % (controller / tasks)


def _cpu_note(part):
    """CPU seconds of the best rerun and facts play: controller (ansible-playbook and children) and the target."""
    rerun, facts = _best(part["reruns"]), _best(part["facts"])
    if not rerun.get("cpu_seconds"):
        return ""
    note = "CPU of the best rerun: controller %s, target %s (facts play: %s, %s)" % (
        _cpu(rerun, "controller"), _cpu(rerun, "targets"), _cpu(facts, "controller"), _cpu(facts, "targets"))
    tasks = rerun.get("tasks_ok", 0) + rerun.get("tasks_skipped", 0)
    extra = (rerun["cpu_seconds"].get("controller") or 0) - ((facts.get("cpu_seconds") or {}).get("controller") or 0)
    if "tasks_skipped" in rerun and tasks and extra > 0:
        note += (": the controller's CPU beyond the facts play's, %.1f s for the %d tasks the rerun ran (%d ok, %d "
                 "skipped), is %.2f s a task. Profiled (cProfile in the worker processes), it is ansible-core's own "
                 "work: a worker process per task and host that loads the connection plugin's settings and compiles "
                 "the task's Jinja afresh, each reference to a templated variable again (nothing is shared between "
                 "workers); in a task that uses any filter of the collection, every filter file of the collection, "
                 "compiled from source (ansible-core's loader imports them all to find one filter, and writes no "
                 ".pyc for collections); each module's payload built once per run (preflight_checks with the fact "
                 "collectors, like setup's, and docker_engine_state), the results and the callbacks"
                 % (extra, tasks, rerun["tasks_ok"], rerun["tasks_skipped"], extra / tasks))
    return note + "; "


def _render_single(single):
    first = next(iter(single.values()))
    out = [
        "## Idempotent rerun of site.yml (one target)",
        "",
        "site.yml %s on a fresh target per connection, as users run it: every role. Docker from .deb files "
        "(`docker_engine_source: offline`), the runtime image loaded from its tar (`runtime_image_source: load`), "
        "the runtime container in dind mode with the sample matrix and an API key, the two sample cases' L1 bases "
        "and the four agents' toolchains (mini-swe-agent, qwen-coder, aider, openhands) loaded from their tars into "
        "its engine (`bench/run.py` `whole_site_vars`). **subset** rows rerun the same target with `%s`, the part "
        "earlier versions of this page measured (preflight, docker_engine, qemu_binfmt, runtime_image). The whole "
        "rerun, the subset rerun and the baseline (`bench/facts.yml`: connect, become, gather facts) alternate in "
        "each round; the best of %d is kept." % (
            "with `%s`" % " ".join(tag_args(first["tags"], first["skip_tags"]))
            if tag_args(first["tags"], first["skip_tags"]) else "without a tag filter",
            " ".join((first.get("subset") or {}).get("args") or []) or "-", len(first["reruns"])),
        "",
        "| connection | run | wall time | changed | vs. facts play |",
        "|---|---|---:|---:|---:|",
    ]
    notes = []
    for connection, part in single.items():
        label = CONNECTION_LABELS.get(connection, connection)
        out += [
            "| %s | first run (provisioning) | %s | %d | %.1fx |" % (
                label, _seconds(part["first"]["seconds"]), part["first"]["changed"],
                part["first"]["seconds"] / part["facts_seconds"]),
            "| %s | idempotent rerun, whole site.yml | %s | %d | **%.1fx** |" % (
                label, _seconds(part["rerun_seconds"]), part["changed"], part["ratio"]),
        ]
        subset = part.get("subset")
        if subset:
            out.append("| %s | idempotent rerun, subset (`%s`) | %s | %d | %.1fx |" % (
                label, " ".join(subset["args"]), _seconds(subset["rerun_seconds"]), subset["changed"],
                subset["ratio"]))
        out.append("| %s | bare fact-gathering play | %s | 0 | 1.0x |" % (label, _seconds(part["facts_seconds"])))
        off = part.get("no_pipelining")
        if off:
            out += [
                "| %s, pipelining off | idempotent rerun | %s | %d | %.1fx |" % (
                    label, _seconds(off["rerun_seconds"]), off["changed"], off["ratio"]),
                "| %s, pipelining off | bare fact-gathering play | %s | 0 | 1.0x |" % (
                    label, _seconds(off["facts_seconds"])),
            ]
        for key, variant in (part.get("variants") or {}).items():
            out += [
                "| %s, %s | idempotent rerun | %s | %d | %.1fx |" % (
                    label, VARIANT_LABELS[key], _seconds(variant["rerun_seconds"]), variant["changed"],
                    variant["rerun_seconds"] / part["facts_seconds"]),
            ]
            if key != "fact_cache":
                out.append("| %s, %s | bare fact-gathering play | %s | 0 | %.1fx |" % (
                    label, VARIANT_LABELS[key], _seconds(variant["facts_seconds"]),
                    variant["facts_seconds"] / part["facts_seconds"]))
        runs = [part["first"]] + part["reruns"] + part["facts"] + (off["reruns"] + off["facts"] if off else [])
        runs += subset["reruns"] if subset else []
        runs += [run for variant in (part.get("variants") or {}).values() for run in variant["reruns"] + variant["facts"]]
        subset_note = ""
        if subset:
            best_subset = _best(subset["reruns"])
            subset_note = "subset reruns %s (changed: %s; %d tasks: %d ok, %d skipped; controller CPU %s); " % (
                ", ".join(_seconds(run["seconds"]) for run in subset["reruns"]),
                ", ".join(str(run["changed"]) for run in subset["reruns"]),
                best_subset.get("tasks_ok", 0) + best_subset.get("tasks_skipped", 0), best_subset.get("tasks_ok", 0),
                best_subset.get("tasks_skipped", 0), _cpu(best_subset, "controller"))
        notes.append("%s: whole reruns %s (changed: %s); %s%s%s. %s" % (
            label, ", ".join(_seconds(run["seconds"]) for run in part["reruns"]),
            ", ".join(str(run["changed"]) for run in part["reruns"]), subset_note, _cpu_note(part), _load_note(runs),
            _measured(part)))
    out += ["", "Ratios in the last column are to the bare fact-gathering play of the first rows (default settings); "
            "a Mitogen row's own facts play is shown next to it. The warm fact cache row: a facts play filled a "
            "jsonfile cache first, then site.yml ran with `gathering = smart`. site.yml's provisioning play gathers no "
            "facts of its own either way (the preflight play returns them in its one round trip), so a cache has "
            "nothing to save there.", ""]
    out += [note + "\n" for note in notes]
    roles = {}
    for connection, part in single.items():
        for role, seconds in (_best(part["reruns"]).get("role_seconds") or {}).items():
            roles.setdefault(role, {})[connection] = seconds
    if roles:
        out += ["Per-role cost of the best rerun (sum of its tasks' times from profile_tasks):", "",
                "| role | %s |" % " | ".join(CONNECTION_LABELS.get(c, c) for c in single),
                "|---|" + "---:|" * len(single)]
        for role in sorted(roles, key=lambda r: -max(roles[r].values())):
            out.append("| %s | %s |" % (role, " | ".join(
                _seconds(roles[role][c]) if c in roles[role] else "-" for c in single)))
        out.append("")
    out += ["No outside reference: geerlingguy.docker (Galaxy, GitHub) was to run on identical targets, but this "
            "machine reaches only PyPI, Debian and npm, and the role is not on PyPI, so that comparison is left out.", ""]
    for connection, part in single.items():
        if _slowest(_best(part["reruns"])):
            out += ["Slowest tasks of the best rerun, %s (profile_tasks): %s." % (
                CONNECTION_LABELS.get(connection, connection), _slowest(_best(part["reruns"]))), ""]
    return out


def _fleet_bound(fleet):
    """What bounds the largest fleet's rerun on this machine: its CPU seconds against the cores, from the bench's own
    cgroup readings (controller: ansible-playbook and its children; targets: the containers' cgroups)."""
    first, last = _best(fleet["rows"][0]["reruns"]), _best(fleet["rows"][-1]["reruns"])
    cpu_first, cpu_last = first.get("cpu_seconds") or {}, last.get("cpu_seconds") or {}
    if None in (cpu_first.get("controller"), cpu_first.get("targets"), cpu_last.get("controller"), cpu_last.get("targets")):
        return []
    cpus = fleet.get("cpus") or 2
    used_first = cpu_first["controller"] + cpu_first["targets"]
    used_last = cpu_last["controller"] + cpu_last["targets"]
    floor = used_last / cpus
    hosts_first, hosts_last = fleet["rows"][0]["hosts"], fleet["rows"][-1]["hosts"]
    return ["What bounds the %d-target rerun here: it used %.1f CPU seconds (controller %.1f s, targets %.1f s) against "
            "%.1f s (%.1f s, %.1f s) for %d target%s. All of it runs on the same %d cores, so the %d-target rerun cannot "
            "take less than %.1f s of wall time, %.2fx the %d-target rerun's %s, even if nothing waited on anything "
            "else (the targets' CPU is sshd, sudo and each module's Python: %.2f s per target per rerun). On real "
            "hosts the targets' share runs on their own CPUs and only the controller's %.1f s (%.2f s per target) "
            "shares one machine." % (
                hosts_last, used_last, cpu_last["controller"], cpu_last["targets"], used_first,
                cpu_first["controller"], cpu_first["targets"], hosts_first, "" if hosts_first == 1 else "s", cpus,
                hosts_last, floor, floor / first["seconds"], hosts_first, _seconds(first["seconds"]),
                cpu_last["targets"] / hosts_last, cpu_last["controller"], cpu_last["controller"] / hosts_last),
            "The bare facts play, which does nothing but connect, become and gather facts, scales the same way here: "
            "%s on %d target%s against %s on %d (%.2fx)." % (
                _seconds(fleet["rows"][-1]["facts_seconds"]), hosts_last, "" if hosts_last == 1 else "s",
                _seconds(fleet["rows"][0]["facts_seconds"]), hosts_first,
                fleet["rows"][-1]["facts_seconds"] / fleet["rows"][0]["facts_seconds"]), ""]


def _render_fleet(fleet):
    base = fleet["rows"][0]["rerun_seconds"]
    out = [
        "## Fleet scaling (site.yml rerun on %s targets, %s)" % (
            ", ".join(str(row["hosts"]) for row in fleet["rows"]),
            CONNECTION_LABELS.get(fleet.get("connection", "docker"), fleet.get("connection"))),
        "",
        "site.yml with `--tags %s` (preflight, docker_engine, qemu_binfmt), `--forks %d`. All %d targets "
        "were provisioned by one first run (%s, changed=%d); then, for each fleet size, the rerun and the "
        "facts play were limited to the first N targets (best of %d)." % (
            fleet["tags"], fleet["forks"], fleet["first"]["hosts"], _seconds(fleet["first"]["seconds"]),
            fleet["first"]["changed"], len(fleet["rows"][0]["reruns"])),
        "",
        "| targets | rerun wall time | vs. %d target%s | per target | changed | facts play | rerun / facts "
        "| controller CPU | controller CPU per host per task | targets' CPU | machine CPU busy |" % (
            fleet["rows"][0]["hosts"], "" if fleet["rows"][0]["hosts"] == 1 else "s"),
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    cpus = fleet.get("cpus") or 2
    for row in fleet["rows"]:
        best = _best(row["reruns"])
        machine = (best.get("cpu_seconds") or {}).get("machine")
        out.append("| %d | %s | %.2fx | %s | %d | %s | %.1fx | %s | %s | %s | %s |" % (
            row["hosts"], _seconds(row["rerun_seconds"]), row["rerun_seconds"] / base,
            _seconds(row["per_host_seconds"]), row["changed"], _seconds(row["facts_seconds"]), row["ratio"],
            _cpu(best, "controller"), _per_task_cpu(best), _cpu(best, "targets"),
            "-" if machine is None else "%.0f%%" % (100.0 * machine / (cpus * best["seconds"]))))
    out += ["", "**controller CPU per host per task**: the controller's CPU seconds of the rerun over the task runs it "
            "made (ok + skipped, summed over the hosts): what each host adds to the controller for each task, the "
            "figure that carries over to real fleets, whose targets do their share on their own CPUs."]
    variant_keys = [key for key in VARIANT_LABELS if all(key in (row.get("variants") or {}) for row in fleet["rows"])]
    for key in variant_keys:
        vbase = fleet["rows"][0]["variants"][key]["rerun_seconds"]
        settings = "; ".join(fleet["rows"][0]["variants"][key]["settings"]).replace(ROOT + os.sep, "")
        out += ["", "The same reruns with %s (%s):" % (VARIANT_LABELS[key], settings), "",
                "| targets | rerun wall time | vs. %d target | changed | controller CPU | targets' CPU |" % (
                    fleet["rows"][0]["hosts"]),
                "|---:|---:|---:|---:|---:|---:|"]
        for row in fleet["rows"]:
            variant = row["variants"][key]
            best = _best(variant["reruns"])
            out.append("| %d | %s | %.2fx | %d | %s | %s |" % (
                row["hosts"], _seconds(variant["rerun_seconds"]), variant["rerun_seconds"] / vbase, variant["changed"],
                _cpu(best, "controller"), _cpu(best, "targets")))
    runs = [fleet["first"]] + [run for row in fleet["rows"] for run in row["reruns"] + row["facts"]]
    runs += [run for row in fleet["rows"] for variant in (row.get("variants") or {}).values()
             for run in variant["reruns"] + variant["facts"]]
    out += ["", "%s. %s" % (_load_note(runs), _measured(fleet)), ""]
    out += _fleet_bound(fleet)
    largest = _best(fleet["rows"][-1]["reruns"])
    if _slowest(largest):
        out += ["Slowest tasks of the %d-target rerun (profile_tasks, wall time of the task across all targets): %s." % (
            fleet["rows"][-1]["hosts"], _slowest(largest)), ""]
    return out


def _render_settings(single, fleet):
    """Recommended controller settings, with the numbers this run measured for them."""
    out = ["## Controller settings", ""]
    ssh = single.get("ssh")
    if ssh and ssh.get("no_pipelining"):
        off = ssh["no_pipelining"]
        out.append("- **Pipelining** (`[connection] pipelining = True` in ansible.cfg, or `ANSIBLE_PIPELINING=True`; it "
                   "needs `become_method: sudo`, not `su`, and no `requiretty` in sudoers): the one-target SSH rerun "
                   "took %s with it and %s without (%.2fx), the facts play %s and %s. For `docker exec` targets "
                   "the same setting applies; `become_method: su` cannot pipeline at all." % (
                       _seconds(ssh["rerun_seconds"]), _seconds(off["rerun_seconds"]),
                       off["rerun_seconds"] / ssh["rerun_seconds"], _seconds(ssh["facts_seconds"]),
                       _seconds(off["facts_seconds"])))
    elif ssh:
        out.append("- **Pipelining** (`[connection] pipelining = True` in ansible.cfg, or `ANSIBLE_PIPELINING=True`; it "
                   "needs `become_method: sudo`, not `su`, and no `requiretty` in sudoers): every row above ran with it; "
                   "this run did not measure it off (`--skip-no-pipelining`).")
    if fleet:
        out.append("- **Forks** at least the number of targets (`--forks` or `[defaults] forks`; ansible's default "
                   "is 5): the fleet part ran with %d forks; with fewer, targets wait in batches." % fleet["forks"])
    variants = (ssh or {}).get("variants") or {}
    cache = variants.get("fact_cache")
    if cache:
        out.append("- **Fact caching** (`[defaults] gathering = smart`, `fact_caching = jsonfile`, `fact_caching_connection "
                   "= DIR`, `fact_caching_timeout`): with a warm cache the one-target SSH rerun took %s instead of %s "
                   "(%.1fx the plain facts play instead of %.1fx): site.yml needs no cache, its preflight play "
                   "returns the facts the roles read in the round trip it makes anyway. With a cache, facts "
                   "are as old as the cache (`fact_caching_timeout`, or `--flush-cache`): a host whose release, "
                   "architecture or virtualization changed needs a flush. The collection's ansible.cfg leaves it off "
                   "(Molecule reuses instance names, whose cached facts would be another container's)." % (
                       _seconds(cache["rerun_seconds"]), _seconds(ssh["rerun_seconds"]),
                       cache["rerun_seconds"] / ssh["facts_seconds"], ssh["ratio"]))
    else:
        out.append("- **Fact caching** (`[defaults] fact_caching = jsonfile`, `gathering = smart`): not measured by this run.")
    mitogen = variants.get("mitogen")
    if mitogen:
        out.append("- **Mitogen** (optional, never a dependency: `pip install mitogen`, then `strategy_plugins = "
                   "DIR/ansible_mitogen/plugins/strategy` and `strategy = mitogen_linear`; it keeps one Python "
                   "interpreter per target and sends modules over it): the one-target SSH rerun took %s (%.1fx its "
                   "own facts play of %s, %.1fx the plain facts play), against %s without it. Caveats: it replaces "
                   "ansible's connection and become layers (so `pipelining` does not apply), follows ansible-core "
                   "releases with a delay, and a failure inside it is reported as Mitogen's, not the module's." % (
                       _seconds(mitogen["rerun_seconds"]), mitogen["ratio"], _seconds(mitogen["facts_seconds"]),
                       mitogen["rerun_seconds"] / ssh["facts_seconds"], _seconds(ssh["rerun_seconds"])))
    else:
        out.append("- **Mitogen** (an optional strategy plugin that keeps a Python interpreter on each target): not "
                   "measured by this run; the collection does not depend on it.")
    out.append("")
    return out


def render_markdown(results):
    machine = results["machine"]
    out = [
        "# Performance",
        "",
        "<!-- Generated by bench/run.py from .cache/bench/results.json; rerun `make bench` to refresh. -->",
        "",
        "Numbers from `bench/run.py` (`make bench` runs every part; each section names the command that "
        "measured it), on one machine: %d cores (%s), %s GiB RAM, %s, "
        "kernel %s, Docker %s host engine, %s, Python %s." % (
            machine["cpus"], machine["cpu_model"] or "unknown CPU", machine["memory_gib"], machine["os"],
            machine["kernel"], machine["docker"], machine["ansible"], machine["python"]),
        "The targets are privileged containers (`%s` with openssh-server and sudo added, systemd PID 1) on that "
        "engine, reached as users reach real hosts, over SSH as a login user with `become_method: sudo`, and "
        "with `docker exec` (`community.docker.docker`, also with sudo); pipelining is on for both "
        "(`ANSIBLE_PIPELINING=True`) unless a row says otherwise. Every target shares the same 2 cores with the "
        "controller. Other checkouts' work ran on the same engine at the same time; each section gives the load "
        "it saw. Treat the numbers as ratios and trends, not as absolute timings for real hardware." % TARGET_IMAGE,
        "",
    ]
    single = results.get("single")
    if single:
        out += _render_single(single)
    fleet = results.get("fleet")
    if fleet:
        out += _render_fleet(fleet)
    if single or fleet:
        out += _render_settings(single or {}, fleet)
    harbor = results.get("harbor")
    if harbor:
        out += [
            "## harbor_job_info on synthetic jobs",
            "",
            "`bench/harbor_summary.py`: synthetic Harbor 0.25 job directories (trial result.json/config.json "
            "copied from real runs, rewards, exceptions and token counts filled in). harbor_job_info's summary "
            "(`module_utils/_harbor_results.summarize_job`) with `details: false` (counters and pass@1 from the "
            "job-level result.json; a running job also opens the result.json of trials it does not list) and with "
            "`details: true` (the module's default: every trial's result.json, for tasks, tokens and durations), "
            "against a faithful re-implementation of the seed's summarize algorithm, which reads only the job-level "
            "result.json and config.json (`seed_summary`). Each in a fresh interpreter, best of %d for time, peak "
            "Python heap from tracemalloc, warm page cache. All three and a count of every trial's result.json must "
            "agree on trials, passes and errors or the benchmark stops. A ratio above 1 means harbor_job_info's "
            "summary is slower than the seed's." % results["harbor_repeat"],
            "",
            harbor_summary.markdown_table(harbor).rstrip("\n"),
            "",
        ]
        if all("playbook_ping_seconds" in row for row in harbor):
            out += [
                "The second table is the whole module as users run it: `ansible-playbook` (local connection, best of "
                "%d) of one harbor_job_info task on the job, next to a play of one `ansible.builtin.ping`: the "
                "difference from the ping play is what the summary adds to a run; where it is within the noise of "
                "the shared machine, starting ansible-playbook and the module dominates." % results["harbor_repeat"],
                "",
            ]
        out += [
            "%s%s" % ("%s (before and after). " % _load_note([{"load_before": results["harbor_load"][0],
                                                               "load_after": results["harbor_load"][1]}])
                      if results.get("harbor_load") else "",
                      _measured({"measured_at": results["harbor_measured_at"], "command": results["harbor_command"],
                                 "commit": results.get("harbor_commit")})),
            "",
        ]
    agents = results.get("agents")
    if agents:
        out += [
            "## Real agents offline: baked toolchain vs Harbor's own install",
            "",
            "The real mini-swe-agent 2.4.6 and Qwen Code 0.24.4 on the sample task hello-pass, with the scripted model "
            "endpoint on the trials' only network (internal: no route to the Internet, as on a mirror-only site). "
            "`baked`: the toolchains of `make agent-toolchain-tars`, mounted read-only (`agent_toolchains: required`, "
            "%d attempts each, one trial at a time); `stock`: Harbor's own install in the trial "
            "(`agent_toolchains: off`, one attempt each). Seconds are Harbor's own phase timestamps from each "
            "trial's result.json (median per agent); total is the trial's started_at to finished_at." % agents["attempts"],
            "",
            "| agent | install | trials | environment setup | agent setup | agent execution | verifier | trial total | outcome |",
            "|---|---|---:|---:|---:|---:|---:|---:|---|",
        ]
        for mode in ("baked", "stock"):
            for agent, row in sorted(agents[mode].items()):
                cells = ["%.1f s" % row[key] if row[key] is not None else "-" for key in
                         ("environment_setup", "agent_setup", "agent_execution", "verifier", "total")]
                out.append("| %s | %s | %d | %s | %s |" % (agent, mode, row["trials"], " | ".join(cells),
                                                           ", ".join(row["outcomes"])))
        out += ["", "Whole part: %.0f s. %s%s" % (agents["wall_seconds"], _part_load(agents), _measured(agents)), ""]
    task_sync = results.get("task_sync")
    if task_sync:
        out += [
            "## Task sync: task_sync vs the file-by-file copy",
            "",
            "`bench/task_sync_bench.py`: a tree of small files in Harbor-shaped task directories (%d files per task, "
            "0.2-4 KiB each) put on a plain container over `community.docker.docker` by `bench/task_sync.yml`, "
            "once with `aisbench.agent_runtime.task_sync` (nightly.yml's way now) and once with "
            "`ansible.builtin.copy` of the directory (nightly.yml's way before), each into an empty destination, "
            "then rerun unchanged. Wall time of the whole `ansible-playbook` run, so each row includes what every "
            "play pays to start and connect: the baseline row, a play of one `ansible.builtin.ping`." % (
                task_sync_bench.FILES_PER_TASK),
            "",
            task_sync_bench.markdown(task_sync),
            "",
            "%s. %s" % (_load_note([task_sync[m][k] for m in ("task_sync", "copy") if m in task_sync
                                    for k in ("first", "rerun")] + [task_sync["ping"]]), _measured(task_sync)),
            "",
        ]
    shard = results.get("shard")
    if shard:
        out += shard_bench.render(shard, _part_load(shard) + _measured(shard))
    overhead = results.get("trial_overhead")
    if overhead:
        out += trial_overhead.render(overhead, _part_load(overhead) + _measured(overhead))
    throughput = results.get("trial_throughput")
    if throughput:
        out += trial_throughput.render(throughput, _part_load(throughput) + _measured(throughput))
    toolchains = results.get("toolchains")
    if toolchains:
        out += toolchains_bench.render(toolchains, _part_load(toolchains) + _measured(toolchains))
    out += [
        "## How to read them",
        "",
        "- **rerun / facts**: what an idempotent site.yml costs beyond the connection and fact gathering every "
        "play pays anyway. The rerun still checks everything (installed packages, daemon.json against the "
        "controller's render, the engine's state, the image, binfmt state) without changing anything: `changed` "
        "must be 0. docker_engine reads its whole state in one module run and runs the template, dockerd's "
        "validation and the engine waits only when something differs; that read also covers runtime_image's image "
        "and archive, so runtime_image decides from it when docker_engine changed nothing. runtime_container reads "
        "its host directories and files (against the controller's digests), the container, its image and the socket "
        "in one module run (`runtime_container_state`) and compares, writes, starts or waits only for what differs "
        "(an unchanged container the engine's HEALTHCHECK calls healthy is taken as it is); baked_images reads every "
        "image and toolchain volume it decides from in one (`engine_objects_info`). The whole rerun makes four "
        "module runs on the target (preflight, docker_engine, runtime_container, baked_images), the subset two, "
        "the facts play one; the rest of its time is ansible-core's fixed cost per task (a worker process per task "
        "and host, skipped tasks included), which the task counts in the notes above show.",
        "- **per target**: with forks ≥ targets the hosts run in parallel, so the per-target time should fall as "
        "the fleet grows until the CPU is saturated: here the controller and every target share 2 cores, so the "
        "fleet rerun's wall time cannot fall below its CPU seconds (controller + targets, from the cgroups) over 2; "
        "on real hosts the targets' work runs on their own CPUs and only the controller's share grows. "
        "**machine CPU busy** is the whole machine's CPU time (root cgroup, other checkouts' work included) over "
        "2 cores × the wall time.",
        "- **site.yml's facts**: the preflight play's one module run (`preflight_checks`) also returns the `min` and "
        "`virtual` subsets, what the roles read, from Ansible's own fact collectors; the provisioning play gathers "
        "none of its own. The facts play, the baseline, gathers ansible's default (all subsets), as a bare play does.",
        "- **first run**: dominated by installing the .deb files and loading the runtime image into the target's "
        "engine; it depends on disk and network far more than on the collection.",
        "- **harbor_job_info time**: with `details: false` a finished job is summarized from Harbor's job-level "
        "result.json alone, as the seed's algorithm does; harbor_job_info also rebuilds every trial's outcome from "
        "the trial names listed there (for multi-key rewards and per-task outcomes) and checks them against "
        "Harbor's counters, which is why it is slower than the seed's algorithm, not faster. A running job also "
        "scans the job directory and opens the result.json of trials not recorded (here the 5% still running, which "
        "have none yet). `details: true`, the module's default, opens every trial's result.json.",
        "- **task sync**: the file-by-file copy costs several round trips per file, so its time grows with the file "
        "count (`--task-sync-copy-files` keeps it short); task_sync's first run grows with the bytes (one archive), "
        "its unchanged rerun is one module run after hashing the tree on the controller: compare it with the "
        "one-ping baseline, which every play over that connection pays.",
        "- **per-trial overhead**: everything in a trial but its agent and verifier, from Harbor's own timestamps. "
        "The probes are the docker and docker compose commands a trial's environment runs, timed one by one in the "
        "same runtime container: their sum is the floor Harbor's Docker environment can reach on that engine; the "
        "load of the shared machine stretches every one of them.",
        "- **trial throughput**: the concurrency Harbor runs trials at in one runtime container against what the "
        "machine can do: once the cores are busy, more concurrency makes every trial longer, not the job shorter; "
        "the CPU seconds per trial (from the container's cgroup) set the ceiling, cores × 60 over them.",
        "- **harbor_job_info memory**: peak Python heap (tracemalloc), not the RSS. All three hold the parsed "
        "job-level file; harbor_job_info also holds the map of every trial's outcome (and with `details: true` "
        "every trial's record), so its peak is several times the seed's.",
        "",
    ]
    return "\n".join(out)


# ---------------------------------------------------------------------------- main

def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", default="1,4,8", help="fleet sizes, comma-separated (default: 1,4,8)")
    parser.add_argument("--connections", default="ssh,docker",
                        help="connections of the single-target part: ssh (SSH + sudo), docker (docker exec + sudo)")
    parser.add_argument("--fleet-connection", default="ssh", choices=CONNECTIONS, help="connection of the fleet part")
    parser.add_argument("--skip-no-pipelining", action="store_true",
                        help="skip the single-target SSH rerun and facts play with pipelining off")
    parser.add_argument("--fact-cache", action="store_true",
                        help="also measure the reruns with a warm jsonfile fact cache (gathering=smart)")
    parser.add_argument("--mitogen", default="",
                        help="also measure the reruns and facts plays with Mitogen's linear strategy from this directory "
                             "(pip install --target DIR mitogen); optional, never a dependency")
    parser.add_argument("--tags", default="", help="site.yml --tags for the single-target part (default: none)")
    parser.add_argument("--skip-tags", default="",
                        help="site.yml --skip-tags for the single-target part (default: none, the whole play as users "
                             "run it)")
    parser.add_argument("--subset-skip-tags", default="runtime_container,baked_images",
                        help="also rerun site.yml with these --skip-tags in the same rounds, the subset earlier "
                             "benchmarks measured (default: runtime_container,baked_images; empty: not measured)")
    parser.add_argument("--fleet-tags", default="preflight,host", help="site.yml --tags for the fleet part")
    parser.add_argument("--forks", type=int, default=10, help="ansible forks (the fleet uses at least its size)")
    parser.add_argument("--repeat", type=int, default=2, help="idempotent reruns and facts plays per case (best kept)")
    parser.add_argument("--harbor-sizes", default="1000,10000,100000", help="synthetic trial counts")
    parser.add_argument("--harbor-repeat", type=int, default=3, help="time runs per harbor case (best kept)")
    parser.add_argument("--skip-harbor-playbook", action="store_true",
                        help="time harbor_job_info's summary only, not the whole module through ansible-playbook")
    parser.add_argument("--skip-single", action="store_true")
    parser.add_argument("--skip-fleet", action="store_true")
    parser.add_argument("--skip-harbor", action="store_true")
    parser.add_argument("--skip-agents", action="store_true")
    parser.add_argument("--skip-task-sync", action="store_true")
    parser.add_argument("--task-sync-files", type=int, default=3000, help="files for task_sync (default: 3000)")
    # The copy costs several round trips per file (8 s a file on this loaded machine): 3,000 would take hours.
    parser.add_argument("--task-sync-copy-files", type=int, default=300,
                        help="files for the file-by-file copy (default: 300; 0 skips it); its time grows per file")
    parser.add_argument("--skip-shard", action="store_true")
    parser.add_argument("--shard-targets", default="1,2,3", help="target counts of the shard part (default: 1,2,3)")
    parser.add_argument("--shard-attempts", type=int, default=2, help="attempts per task and agent (default: 2)")
    parser.add_argument("--skip-toolchains", action="store_true")
    parser.add_argument("--images-dir", default="/var/tmp/aisbench-images",
                        help="the local image tars (make images runtime-image-tar) the toolchains part's registry holds")
    parser.add_argument("--skip-trial-overhead", action="store_true")
    parser.add_argument("--overhead-rounds", type=int, default=3,
                        help="trial-overhead rounds; each runs one trial of each task on each engine (default: 3)")
    parser.add_argument("--overhead-big-mb", type=int, default=1024,
                        help="random data in the big image, MiB (default: 1024; vfs stores it once per layer)")
    parser.add_argument("--overhead-big-layers", type=int, default=20, help="RUN layers of the big image (default: 20)")
    parser.add_argument("--overhead-probe-repeat", type=int, default=2,
                        help="runs of the docker/compose probes per engine and image (default: 2)")
    parser.add_argument("--skip-trial-throughput", action="store_true")
    parser.add_argument("--throughput-concurrency", default="1,8,32",
                        help="trial-throughput: concurrencies, one Harbor job each (default: 1,8,32)")
    parser.add_argument("--throughput-trials", type=int, default=48,
                        help="trial-throughput: trials per concurrency, rounded up to a multiple of its 3 tasks "
                             "(default: 48: the whole part took 10 min on this 2-core machine, 6.5 min with 33)")
    parser.add_argument("--throughput-big-mb", type=int, default=256,
                        help="trial-throughput: random data in the big task's image, MiB (default: 256)")
    parser.add_argument("--throughput-big-layers", type=int, default=8,
                        help="trial-throughput: RUN layers of the big task's image (default: 8)")
    parser.add_argument("--skip-throughput-trace", action="store_true",
                        help="trial-throughput: no traced job (every docker CLI run timed) at the highest concurrency")
    parser.add_argument("--skip-throughput-variant", action="store_true",
                        help="trial-throughput: no side-by-side jobs with Go's default GOGC in a second runtime container")
    parser.add_argument("--agent-attempts", type=int, default=2, help="baked trials per agent (default: 2)")
    parser.add_argument("--output", default=os.path.join(ROOT, "docs", "performance.md"),
                        help="Markdown report, or a JSON copy of the results if the path ends in .json")
    parser.add_argument("--render-only", action="store_true", help="rewrite --output from the results file")
    parser.add_argument("--results", default=RESULTS,
                        help="results file, read first and updated after each part (default: .cache/bench/results.json)")
    parser.add_argument("--keep-targets", action="store_true", help="leave the target containers running")
    parser.add_argument("--name-prefix", default=PREFIX,
                        help="prefix of the target containers' names (default: %s); the bench removes its own" % PREFIX)
    parser.add_argument("--debs-cache", default="/var/tmp/aisbench-bench-debs")
    parser.add_argument("--runtime-image-tar", default="/var/tmp/aisbench-images/agent-runtime.tar")
    parser.add_argument("--runtime-image-tag", default="0.26.0", help="tag of the image in --runtime-image-tar")
    args = parser.parse_args(argv)
    args.hosts = sorted({int(size) for size in args.hosts.split(",") if size.strip()})
    args.connections = [name.strip() for name in args.connections.split(",") if name.strip()]
    unknown = set(args.connections) - set(CONNECTIONS)
    if unknown:
        parser.error("--connections: unknown %s (choose from %s)" % (", ".join(sorted(unknown)), ", ".join(CONNECTIONS)))
    args.harbor_sizes = [int(size) for size in args.harbor_sizes.split(",") if size.strip()]
    args.throughput_concurrency = sorted({int(size) for size in args.throughput_concurrency.split(",") if size.strip()})
    if not args.throughput_concurrency or min(args.throughput_concurrency) < 1:
        parser.error("--throughput-concurrency: one or more concurrencies of at least 1")
    return args


def write_output(path, results):
    with open(path, "w") as handle:
        if path.endswith(".json"):
            json.dump(results, handle, indent=2)
        else:
            handle.write(render_markdown(results))
    log("wrote %s" % path)


def _raise_interrupt(signum, _frame):
    raise KeyboardInterrupt("signal %d" % signum)


def main(argv=None):
    global PREFIX  # pylint: disable=global-statement
    args = parse_args(argv)
    PREFIX = args.name_prefix
    previous = {}
    if os.path.exists(args.results):
        with open(args.results) as handle:
            previous = json.load(handle)
    if args.render_only:
        write_output(args.output, previous)
        return 0

    signal.signal(signal.SIGTERM, _raise_interrupt)  # removes the targets like Ctrl-C does
    command = "python bench/run.py " + shlex.join(sys.argv[1:] if argv is None else argv)
    commit = git_commit()  # at the start: the code every part below measures
    results = dict(previous, machine=machine_info())
    workdir = os.path.join(ROOT, ".cache", "bench")
    needs_targets = not (args.skip_single and args.skip_fleet)
    debs = ensure_offline_debs(args.debs_cache) if needs_targets else []
    if needs_targets and not os.path.isfile(args.runtime_image_tar) and not args.skip_single:
        raise SystemExit("%s is missing: run `make runtime-image-tar` first" % args.runtime_image_tar)

    def save():
        os.makedirs(os.path.dirname(os.path.abspath(args.results)), exist_ok=True)
        with open(args.results, "w") as handle:
            json.dump(results, handle, indent=2)

    # The parts users feel most (the rerun, the fleet, trials per minute) first: a run cut short keeps them.
    image, key = ensure_ssh_image() if needs_targets else (None, None)
    if not args.skip_single:
        single = {}
        for connection in args.connections:
            single[connection] = dict(bench_single(args, debs, workdir, connection, image, key), measured_at=now(),
                                      command=command, commit=commit)
            results["single"] = single
            save()
    if not args.skip_fleet:
        results["fleet"] = dict(bench_fleet(args, debs, workdir, image, key), measured_at=now(), command=command,
                                commit=commit)
        save()
    if not args.skip_trial_throughput:
        before = load_snapshot()
        rows = trial_throughput.run_benchmark(os.path.join("/var/tmp", "aisbench-bench-throughput"),
                                              args.throughput_concurrency, args.throughput_trials,
                                              args.throughput_big_mb, args.throughput_big_layers, log,
                                              trace=not args.skip_throughput_trace,
                                              variant=not args.skip_throughput_variant)
        results["trial_throughput"] = dict(rows, measured_at=now(), command=command, commit=commit,
                                           load=[before, load_snapshot()])
        save()
    if not args.skip_harbor:
        log("harbor_job_info: sizes %s" % args.harbor_sizes)
        before = load_snapshot()
        rows = harbor_summary.run_benchmark(args.harbor_sizes, args.harbor_repeat, log=log,
                                            playbook=not args.skip_harbor_playbook)
        results.update(harbor=rows, harbor_repeat=args.harbor_repeat, harbor_measured_at=now(), harbor_command=command,
                       harbor_commit=commit,
                       harbor_load=[before, load_snapshot()])
        save()
    if not args.skip_agents:
        before = load_snapshot()
        rows = agents_bench.run_benchmark(os.path.join("/var/tmp", "aisbench-bench-agents"), args.agent_attempts, log)
        results["agents"] = dict(rows, measured_at=now(), command=command, commit=commit,
                                 load=[before, load_snapshot()])
        save()
    if not args.skip_task_sync:
        rows = task_sync_bench.run_benchmark(os.path.join(workdir, "task-sync"), args.task_sync_files,
                                             args.task_sync_copy_files, run_playbook, docker, log)
        results["task_sync"] = dict(rows, measured_at=now(), command=command, commit=commit)
        save()
    if not args.skip_shard:
        sizes = sorted({int(size) for size in args.shard_targets.split(",") if size.strip()})
        before = load_snapshot()
        rows = shard_bench.run_benchmark(os.path.join("/var/tmp", "aisbench-bench-shard"), sizes, args.shard_attempts, log)
        results["shard"] = dict(rows, measured_at=now(), command=command, commit=commit,
                                load=[before, load_snapshot()])
        save()
    if not args.skip_trial_overhead:
        before = load_snapshot()
        rows = trial_overhead.run_benchmark(os.path.join("/var/tmp", "aisbench-bench-overhead"), args.overhead_rounds,
                                            args.overhead_big_mb, args.overhead_big_layers, log,
                                            probe_repeat=args.overhead_probe_repeat)
        results["trial_overhead"] = dict(rows, measured_at=now(), command=command, commit=commit,
                                         load=[before, load_snapshot()])
        save()
    if not args.skip_toolchains:
        before = load_snapshot()
        rows = toolchains_bench.run_benchmark(args.images_dir, args.runtime_image_tag, run_playbook, log)
        results["toolchains"] = dict(rows, measured_at=now(), command=command, commit=commit,
                                     load=[before, load_snapshot()])
        save()

    print(render_markdown(results))
    write_output(args.output, results)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        log("interrupted; targets removed")
        sys.exit(130)
