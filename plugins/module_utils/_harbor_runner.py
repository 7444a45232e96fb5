# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0 (see LICENSE)
"""Submit, find, signal and clean up Harbor jobs (standard library only).

Harbor runs either on the target itself or inside a runtime container reached with
``docker exec``. Every path handed to Harbor is a path as Harbor sees it; the module reads
the same files through the target's view of the jobs directory (the collection mounts it
at the same path in the runtime container).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import errno
import fcntl
import json
import os
import re
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import time

from ansible_collections.aisbench.agent_runtime.plugins.module_utils._agent_toolchains import (
    LABEL_AGENT,
    parse_toolchain_volumes,
)
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._atomic_file import atomic_write
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._harbor_results import CANCELLED_ERROR, DEFAULT_AGENT

# One safe path component: no separators, no "..", no spaces, no leading "-" or ".".
JOB_NAME_PATTERN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*\Z")
JOB_NAME_MAX = 128
STATE_DIR_NAME = ".harbor_job"

# Runs where Harbor runs: records the shell's pid (the exec keeps it for Harbor) so the
# module can find and signal the job later, and sends Harbor's output to a log file so the
# process needs no terminal or pipe that outlives the module.
DETACH_SCRIPT = 'pidfile=$1; log=$2; shift 2; echo "$$" > "$pidfile"; exec "$@" >> "$log" 2>&1 < /dev/null'
DETACH_ARGV0 = "harbor_job"

# Lists the processes of the runtime container: "PID<US>arg0<US>arg1..." per line.
PROCESS_LIST_SCRIPT = (
    'for d in /proc/[0-9]*; do [ -r "$d/cmdline" ] || continue; '
    'printf "%s\\037" "${d#/proc/}"; tr "\\000" "\\037" < "$d/cmdline" 2>/dev/null; echo; done'
)


class HarborJobError(Exception):
    """A problem reported to the user as is (bad input, Harbor failure)."""


def job_name_problem(name):
    """Why name is not one safe token, or None when it is fine."""
    if not isinstance(name, str) or not name:
        return "the job name is empty"
    if len(name) > JOB_NAME_MAX:
        return "the job name is longer than %d characters" % JOB_NAME_MAX
    if ".." in name:
        return "the job name contains '..'"
    if not JOB_NAME_PATTERN.match(name):
        return ("the job name must be one token of letters, digits, '.', '_' and '-' "
                "that does not start with '-' or '.' (no '/', no spaces)")
    return None


def default_job_name(prefix, now=None):
    return "%s-%s" % (prefix, time.strftime("%Y%m%d-%H%M%S", time.gmtime(now)))


# --- matrix (job config) -----------------------------------------------------------------

def dataset_label(entry):
    if not isinstance(entry, dict):
        return str(entry)
    for field in ("path", "name"):
        if entry.get(field):
            return str(entry[field])
    return json.dumps(entry, sort_keys=True)


def filter_matrix(config, datasets=None, agents=None):
    """Copy of config keeping only the selected datasets and agents.

    datasets: substring match on each dataset's path or name; agents: exact match on the
    agent name (a config without ``agents`` runs Harbor's default, the oracle agent).
    The input is never modified. An empty selection raises HarborJobError.
    """
    if not isinstance(config, dict):
        raise HarborJobError("the job config must be a mapping, got %s" % type(config).__name__)
    result = copy.deepcopy(config)
    if datasets:
        available = result.get("datasets")
        if not isinstance(available, list) or not available:
            raise HarborJobError("the datasets filter %s needs a config with a 'datasets' list" % (list(datasets),))
        kept = []
        for entry in available:
            haystacks = [str(entry.get(f)) for f in ("path", "name") if isinstance(entry, dict) and entry.get(f)]
            if any(needle in hay for needle in datasets for hay in haystacks):
                kept.append(entry)
        if not kept:
            raise HarborJobError(
                "no dataset matches the datasets filter %s; the config has: %s"
                % (list(datasets), ", ".join(dataset_label(e) for e in available))
            )
        result["datasets"] = kept
    if agents:
        available = result.get("agents")
        if not isinstance(available, list) or not available:
            available = [{"name": DEFAULT_AGENT}]
        kept = [entry for entry in available if isinstance(entry, dict) and (entry.get("name") or DEFAULT_AGENT) in agents]
        if not kept:
            raise HarborJobError(
                "no agent matches the agents filter %s; the config has: %s"
                % (list(agents), ", ".join(str(e.get("name") or DEFAULT_AGENT) if isinstance(e, dict) else str(e) for e in available))
            )
        result["agents"] = kept
    return result


TRIAL_NETWORK_KEY = "model"


def trial_network_overlay(network, only=True):
    """Docker Compose overlay that puts a trial's main container on the (existing) Docker network NETWORK: as its only
    network (only=True: no route anywhere else when NETWORK is internal), or beside the trial's default network.
    The key is the one docs/agents.md's overlay uses, so a matrix that names that overlay too merges into the same."""
    networks = [TRIAL_NETWORK_KEY] if only else ["default", TRIAL_NETWORK_KEY]
    return {"services": {"main": {"networks": networks}},
            "networks": {TRIAL_NETWORK_KEY: {"external": True, "name": network}}}


def parse_config_text(text, source):
    """Parse a JSON or YAML job config; YAML needs PyYAML (None when it is missing)."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        import yaml  # pylint: disable=import-outside-toplevel
    except ImportError:
        return None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise HarborJobError("cannot parse the job config %s: %s" % (source, exc))


# --- Harbor versions -----------------------------------------------------------------------

# The Harbor releases this collection is built and tested against (docs/harbor_modules.md, "Harbor versions"), with
# the name of their jobs command group. The runtime image's default is the last one.
SUPPORTED_HARBOR_VERSIONS = {"0.25.0": "job", "0.26.0": "job"}

# Run by Harbor's own interpreter (the shebang of its console script), so it needs no CLI start-up: the installed
# version and the agent names Harbor knows (harbor.models.agent.name is a plain enum).
HARBOR_PROBE = (
    "import importlib.metadata, json\n"
    "from harbor.models.agent.name import AgentName\n"
    "print(json.dumps({'version': importlib.metadata.version('harbor'), 'agents': sorted(a.value for a in AgentName)}))\n"
)
HARBOR_PROBE_SHELL = (
    'h=$(command -v "$1") || { echo "$1 not found" >&2; exit 127; }; '
    'IFS= read -r first < "$h" || exit 126; '
    'case $first in "#!"*python*) ;; *) echo "$h is not a Python console script (first line: $first)" >&2; exit 126;; esac; '
    'exec ${first#??} -c "$2"'
)


def harbor_version_problem(version):
    """Why this collection cannot drive Harbor VERSION, or None when it is supported."""
    if version in SUPPORTED_HARBOR_VERSIONS:
        return None
    return ("Harbor %s is not supported by this collection (supported: %s); build the runtime image with "
            "runtime_image_harbor_version set to one of them" % (version, ", ".join(SUPPORTED_HARBOR_VERSIONS)))


def parse_harbor_probe(text):
    """{'version', 'agents'} from HARBOR_PROBE's output, or None when it is not that."""
    for line in reversed((text or "").strip().splitlines()):
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict) and isinstance(data.get("version"), str) and isinstance(data.get("agents"), list):
            return {"version": data["version"], "agents": [str(agent) for agent in data["agents"]]}
    return None


