#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: harbor_job
short_description: Submit, wait for, resume and cancel Harbor benchmark jobs
version_added: 0.1.0
description:
  - Runs a L(Harbor,https://pypi.org/project/harbor/) job from a job config (the "matrix") with
    C(harbor job start -c CONFIG --job-name NAME -o JOBS_DIR -y -q), either on the target (O(harbor_executable)) or
    inside the runtime container (O(container), through C(docker exec)).
  - Idempotent by O(name). A finished job is never submitted again; a running job is reported, never duplicated; an
    interrupted job (its directory exists, it is not finished and no Harbor process works on it) is resumed.
  - Harbor runs detached, with its output in a log file, so a job outlives the Ansible run. The module keeps its own
    small files (pid, command, log, the filtered config, the env file) in C(JOBS_DIR/.harbor_job/NAME/), beside
    Harbor's job directories; Harbor ignores that directory and M(aisbench.agent_runtime.harbor_job_info) skips it.
  - O(datasets) and O(agents) filter the config before submission (a substring of a dataset's path or name, the exact
    agent name). The filtered config is written to C(JOBS_DIR/.harbor_job/NAME/matrix.json); the given file is never
    modified.
  - Paths in O(jobs_dir) and O(config) are paths as seen where Harbor runs. The module reads the job's files through
    O(host_jobs_dir), the same directory as seen on the target (by default the same path, which is how the collection
    mounts it into the runtime container).
  - One job never runs twice. Submitting or resuming takes an exclusive lock on the job
    (C(flock) on C(JOBS_DIR/.harbor_job/NAME/submit.lock) on the target, so it holds across processes and Ansible
    controllers), looks at the job again under the lock, and starts Harbor only when no Harbor works on it. A second
    run that asks for the same job meanwhile waits for the lock (at most O(start_timeout) plus a minute) and then
    reports the running job with C(changed=false).
  - A job directory that cannot be read (a symlink loop, a cut or non-JSON C(result.json) or C(config.json), a FIFO
    in their place) is V(damaged) (RV(job_state)); the module never starts Harbor on it and fails saying why.
  - Supports check mode, which returns the exact command the module would run and changes nothing.
options:
  name:
    description:
      - The job name, also the name of its directory under O(jobs_dir).
      - One token of letters, digits, C(.), C(_) and C(-), at most 128 characters, not starting with C(-) or C(.);
        no C(/), no C(..), no spaces. Anything else is refused before anything happens.
      - Defaults to C(NAME_PREFIX-YYYYMMDD-HHMMSS) (UTC), which submits a new job on every run.
      - Required for O(state=resumed) and O(state=cancelled).
    type: str
  name_prefix:
    description: Prefix of the generated name when O(name) is not given.
    type: str
    default: job
  state:
    description:
      - V(started) submits the job (or resumes an interrupted one) and returns once Harbor has started it.
      - V(finished) does the same, then waits until the job's C(result.json) records C(finished_at). On O(timeout) the
        task fails and the job keeps running; the message says so and how to cancel it; its progress is in the
        failure result.
      - V(resumed) runs C(harbor job resume -p JOB_DIR) for an interrupted job, or for a finished one that has trials
        failed with one of O(retry_exceptions) (those trials run again; C(CancelledError) is always included), and
        returns once Harbor has started. A job that is running or has nothing to retry is left alone.
      - V(cancelled) sends SIGTERM to the Harbor process of the job, SIGKILL after O(cancel_grace_period), then removes
        the trial containers Harbor left behind (their Docker Compose projects).
    type: str
    choices: [started, finished, resumed, cancelled]
    default: finished
  config:
    description:
      - The job config, needed to submit a new job. Either a path to a YAML or JSON file as seen where Harbor runs, or
        the config itself as a mapping (the module writes it to C(matrix.json)).
      - A file is passed to Harbor untouched unless O(datasets) or O(agents) is set; then the module reads it on the
        target (JSON with the standard library, YAML with PyYAML when present, otherwise through
        C(harbor job start -c FILE --print-config) where Harbor runs).
      - Without filters the module still reads a file it finds on the target (always without O(container)) and refuses
        one that is not a JSON or YAML mapping before it writes anything (YAML is checked only when PyYAML is present).
    type: raw
  datasets:
    description: Keep only the config's datasets whose path or name contains one of these strings.
    type: list
    elements: str
    default: []
  agents:
    description: Keep only the config's agents with one of these names (no C(agents) key means Harbor's C(oracle)).
    type: list
    elements: str
    default: []
  jobs_dir:
    description:
      - Directory of Harbor's job directories, as seen where Harbor runs (C(-o)).
      - Required unless O(runtime) gives it (its C(jobs_dir)).
    type: str
  host_jobs_dir:
    description:
      - The same directory as seen on the target, where the module reads results and keeps its files.
      - Defaults to O(runtime)'s C(host_jobs_dir), else to O(jobs_dir).
    type: path
  container:
    description:
      - Name or ID of the running runtime container to run Harbor in, with C(docker exec). Without it Harbor runs on
        the target.
      - Defaults to O(runtime)'s C(container).
    type: str
  docker_executable:
    description: The docker CLI on the target (used with O(container)).
    type: str
    default: docker
  harbor_executable:
    description: The Harbor CLI where Harbor runs.
    type: str
    default: harbor
  cli_spelling:
    description:
      - The name of Harbor's jobs command group. V(auto) takes the one of the Harbor release that runs the job
        (C(job) for every supported release); older releases spelt it C(jobs).
    type: str
    choices: [auto, job, jobs]
    default: auto
  harbor_version:
    description:
      - The Harbor release that runs the job. It must be one this collection supports (0.25.0 or 0.26.0); any other
        refuses the job before anything is written or started, naming the supported ones.
      - V(auto) asks the Harbor of O(harbor_executable) where it runs (its own interpreter reads the installed
        package's version and the agent names it knows; no CLI start-up). A misspelled agent name in the config is
        then refused as an unknown agent, with the known names (see O(agent_toolchains)).
      - A version string skips that question (and the agent-name check).
      - A resume takes the same check before Harbor is started again.
    type: str
    default: auto
  concurrency:
    description: Trials that run at once (C(-n)); Harbor's default (or the config's) when not set.
    type: int
  extra_args:
    description: More arguments for C(harbor job start), for example C([-r, "2", --retry-include, AgentTimeoutError]).
    type: list
    elements: str
    default: []
  env:
    description:
      - Environment variables for Harbor, typically API keys. Never put on a command line and never logged.
      - Written to C(JOBS_DIR/.harbor_job/NAME/env) with mode 0600 (removed once the job is seen finished or
        cancelled) and passed with C(docker exec --env-file) (O(container)) or Harbor's C(--env-file) (on the target).
        C(harbor job resume) has no C(--env-file), so a resume on the target gets them in its process environment.
      - Values may not contain line breaks; on the target they may not contain C(${), which Harbor's env-file loader
        would expand.
    type: dict
    default: {}
  trial_network:
    description:
      - A Docker network on the engine that runs the trials (created beforehand, typically internal) that every
        trial's main container joins, through a Docker Compose overlay C(JOBS_DIR/.harbor_job/NAME/network-compose.json)
        added to the config's C(environment.extra_docker_compose). nightly.yml sets it to the model gateway's network.
    type: str
  trial_network_only:
    description:
      - V(true) makes O(trial_network) the main container's only network (an internal network then leaves no route anywhere
        else); V(false) keeps the trial's default network beside it.
    type: bool
    default: true
  agent_toolchains:
    description:
      - V(required) (the default) maps every agent of the config that Harbor would install inside each trial (all
        agents but C(oracle), C(nop) and C(import_path) agents) to the collection's Harbor class for its baked
        toolchain, read from the toolchain volumes on the engine that runs the trials (built by the baked_images
        role), and mounts those volumes
        read-only into the trial containers with a Docker Compose overlay. An agent without a toolchain (or without
        the version its C(kwargs.version) asks for) refuses the job before anything is written or started.
      - Agents keep the names Harbor gives them (C(mini-swe-agent), C(qwen-coder), C(aider), C(openhands), ...), in
        the config and in the results.
      - V(off) passes the agents to Harbor as they are, which installs them from the Internet in every trial.
    type: str
    choices: [required, "off"]
    default: required
  chdir:
    description: Working directory of Harbor, where relative paths in the config are resolved.
    type: str
  retry_exceptions:
    description: Exception types whose trials a resume runs again (C(-f)); C(CancelledError) is always included.
    type: list
    elements: str
    default: []
  timeout:
    description:
      - Seconds O(state=finished) waits for the job to finish (counted from the start of the task). At least 1;
        C(0) is refused before anything starts (to submit without waiting use O(state=started)).
    type: int
    default: 7200
  poll_interval:
    description: Seconds between two looks at the job's progress while waiting.
    type: int
    default: 10
  start_timeout:
    description:
      - Seconds to wait for a submitted or resumed job to start (Harbor writes its C(result.json)). At least 1.
      - When Harbor has not started the job by then (for example a config it needs longer to read), the module stops
        the Harbor process it started (SIGTERM, SIGKILL after O(cancel_grace_period)) and fails saying so.
    type: int
    default: 180
  cancel_grace_period:
    description: Seconds between SIGTERM and SIGKILL for O(state=cancelled); Harbor stops its trials in that time.
    type: int
    default: 90