def probe_harbor(runtime, harbor):
    """The Harbor release where runtime runs Harbor and the agent names it knows; HarborJobError when it cannot be
    read or is not supported."""
    runtime.require_executable("harbor_executable", harbor)
    rc, out, err = runtime.run(["sh", "-c", HARBOR_PROBE_SHELL, "sh", harbor, HARBOR_PROBE], check=False)
    facts = parse_harbor_probe(out) if rc == 0 else None
    if facts is None:
        raise HarborJobError("cannot tell which Harbor release %s is (rc=%d): %s; set harbor_version to its version"
                             % (harbor, rc, (err or out).strip()[-500:]))
    problem = harbor_version_problem(facts["version"])
    if problem:
        raise HarborJobError(problem)
    return facts


# --- commands ----------------------------------------------------------------------------

def harbor_cli_spelling(runtime, harbor):
    """``job`` or ``jobs`` as the Harbor CLI where runtime runs spells it (from ``harbor --help``)."""
    runtime.require_executable("harbor_executable", harbor)
    rc, out, err = runtime.run([harbor, "--help"], check=False)
    spelling = parse_cli_spelling(out + "\n" + err) if rc == 0 else None
    if spelling is None:
        raise HarborJobError("cannot tell Harbor's jobs command from '%s --help' (rc=%d): %s; set cli_spelling"
                             % (harbor, rc, (err or out).strip()[-500:]))
    return spelling