notes:
  - The job directory layout and field names are those of Harbor 0.25 and 0.26 (C(result.json), C(config.json),
    C(lock.json)).
  - Harbor 0.25 does not always remove a trial's containers when it is stopped with SIGTERM; O(state=cancelled) removes
    the Docker Compose projects named after the job's trials, and so does a resume of an interrupted job.
  - Set C(LITELLM_LOCAL_MODEL_COST_MAP=True) in O(env) on hosts without Internet access, or Harbor spends several
    seconds per run trying to download a model price list.
  - With O(agent_toolchains=required) the module lists the toolchain volumes with the C(docker) CLI where Harbor runs
    (inside O(container), or on the target), so it sees the engine Harbor's trials use.
requirements:
  - Harbor (C(pip install harbor), Python 3.12 or later) where Harbor runs, with the Docker CLI and Docker Compose v2
    for Harbor's docker environment.
  - The Docker CLI on the target when O(container) is set.
  - C(sh) and C(/proc) where Harbor runs (Linux).
seealso:
  - module: aisbench.agent_runtime.harbor_job_info
author: aisbench maintainers (!UNKNOWN)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - aisbench.agent_runtime.runtime_contract
  - aisbench.agent_runtime.attributes
"""

EXAMPLES = r"""
- name: Run the nightly matrix in the runtime container and wait for it
  aisbench.agent_runtime.harbor_job:
    name: "nightly-{{ ansible_date_time.date }}"
    config: /opt/swebench/config/matrix.yaml
    datasets: [swebench-verified]
    agents: [openhands]
    jobs_dir: /opt/swebench/jobs
    container: agent-runtime
    concurrency: 8
    env:
      OPENAI_API_KEY: "{{ vault_openai_api_key }}"
    timeout: 43200
    poll_interval: 60
  register: nightly