def config_through_harbor(runtime, harbor, spelling, path):
    """A YAML job config parsed by Harbor where it runs (``start --print-config``), for targets without PyYAML."""
    rc, out, err = runtime.run([harbor, spelling, "start", "-c", path, "--print-config"], check=False)
    start = out.find("{")
    if rc != 0 or start < 0:
        raise HarborJobError("cannot read the job config %s through Harbor: %s" % (path, (err or out).strip()[-1000:]))
    try:
        return json.JSONDecoder().raw_decode(out[start:])[0]
    except ValueError as exc:
        raise HarborJobError("Harbor printed an unreadable config for %s: %s" % (path, exc))


def parse_cli_spelling(help_text):
    """``job`` or ``jobs``: the jobs command group listed by ``harbor --help``."""
    commands = set()
    for line in help_text.splitlines():
        match = re.match(r"^[\s\u2502|]*([a-z][a-z0-9-]*)\s{2,}\S", line)
        if match:
            commands.add(match.group(1))
    if "job" in commands:
        return "job"
    if "jobs" in commands:
        return "jobs"
    return None


def start_command(harbor, spelling, config_path, name, jobs_dir, concurrency=None, env_file=None, extra_args=None):
    argv = [harbor, spelling, "start", "-c", config_path, "--job-name", name, "-o", jobs_dir, "-y", "-q"]
    if concurrency:
        argv += ["-n", str(concurrency)]
    if env_file:
        argv += ["--env-file", env_file]
    return argv + [str(arg) for arg in (extra_args or [])]


def resume_command(harbor, spelling, job_dir, retry_exceptions=None):
    argv = [harbor, spelling, "resume", "-p", job_dir]
    for exc_type in retry_types(retry_exceptions):
        argv += ["-f", exc_type]
    return argv


def retry_types(retry_exceptions):
    """Exception types whose trials a resume runs again; CancelledError always included."""
    types = [CANCELLED_ERROR]
    for exc_type in retry_exceptions or []:
        if exc_type not in types:
            types.append(str(exc_type))
    return types


def shell_join(argv):
    return " ".join(shlex.quote(str(arg)) for arg in argv)


def _normalize(path):
    return os.path.normpath(str(path)) if path else path


def _option_value(args, names):
    for index, arg in enumerate(args):
        for name in names:
            if arg == name and index + 1 < len(args):
                return args[index + 1]
            if arg.startswith(name + "="):
                return arg[len(name) + 1:]
    return None


def is_harbor_job_process(args, name, jobs_dir, job_dir):
    """Whether a process command line is Harbor working on this job (start or resume)."""
    if len(args) < 2 or args[1] == "-c":
        # "sh -c <detach script> ... harbor ...": the wrapper before its exec.
        return False
    head = [os.path.basename(arg) for arg in args[:2]]
    if "harbor" not in head:
        return False
    if "resume" in args:
        path = _option_value(args, ("-p", "--job-path"))
        return path is not None and _normalize(path) == _normalize(job_dir)
    if "start" in args or "run" in args:
        if _option_value(args, ("--job-name",)) != name:
            return False
        out = _option_value(args, ("-o", "--jobs-dir"))
        return out is None or _normalize(out) == _normalize(jobs_dir)
    return False