- name: Submit a job from an inline config and return at once
  aisbench.agent_runtime.harbor_job:
    name: smoke
    state: started
    config:
      agents: [{name: oracle}]
      datasets: [{path: /opt/swebench/tasks/smoke}]
    jobs_dir: /opt/swebench/jobs
    harbor_executable: /opt/harbor/bin/harbor

- name: Resume it after a reboot, running again the trials that hit an agent timeout
  aisbench.agent_runtime.harbor_job:
    name: smoke
    state: resumed
    retry_exceptions: [AgentTimeoutError]
    jobs_dir: /opt/swebench/jobs
    harbor_executable: /opt/harbor/bin/harbor

- name: Cancel a job
  aisbench.agent_runtime.harbor_job:
    name: smoke
    state: cancelled
    jobs_dir: /opt/swebench/jobs
    harbor_executable: /opt/harbor/bin/harbor
"""

RETURN = r"""
name:
  description: The job name.
  returned: always
  type: str
  sample: nightly-2026-12-02
job_dir:
  description: The job directory as seen where Harbor runs.
  returned: always
  type: str
  sample: /opt/swebench/jobs/nightly-2026-12-02
host_job_dir:
  description: The job directory as seen on the target.
  returned: always
  type: str
job_state:
  description:
    - The job after the task. V(absent) (no job directory; in check mode, before a submission), V(running),
      V(finished), V(interrupted) (unfinished and no Harbor process works on it, for example after a cancel), or
      V(damaged) (its directory or job-level files cannot be read; RV(damage) says why).
  returned: always
  type: str
  sample: finished
damage:
  description: Why the job directory cannot be read (with RV(job_state=damaged)).
  returned: when the job is damaged
  type: str
  sample: "result.json is not valid JSON: Expecting ',' delimiter: line 3 column 1 (char 52)"
lock_waited:
  description: Seconds this task waited for another run's submission of the same job.
  returned: when the task took the job's lock
  type: float
action:
  description: What the module did (or would do in check mode).
  returned: always
  type: str
  choices: [none, submitted, resumed, cancelled, cleaned]
command:
  description: The Harbor command line (as run where Harbor runs) of this task's submission or resume, or of the
    recorded run of the job when the task ran nothing.
  returned: always
  type: list
  elements: str
  sample: [harbor, job, start, -c, /opt/swebench/config/matrix.yaml, --job-name, smoke, -o, /opt/swebench/jobs, -y, -q]
exec_command:
  description: The full command the module ran on the target, including C(docker exec) and the detaching wrapper.
  returned: when the module submitted or resumed the job (or would, in check mode)
  type: list
  elements: str
pid:
  description: The Harbor process ID (inside the runtime container with O(container)), when one is running.
  returned: always
  type: int
pids_signalled:
  description: Harbor processes that O(state=cancelled) stopped.
  returned: when state is cancelled
  type: list
  elements: int
removed_projects:
  description: Docker Compose projects of the job's trials that were removed after Harbor stopped.
  returned: when state is cancelled or a job was resumed
  type: list
  elements: str
progress:
  description: Trial counters of the job, from its result files.
  returned: when the job directory exists
  type: dict
  contains:
    n_total:
      description: Trials planned.
      type: int
    n_completed:
      description: Trials with a result (errors and cancellations included).
      type: int
    n_errored:
      description: Trials that ended with an exception.
      type: int
    n_running:
      description: Trials started and not ended.
      type: int
    n_pending:
      description: Trials not started yet.
      type: int
    n_cancelled:
      description: Trials ended by a cancellation.
      type: int
    n_pass:
      description: Trials whose reward reaches 1 (see M(aisbench.agent_runtime.harbor_job_info) for the reward key).
      type: int
    pass_at_1:
      description: n_pass over completed trials (errored and cancelled ones count as failures, as in Harbor's mean).
      type: float
summary:
  description: The job summary, as one item of RV(aisbench.agent_runtime.harbor_job_info#module:jobs).
  returned: when the job is finished
  type: dict
log_path:
  description: Harbor's output for runs the module started, on the target.
  returned: always
  type: str
state_file:
  description: The module's record of the last run it started (pid, command, time), on the target.
  returned: always
  type: str
matrix_path:
  description: The filtered, inline or agent-mapped config the module wrote for Harbor, as seen where Harbor runs.
  returned: when the module wrote one
  type: str
harbor_version:
  description: The Harbor release that runs the job (asked where it runs, or O(harbor_version) as given).
  returned: when the module submitted or resumed a job (or would, in check mode)
  type: str
  sample: 0.26.0
toolchains:
  description: The baked agent toolchains the submitted job uses (see O(agent_toolchains)).
  returned: when the module submitted a job (or would, in check mode) whose agents need toolchains
  type: list
  elements: dict
  contains:
    agent:
      description: The agent name, as in the config and in Harbor's results.
      type: str
    version:
      description: The agent version baked in the toolchain.
      type: str
    volume:
      description: The volume mounted read-only into the trial containers.
      type: str
    import_path:
      description: The Harbor class that runs the agent on the toolchain.
      type: str
    mount:
      description: Where the toolchain is mounted in the trial containers.
      type: str
"""

import json
import os
import signal
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._agent_toolchains import (
    needs_toolchain,
    use_baked_toolchains,
    with_compose_overlay,
)
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._harbor_results import (
    job_damage,
    path_problem,
    read_regular_file,
    summarize_job,
)
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._env_file import env_problems, render_env_file
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._harbor_runner import (
    DETACH_ARGV0,
    DETACH_SCRIPT,
    SUPPORTED_HARBOR_VERSIONS,
    HarborJobError,
    JobFiles,
    JobLock,
    Runtime,
    config_file_problem,
    config_through_harbor,
    default_job_name,
    filter_matrix,
    harbor_version_problem,
    job_name_problem,
    leftover_projects,
    parse_config_text,
    probe_harbor,
    trial_network_overlay,
    resume_command,
    retry_types,
    start_command,
    trial_names,
    write_file,
)
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._runtime_contract import apply_contract

PROGRESS_FIELDS = ("n_total", "n_completed", "n_errored", "n_running", "n_pending", "n_cancelled", "n_pass", "pass_at_1")


class HarborJob:
    """One named job: where its files are, what state it is in, and what to do about it."""

    def __init__(self, module, name):
        self.module = module
        params = module.params
        self.name = name
        self.jobs_dir = params["jobs_dir"]
        self.host_jobs_dir = params["host_jobs_dir"] or params["jobs_dir"]
        self.job_dir = os.path.join(self.jobs_dir, name)
        self.host_job_dir = os.path.join(self.host_jobs_dir, name)
        self.container = params["container"]
        self.harbor = params["harbor_executable"]
        self.runtime = Runtime(module, self.container, params["docker_executable"])
        self.files = JobFiles(self.host_jobs_dir, self.jobs_dir, name)
        self.env = {str(k): ("" if v is None else str(v)) for k, v in (params["env"] or {}).items()}
        self._spelling = None if params["cli_spelling"] == "auto" else params["cli_spelling"]
        self._harbor_facts = None
        self.result = {
            "changed": False,
            "name": name,
            "job_dir": self.job_dir,
            "host_job_dir": self.host_job_dir,
            "job_state": "absent",
            "action": "none",
            "command": [],
            "pid": None,
            "log_path": self.files.host("harbor.log"),
            "state_file": self.files.host("state.json"),
        }

    # --- looking -------------------------------------------------------------------------

    def summary(self):
        if not os.path.lexists(self.host_job_dir):
            return None
        return summarize_job(self.host_job_dir, self.name)

    def pids(self):
        return self.runtime.job_pids(self.name, self.jobs_dir, self.job_dir)

    def probe(self):
        """(job_state, summary, pids)."""
        summary = self.summary()
        pids = self.pids()
        damage = None if pids else job_damage(self.host_job_dir)
        if summary is not None and summary["status"] == "finished":
            job_state = "finished"
        elif pids:
            job_state = "running"  # a file Harbor is writing may read as cut: not damage while Harbor runs
        elif damage:
            job_state = "damaged"
            self.result["damage"] = damage
        elif summary is not None and os.path.isfile(os.path.join(self.host_job_dir, "config.json")):
            job_state = "interrupted"
        else:
            job_state = "absent"
        return job_state, summary, pids

    def report(self, job_state, summary, pids):
        self.result["job_state"] = job_state
        self.result["pid"] = pids[0] if pids else None
        if summary is not None:
            self.result["progress"] = {field: summary.get(field) for field in PROGRESS_FIELDS}
            if job_state == "finished":
                self.result["summary"] = summary
        if not self.result["command"]:
            self.result["command"] = self.files.read_state().get("command", [])

    def fail(self, msg, **extra):
        result = dict(self.result)
        result.update(extra)
        result.pop("changed", None)
        self.module.fail_json(msg=msg, **result)

    # --- commands ------------------------------------------------------------------------

    def spelling(self):
        if self._spelling is None:
            self._spelling = SUPPORTED_HARBOR_VERSIONS[self.harbor_facts()["version"]]
        return self._spelling

    def harbor_facts(self):
        """{'version', 'agents'} of the Harbor that runs the job (agents None when harbor_version was given); a
        release this collection does not support refuses the job here, before anything is written."""
        if self._harbor_facts is None:
            version = self.module.params["harbor_version"]
            if version == "auto":
                self._harbor_facts = probe_harbor(self.runtime, self.harbor)
            else:
                problem = harbor_version_problem(version)
                if problem:
                    raise HarborJobError(problem)
                self._harbor_facts = {"version": version, "agents": None}
            self.result["harbor_version"] = self._harbor_facts["version"]
        return self._harbor_facts

    def load_config(self, path):
        """The config file as a mapping, read on the target (or where Harbor runs)."""
        text = None
        problem = config_file_problem(path)
        if problem:
            raise HarborJobError("the job config %s cannot be used: %s" % (path, problem))
        try:
            text = read_regular_file(path).decode("utf-8")
        except OSError as exc:
            if not self.container:
                raise HarborJobError("cannot read the job config %s: %s" % (path, exc.strerror or exc))
        except UnicodeDecodeError as exc:
            raise HarborJobError("cannot read the job config %s: not UTF-8 text (%s)" % (path, exc.reason))
        if text is None:
            # Not on the target: read it where Harbor runs (a regular file only: cat would block on a FIFO).
            self.check_config_in_container(path)
            rc, out, err = self.runtime.run(["cat", path], check=False)
            if rc != 0:
                raise HarborJobError("cannot read the job config %s in %s: %s" % (path, self.container, (err or out).strip()))
            text = out
        config = parse_config_text(text, path)
        if config is None:
            # YAML and no PyYAML on the target: Harbor parses it for us.
            config = config_through_harbor(self.runtime, self.harbor, self.spelling(), path)
        if not isinstance(config, dict):
            raise HarborJobError("the job config %s is not a mapping" % path)
        return config

    def check_config_in_container(self, path):
        """Refuse a config that is not a regular file where Harbor runs (Harbor would block reading a FIFO)."""
        rc, _out, _err = self.runtime.run(["sh", "-c", 'test -f "$1" && test -r "$1"', "sh", path], check=False)
        if rc != 0 and not self.module.check_mode:
            raise HarborJobError("the job config %s is not a readable regular file in container %s" % (path, self.container))

    def check_config_file(self, path):
        """Refuse a config file Harbor could not parse before anything is written (Harbor would fail only after the
        module had created the job's files). A file that is not on the target is only checked to be a regular file
        where Harbor runs, and left to Harbor to parse."""
        if self.container and not (os.path.isabs(path) and os.path.lexists(path)):
            self.check_config_in_container(path)
            return
        local_path = os.path.join(self.module.params["chdir"] or "", path)
        problem = config_file_problem(local_path)
        if problem:
            raise HarborJobError("the job config %s cannot be used: %s" % (path, problem))
        try:
            text = read_regular_file(local_path).decode("utf-8")
        except FileNotFoundError:
            if self.module.check_mode:
                return  # an earlier task of a check run would have written it
            raise HarborJobError("the job config %s does not exist on the target" % path)
        except OSError as exc:
            raise HarborJobError("cannot read the job config %s: %s" % (path, exc.strerror or exc))
        except UnicodeDecodeError as exc:
            raise HarborJobError("cannot read the job config %s: not UTF-8 text (%s)" % (path, exc.reason))
        config = parse_config_text(text, path)
        if config is not None and not isinstance(config, dict):
            raise HarborJobError("the job config %s is not a mapping" % path)

    def config_for_harbor(self):
        """(path passed to -c, matrix to write or None, {overlay file name: overlay} to write)."""
        path, matrix, overlay = self.toolchain_config()
        overlays = {"toolchains-compose.json": overlay} if overlay is not None else {}
        network = self.module.params["trial_network"]
        if not network:
            return path, matrix, overlays
        if matrix is None:
            config = self.module.params["config"]
            if self.module.check_mode and not self.container and not os.path.exists(os.path.join(self.module.params["chdir"] or "", config)):
                return path, None, overlays  # written by an earlier task of this check run
            matrix = self.load_config(config)
        overlays["network-compose.json"] = trial_network_overlay(network, self.module.params["trial_network_only"])
        return self.files.harbor("matrix.json"), with_compose_overlay(matrix, self.files.harbor("network-compose.json")), overlays

    def toolchain_config(self):
        """(path passed to -c, matrix to write or None, toolchain overlay to write or None)."""
        params = self.module.params
        config = params["config"]
        if config is None or config == "":
            raise HarborJobError("config is required to submit job %s (it does not exist yet)" % self.name)
        if isinstance(config, dict):
            path, matrix = self.files.harbor("matrix.json"), filter_matrix(config, params["datasets"], params["agents"])
        elif not isinstance(config, str):
            raise HarborJobError("config must be a path or a mapping, got %s" % type(config).__name__)
        elif not params["datasets"] and not params["agents"]:
            self.check_config_file(config)
            path, matrix = config, None
        else:
            path = self.files.harbor("matrix.json")
            matrix = filter_matrix(self.load_config(config), params["datasets"], params["agents"])
        if params["agent_toolchains"] == "off":
            return path, matrix, None
        if matrix is not None:
            source = matrix
        elif self.module.check_mode and not self.container and not os.path.exists(os.path.join(params["chdir"] or "", config)):
            return path, None, None  # written by an earlier task of this check run: its agents are not known yet
        else:
            source = self.load_config(config)
        if not any(needs_toolchain(entry) for entry in source.get("agents") or []):
            return path, matrix, None
        mapped, overlay, problems, used = use_baked_toolchains(
            source, self.runtime.toolchains(), self.files.harbor("toolchains-compose.json"), self.harbor_facts()["agents"])
        if problems:
            raise HarborJobError(
                "job %s refused before it started: %s. Bake the agents with the baked_images role (baked_images_agents, "
                "see docs/agents.md), or set agent_toolchains: off where trials may install agents from the Internet"
                % (self.name, "; ".join(problems)))
        self.result["toolchains"] = used
        return self.files.harbor("matrix.json"), mapped, overlay

    def env_file_for(self, resume):
        """(file for docker exec --env-file, file for harbor --env-file, variables for the process env)."""
        if not self.env:
            return None, None, None
        if self.container:
            return self.files.host("env"), None, None
        if resume:
            return None, None, self.env
        return None, self.files.host("env"), None

    def launch(self, harbor_argv, action, docker_env_file, process_env, matrix=None, overlays=None):
        """Start Harbor detached and wait until it has started the job."""
        params = self.module.params
        pidfile = self.files.harbor("harbor.pid")
        logfile = self.files.harbor("harbor.log")
        self.result["command"] = harbor_argv
        self.result["action"] = action
        self.result["changed"] = True
        preview = self.runtime.wrap(
            ["sh", "-c", DETACH_SCRIPT, DETACH_ARGV0, pidfile, logfile] + harbor_argv,
            env_file=docker_env_file, workdir=params["chdir"], detach=True,
        )
        self.result["exec_command"] = preview
        if self.module.check_mode:
            return
        self.runtime.require_executable("harbor_executable", self.harbor)
        self.files.ensure_dir()
        for file_name, overlay in sorted((overlays or {}).items()):
            write_file(self.files.host(file_name), json.dumps(overlay, indent=2, sort_keys=True) + "\n", 0o644)
        if matrix is not None:
            write_file(self.files.host("matrix.json"), json.dumps(matrix, indent=2, sort_keys=True) + "\n", 0o644)
        if self.env:
            style = "docker" if self.container else "dotenv"
            write_file(self.files.host("env"), render_env_file(self.env, style), 0o600)
        self.files.remove("harbor.pid")
        launched_at = time.time()
        exec_argv = self.runtime.spawn(harbor_argv, pidfile, logfile, env_file=docker_env_file, workdir=params["chdir"], env=process_env)
        self.result["exec_command"] = exec_argv
        self.files.write_state({
            "name": self.name,
            "action": action,
            "command": harbor_argv,
            "container": self.container,
            "jobs_dir": self.jobs_dir,
            "launched_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(launched_at)),
            "pid": None,
        })
        pid = self.wait_started(launched_at)
        state = self.files.read_state()
        state["pid"] = pid
        self.files.write_state(state)

    def wait_started(self, launched_at):
        """Wait until Harbor (re)writes the job's result.json; fail if it exits first."""
        deadline = launched_at + self.module.params["start_timeout"]
        result_path = os.path.join(self.host_job_dir, "result.json")
        pid = None
        while True:
            time.sleep(1)
            if pid is None:
                pid = self.files.read_pid()
                if pid is None and time.time() - launched_at > 20:
                    self.fail(
                        "Harbor did not write its pid file %s. Is jobs_dir (%s, where Harbor runs) the same directory "
                        "as host_jobs_dir (%s, on the target)? %s Harbor output: %s"
                        % (self.files.host("harbor.pid"), self.jobs_dir, self.host_jobs_dir, self.stop_started(),
                           self.files.log_tail())
                    )
            try:
                started = os.stat(result_path).st_mtime >= launched_at - 1
            except OSError:
                started = False
            if started:
                return pid
            if pid is not None and not self.pids():
                summary = self.summary()
                if summary is not None and summary["status"] == "finished":
                    return pid
                self.fail("Harbor exited before job %s started. Harbor output:\n%s" % (self.name, self.files.log_tail()))
            if time.time() > deadline:
                self.fail("job %s did not start within start_timeout=%d s (a Docker engine that does not answer, or a config "
                          "Harbor needs longer to read?). %s "
                          "Raise start_timeout to give it longer. Harbor output:\n%s"
                          % (self.name, self.module.params["start_timeout"], self.stop_started(), self.files.log_tail()))

    def stop_started(self):
        """Stop the Harbor process this task started for the job; the sentence that says what happened."""
        pids = self.pids()
        if not pids:
            return "No Harbor process works on the job."
        self.cancel(pids)
        remaining = self.pids()
        if remaining:
            return ("The Harbor process could not be stopped and keeps running (pid %s): cancel it with "
                    "harbor_job name=%s state=cancelled." % (", ".join(str(p) for p in remaining), self.name))
        return "The Harbor process it started was stopped (pid %s); nothing keeps running." % ", ".join(str(p) for p in pids)

    def submit(self, submission):
        config_path, matrix, overlays = submission
        docker_env_file, harbor_env_file, process_env = self.env_file_for(resume=False)
        argv = start_command(
            self.harbor, self.spelling(), config_path, self.name, self.jobs_dir,
            concurrency=self.module.params["concurrency"], env_file=harbor_env_file,
            extra_args=self.module.params["extra_args"],
        )
        if matrix is not None:
            self.result["matrix_path"] = config_path
        self.launch(argv, "submitted", docker_env_file, process_env, matrix=matrix, overlays=overlays)

    def resume(self):
        self.result["removed_projects"] = self.remove_leftovers()
        docker_env_file, _unused, process_env = self.env_file_for(resume=True)
        argv = resume_command(self.harbor, self.spelling(), self.job_dir, self.module.params["retry_exceptions"])
        self.launch(argv, "resumed", docker_env_file, process_env)

    def remove_leftovers(self):
        """Remove the Compose projects of this job's trials (only while no Harbor works on it)."""
        projects = leftover_projects(self.runtime.compose_projects(), trial_names(self.host_job_dir))
        if projects and not self.module.check_mode:
            for project in projects:
                self.runtime.compose_down(project)
        return projects

    def cancel(self, pids):
        grace = self.module.params["cancel_grace_period"]
        self.result["pids_signalled"] = pids
        self.result["action"] = "cancelled"
        self.result["changed"] = True
        if self.module.check_mode:
            return
        for pid in pids:
            self.runtime.send_signal(pid, signal.SIGTERM)
        deadline = time.time() + grace
        remaining = pids
        while remaining and time.time() < deadline:
            time.sleep(1)
            remaining = self.pids()
        for pid in remaining:
            self.runtime.send_signal(pid, signal.SIGKILL)
        if remaining:
            time.sleep(2)
            self.result["killed"] = remaining

    def wait_finished(self, started_at):
        params = self.module.params
        while True:
            summary = self.summary()
            if summary is not None and summary["status"] == "finished":
                return
            pids = self.pids()
            if not pids:
                summary = self.summary()
                if summary is not None and summary["status"] == "finished":
                    return
                self.report("interrupted" if summary is not None else "absent", summary, pids)
                self.fail("Harbor stopped before job %s finished. Harbor output:\n%s" % (self.name, self.files.log_tail()))
            if time.time() - started_at >= params["timeout"]:
                self.report("running", summary, pids)
                progress = self.result.get("progress") or {}
                self.fail(
                    "timed out after %d s waiting for job %s; it is still running (pid %s): %s of %s trials completed. "
                    "The job keeps running: wait again with state=finished, or cancel it with harbor_job name=%s "
                    "state=cancelled."
                    % (params["timeout"], self.name, pids[0], progress.get("n_completed"), progress.get("n_total"),
                       self.name)
                )
            time.sleep(max(1, min(params["poll_interval"], params["timeout"] - (time.time() - started_at) + 1)))

    # --- states --------------------------------------------------------------------------

    def ensure(self, state):
        started_at = time.time()
        problem = path_problem(self.host_jobs_dir) if os.path.lexists(self.host_jobs_dir) else None
        if problem:
            raise HarborJobError("host_jobs_dir %s %s" % (self.host_jobs_dir, problem))
        self.runtime.check_container()
        job_state, summary, pids = self.act(state)

        if self.module.check_mode:
            self.report(job_state, summary, pids)
            return self.result

        job_state, summary, pids = self.probe()
        if state == "finished" and job_state != "finished":
            self.wait_finished(started_at)
            job_state, summary, pids = self.probe()
        self.report(job_state, summary, pids)
        if job_state in ("finished", "interrupted") and self.files.remove("env"):
            self.result["env_file_removed"] = True
        return self.result

    def look(self, state):
        """(job_state, summary, pids, what to start: 'submit', 'resume' or None); a damaged job is an error."""
        job_state, summary, pids = self.probe()
        if job_state == "damaged" and state != "cancelled":
            self.report(job_state, summary, pids)
            raise HarborJobError(
                "job %s cannot be read (%s): Harbor was not started on it. Fix or move %s, then run again"
                % (self.name, self.result["damage"], self.host_job_dir))
        start = None
        if state == "resumed":
            if job_state == "absent":
                raise HarborJobError("job %s does not exist in %s: nothing to resume" % (self.name, self.host_jobs_dir))
            retry = set(retry_types(self.module.params["retry_exceptions"]))
            if job_state == "interrupted" or (job_state == "finished" and retry.intersection((summary or {}).get("exceptions") or {})):
                start = "resume"
        elif state != "cancelled":
            start = {"absent": "submit", "interrupted": "resume"}.get(job_state)
        return job_state, summary, pids, start

    def act(self, state):
        """Submit, resume or cancel as the state asks; (job_state, summary, pids) seen before acting."""
        job_state, summary, pids, start = self.look(state)
        if state == "cancelled":
            if job_state == "running":
                self.cancel(pids)
            if job_state in ("running", "interrupted"):
                removed = self.remove_leftovers() if not (self.module.check_mode and job_state == "running") else []
                self.result["removed_projects"] = removed
                if removed and self.result["action"] == "none":
                    self.result["action"] = "cleaned"
                    self.result["changed"] = True
            return job_state, summary, pids
        if start is None:
            return job_state, summary, pids
        # Bad input and a missing or unsupported Harbor fail before the lock (which creates the module's state directory).
        submission = self.config_for_harbor() if start == "submit" else None
        self.harbor_facts()
        if not self.module.check_mode:
            self.runtime.require_executable("harbor_executable", self.harbor)
        self.spelling()
        if self.module.check_mode:
            if start == "submit":
                self.submit(submission)
            else:
                self.resume()
            return job_state, summary, pids
        # One run submits or resumes a job: take the job's lock and look again, as another run may have started it
        # meanwhile. Held until Harbor has started the job, never while waiting for it to finish.
        lock = JobLock(self.files)
        params = self.module.params
        self.result["lock_waited"] = lock.acquire(params["start_timeout"] + params["cancel_grace_period"] + 60)
        try:
            job_state, summary, pids, start = self.look(state)
            if start == "submit":
                self.submit(submission or self.config_for_harbor())
            elif start == "resume":
                self.resume()
        finally:
            lock.release()
        return job_state, summary, pids


def main():
    module = AnsibleModule(
        argument_spec=dict(
            name=dict(type="str"),
            name_prefix=dict(type="str", default="job"),
            state=dict(type="str", default="finished", choices=["started", "finished", "resumed", "cancelled"]),
            config=dict(type="raw"),
            datasets=dict(type="list", elements="str", default=[]),
            agents=dict(type="list", elements="str", default=[]),
            jobs_dir=dict(type="str"),
            host_jobs_dir=dict(type="path"),
            container=dict(type="str"),
            docker_executable=dict(type="str", default="docker"),
            harbor_executable=dict(type="str", default="harbor"),
            cli_spelling=dict(type="str", default="auto", choices=["auto", "job", "jobs"]),
            harbor_version=dict(type="str", default="auto"),
            concurrency=dict(type="int"),
            extra_args=dict(type="list", elements="str", default=[]),
            env=dict(type="dict", default={}, no_log=True),
            agent_toolchains=dict(type="str", default="required", choices=["required", "off"]),
            trial_network=dict(type="str"),
            trial_network_only=dict(type="bool", default=True),
            chdir=dict(type="str"),
            retry_exceptions=dict(type="list", elements="str", default=[]),
            timeout=dict(type="int", default=7200),
            poll_interval=dict(type="int", default=10),
            start_timeout=dict(type="int", default=180),
            cancel_grace_period=dict(type="int", default=90),
            runtime=dict(type="dict"),
        ),
        required_if=[("state", "resumed", ("name",)), ("state", "cancelled", ("name",))],
        supports_check_mode=True,
    )
    params = module.params
    problem = apply_contract(params, "harbor_job")
    if problem:
        module.fail_json(msg=problem)
    if not params["jobs_dir"]:
        module.fail_json(msg="jobs_dir is required (or runtime, the runtime contract that gives it)")
    if params["name"] is None:
        problem = job_name_problem(params["name_prefix"])
        if problem:
            module.fail_json(msg="name_prefix %r is not usable: %s" % (params["name_prefix"], problem))
        name = default_job_name(params["name_prefix"])
    else:
        name = params["name"]
    problem = job_name_problem(name)
    if problem:
        module.fail_json(msg="name %r refused: %s" % (name, problem))
    for option in ("timeout", "poll_interval", "start_timeout", "cancel_grace_period"):
        if params[option] < 0:
            module.fail_json(msg="%s must not be negative, got %d" % (option, params[option]))
    if params["timeout"] == 0:
        module.fail_json(msg="timeout 0 is refused: state=finished would submit the job and fail at once while it runs "
                             "on. Use state=started to submit without waiting, or a timeout of at least 1 second")
    if params["start_timeout"] == 0:
        module.fail_json(msg="start_timeout 0 is refused: the module could never see Harbor start the job; "
                             "use at least 1 second")
    if params["concurrency"] is not None and params["concurrency"] < 1:
        module.fail_json(msg="concurrency must be at least 1, got %d" % params["concurrency"])
    if not params["jobs_dir"].startswith("/"):
        module.fail_json(msg="jobs_dir must be an absolute path, got %r" % params["jobs_dir"])
    problems = env_problems(params["env"], "docker" if params["container"] else "dotenv")
    if problems:
        module.fail_json(msg="env refused: " + "; ".join(problems))

    job = HarborJob(module, name)
    try:
        result = job.ensure(params["state"])
    except HarborJobError as exc:
        job.fail(str(exc))
    module.exit_json(**result)


if __name__ == "__main__":
    main()