def harbor_job_of_process(args):
    """The job a process command line works on (``harbor job start --job-name NAME``, ``harbor job resume -p DIR``,
    ``harbor run``), or None when it is not Harbor working on a job."""
    if len(args) < 2 or args[1] == "-c":
        return None
    if "harbor" not in [os.path.basename(arg) for arg in args[:2]]:
        return None
    if "resume" in args:
        path = _option_value(args, ("-p", "--job-path"))
        return os.path.basename(_normalize(path)) if path else "(unnamed)"
    if "start" in args or "run" in args:
        return _option_value(args, ("--job-name",)) or "(unnamed)"
    return None


def parse_process_list(text):
    """[(pid, argv)] from the output of PROCESS_LIST_SCRIPT."""
    result = []
    for line in text.splitlines():
        fields = line.split("\x1f")
        if len(fields) >= 2 and fields[0].isdigit():
            result.append((int(fields[0]), [f for f in fields[1:] if f != ""]))
    return result


class Runtime:
    """Where Harbor runs: the target itself, or a container reached with docker exec."""

    def __init__(self, module, container=None, docker="docker"):
        self.module = module
        self.container = container
        self.docker = docker

    def wrap(self, argv, env_file=None, workdir=None, detach=False):
        """argv run where Harbor runs, as a command for the target."""
        if not self.container:
            return list(argv)
        prefix = [self.docker, "exec"]
        if detach:
            prefix.append("-d")
        if env_file:
            prefix += ["--env-file", env_file]
        if workdir:
            prefix += ["-w", workdir]
        return prefix + [self.container] + list(argv)

    def run(self, argv, check=True, env=None):
        rc, out, err = self.module.run_command(self.wrap(argv), environ_update=env)
        if check and rc != 0:
            raise HarborJobError("%s failed (rc=%d): %s" % (shell_join(self.wrap(argv)), rc, (err or out).strip()[-2000:]))
        return rc, out, err

    def check_container(self):
        if not self.container:
            return
        self.require_executable("docker_executable", self.docker)
        rc, out, err = self.module.run_command([self.docker, "inspect", "-f", "{{.State.Running}}", self.container])
        if rc != 0:
            raise HarborJobError("runtime container %s not found: %s" % (self.container, (err or out).strip()))
        if out.strip() != "true":
            raise HarborJobError("runtime container %s is not running" % self.container)

    def require_executable(self, option, path):
        """Fail early when an executable the target runs itself is missing."""
        if self.container and option == "harbor_executable":
            return
        found = os.access(path, os.X_OK) if "/" in path else shutil.which(path)
        if not found:
            raise HarborJobError("%s %s not found on the target" % (option, path))

    def processes(self):
        """[(pid, argv)] of the processes where Harbor runs."""
        if self.container:
            rc, out, err = self.module.run_command(self.wrap(["sh", "-c", PROCESS_LIST_SCRIPT]))
            if rc != 0:
                raise HarborJobError("cannot list processes in %s: %s" % (self.container, (err or out).strip()))
            return parse_process_list(out)
        result = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open("/proc/%s/cmdline" % entry, "rb") as handle:
                    raw = handle.read()
            except OSError:
                continue
            if raw:
                result.append((int(entry), [a.decode("utf-8", "replace") for a in raw.split(b"\0") if a]))
        return result

    def job_pids(self, name, jobs_dir, job_dir):
        return sorted(pid for pid, args in self.processes() if is_harbor_job_process(args, name, jobs_dir, job_dir))

    def send_signal(self, pid, sig):
        if self.container:
            name = "KILL" if sig == signal.SIGKILL else "TERM"
            self.run(["sh", "-c", 'kill -s %s "$1" 2>/dev/null || true' % name, "sh", str(pid)], check=False)
            return
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass

    def spawn(self, argv, pidfile, logfile, env_file=None, workdir=None, env=None):
        """Start argv detached where Harbor runs; it writes its pid to pidfile."""
        script = ["sh", "-c", DETACH_SCRIPT, DETACH_ARGV0, pidfile, logfile] + list(argv)
        if self.container:
            full = self.wrap(script, env_file=env_file, workdir=workdir, detach=True)
            rc, out, err = self.module.run_command(full)
            if rc != 0:
                raise HarborJobError("cannot start Harbor in %s: %s" % (self.container, (err or out).strip()))
            return full
        child_env = dict(os.environ)
        # Harbor's usage telemetry is off unless the task's environment sets HARBOR_TELEMETRY (the runtime container
        # sets it from runtime_container_harbor_telemetry).
        child_env.setdefault("HARBOR_TELEMETRY", "0")
        child_env.update(env or {})
        # A new session and no inherited descriptors: the job outlives the module and
        # Ansible does not wait for it.
        subprocess.Popen(  # pylint: disable=consider-using-with
            script, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            close_fds=True, start_new_session=True, cwd=workdir or None, env=child_env,
        )
        return script

    def toolchains(self):
        """The baked agent toolchains on the engine Harbor's trials run on (from its volumes' labels)."""
        docker = self.docker if not self.container else "docker"
        rc, out, err = self.run([docker, "volume", "ls", "--quiet", "--filter", "label=" + LABEL_AGENT], check=False)
        if rc != 0:
            raise HarborJobError("cannot list the agent toolchain volumes: %s" % (err or out).strip())
        names = sorted(set(out.split()))
        if not names:
            return []
        rc, out, err = self.run([docker, "volume", "inspect"] + names, check=False)
        try:
            volumes = json.loads(out) if rc == 0 else None
        except ValueError:
            volumes = None
        if not isinstance(volumes, list):
            raise HarborJobError("cannot read the agent toolchain volumes %s: %s" % (", ".join(names), (err or out).strip()[-500:]))
        return parse_toolchain_volumes(volumes)

    def compose_projects(self):
        argv = [self.docker if not self.container else "docker", "ps", "-a", "--filter", "label=com.docker.compose.project",
                "--format", '{{.Label "com.docker.compose.project"}}']
        rc, out, err = self.run(argv, check=False)
        if rc != 0:
            raise HarborJobError("cannot list trial containers: %s" % (err or out).strip())
        return sorted(set(line.strip() for line in out.splitlines() if line.strip()))

    def compose_down(self, project):
        # What Harbor itself runs when it deletes a trial environment.
        docker = self.docker if not self.container else "docker"
        self.run([docker, "compose", "-p", project, "down", "--rmi", "local", "--volumes", "--remove-orphans", "--timeout", "10"])


def compose_project_prefix(trial_name):
    """Harbor's Docker Compose project names for a trial start with this prefix."""
    name = trial_name.lower()
    if not re.match(r"^[a-z0-9]", name):
        name = "0" + name
    return re.sub(r"[^a-z0-9_-]", "-", name) + "__"


def trial_names(job_dir):
    try:
        return sorted(e.name for e in os.scandir(job_dir) if e.is_dir(follow_symlinks=False) and not e.name.startswith("."))
    except OSError:
        return []


def leftover_projects(projects, trials):
    prefixes = tuple(compose_project_prefix(t) for t in trials)
    if not prefixes:
        return []
    return [p for p in projects if p.startswith(prefixes)]


class JobFiles:
    """The module's own files for one job, next to Harbor's job directories.

    ``<jobs_dir>/.harbor_job/<name>/``: state.json (pid, command), harbor.pid,
    harbor.log, matrix.json (the filtered or inline config) and env (secrets, 0600).
    Harbor ignores the directory; harbor_job_info skips hidden directories.
    """

    def __init__(self, host_jobs_dir, jobs_dir, name):
        self.host_dir = os.path.join(host_jobs_dir, STATE_DIR_NAME, name)
        self.harbor_dir = os.path.join(jobs_dir, STATE_DIR_NAME, name)

    def host(self, filename):
        return os.path.join(self.host_dir, filename)

    def harbor(self, filename):
        return os.path.join(self.harbor_dir, filename)

    def ensure_dir(self):
        parent = os.path.dirname(self.host_dir)
        for path in (parent, self.host_dir):
            try:
                if not os.path.isdir(path):
                    os.makedirs(path, mode=0o700, exist_ok=True)
                os.chmod(path, 0o700)
            except OSError as exc:
                raise HarborJobError("cannot create the module's state directory %s: %s" % (path, exc.strerror or exc))

    def read_state(self):
        try:
            with open(self.host("state.json")) as handle:
                data = json.load(handle)
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def write_state(self, data):
        write_file(self.host("state.json"), json.dumps(data, indent=2, sort_keys=True) + "\n", 0o600)

    def read_pid(self):
        try:
            with open(self.host("harbor.pid")) as handle:
                text = handle.read().strip()
            return int(text) if text.isdigit() else None
        except OSError:
            return None

    def log_tail(self, lines=30):
        try:
            with open(self.host("harbor.log"), "rb") as handle:
                handle.seek(0, os.SEEK_END)
                size = handle.tell()
                handle.seek(max(size - 16384, 0))
                text = handle.read().decode("utf-8", "replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def remove(self, filename):
        try:
            os.unlink(self.host(filename))
            return True
        except FileNotFoundError:
            return False


class JobLock:
    """Exclusive lock on one job, so one job is never submitted (or resumed) twice at the same time.

    flock(2) on ``<host_jobs_dir>/.harbor_job/<name>/submit.lock``: it holds across processes and Ansible
    controllers that reach the same target, and the kernel drops it when its holder exits, however it ends.
    The holder writes who it is into the file for the message a waiting submitter gives.
    """

    FILENAME = "submit.lock"

    def __init__(self, files):
        self.files = files
        self.path = files.host(self.FILENAME)
        self.fd = None

    def holder(self):
        try:
            with open(self.path) as handle:
                data = json.load(handle)
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def acquire(self, timeout, poll=0.5):
        """Take the lock, waiting at most timeout seconds; returns the seconds waited. HarborJobError on timeout."""
        self.files.ensure_dir()
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600)
        started = time.time()
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
            if time.time() - started >= timeout:
                holder = self.holder()
                os.close(self.fd)
                self.fd = None
                raise HarborJobError(
                    "another run is still submitting this job (pid %s on %s since %s) and held %s for more than %d s; "
                    "nothing was started. Run again once it is done, or look at that run"
                    % (holder.get("pid", "?"), holder.get("host", "?"), holder.get("since", "?"), self.path, timeout))
            time.sleep(poll)
        os.ftruncate(self.fd, 0)
        os.write(self.fd, json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                                      "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}).encode())
        return round(time.time() - started, 1)

    def release(self):
        if self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None


def config_file_problem(path):
    """Why a config file on the target cannot be given to Harbor (None when it is a readable regular file).

    A FIFO or device is refused before anything opens it: reading one blocks (the module, then Harbor) for ever.
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None  # the caller decides what a missing file means
    except OSError as exc:
        return "cannot read it: %s" % (exc.strerror or exc)
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "it is a FIFO, not a regular file (reading it would block)"
    if stat.S_ISDIR(mode):
        return "it is a directory"
    return "it is not a regular file"


def write_file(path, text, mode):
    """Write text atomically with the given mode; True when the content changed."""
    try:
        with open(path, encoding="utf-8") as handle:
            if handle.read() == text:
                os.chmod(path, mode)
                return False
    except (OSError, UnicodeDecodeError):
        pass
    atomic_write(path, text, mode)
    return True
