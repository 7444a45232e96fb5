#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: harbor_job_info
short_description: Summarize Harbor benchmark jobs and write JSON, CSV and Markdown reports
version_added: 0.1.0
description:
  - Reads Harbor job directories under O(jobs_dir) on the target and returns, per job, its benchmarks, agents and
    models, start and finish times, trial counters, pass@1, exception types with counts, and token and cost totals when
    the agents report them; plus a pass@1 table by benchmark, agent and model across the selected jobs.
  - pass@1, the mean reward and the mean of every reward key follow Harbor's own Mean metric (see the notes); they
    equal the C(metrics) Harbor records in the job's C(result.json), for running and finished jobs alike.
  - With O(details) (the default) every trial's C(result.json) is read, for the outcome of every task, tokens, cost and
    phase durations per benchmark, agent and model (C(tasks) and C(durations) in RV(jobs[].evals)).
    Without it a finished job is read from its job-level C(result.json) alone. A running or interrupted job, or one
    whose C(result.json) is missing or unreadable, is read from its trials' C(result.json) files as well.
  - A job whose files are missing or corrupt is reported with its RV(jobs[].error); the other jobs are summarized as
    usual. The module fails only on bad options.
  - With O(output_dir), writes C(summary-YYYYMMDD-HHMMSS.json), C(.csv) and C(.md) (UTC time) there, ready for
    M(ansible.builtin.fetch).
options:
  jobs_dir:
    description:
      - Directory holding Harbor's job directories (Harbor's C(-o)), on the target.
      - Required unless O(runtime) gives it (its C(host_jobs_dir)).
    type: path
  jobs:
    description:
      - Which jobs to read. Each item is a job name, a shell-style glob (C(nightly-*)), V(all), or V(latest) (the job
        that started last). An exact directory name wins over a glob reading, so names holding C([) work.
      - A plain name without a directory is reported as a job with an error.
      - Hidden directories (such as the C(.harbor_job) directory of M(aisbench.agent_runtime.harbor_job)) are skipped.
    type: list
    elements: str
    default: [all]
  output_dir:
    description: Directory (on the target) to write the summary files to; created with mode 0755 when missing.
    type: path
  output_formats:
    description: Which summary files to write.
    type: list
    elements: str
    choices: [json, csv, md]
    default: [json, csv, md]
  details:
    description:
      - Read every trial's C(result.json) for per-task outcomes, tokens, cost and phase durations per eval.
      - V(false) reads only the job-level C(result.json) of a finished job (one file, whatever the number of trials);
        the counters and pass@1 are the same either way.
    type: bool
    default: true
  trials:
    description:
      - Also list every completed trial (RV(jobs[].trials)) in the result and the JSON summary file, with its task,
        agent, model, benchmark, rewards, exception and phase durations; implies O(details).
      - The night's shard mode of the nightly playbook merges these from every host into one pass@1 per benchmark,
        agent and model (see docs/playbooks.md).
    type: bool
    default: false
  reward_key:
    description:
      - The reward key pass@1 and the mean reward are computed on when a job's verifier writes several keys to
        C(reward.json).
      - Without it (or for an eval that does not record it) the key is C(reward) when recorded, else the only key,
        else the first key in name order (the one Harbor's progress bar shows); C(primary_key_reason) in RV(jobs[].evals)
        says which rule applied. Every key's mean is reported in C(rewards) of RV(jobs[].evals) either way.
    type: str
  output_timestamp:
    description:
      - Timestamp in the file names instead of the current UTC time (letters, digits, C(-) and C(_)), for example to
        name a nightly report after its run. Files with the same name are replaced.
    type: str
notes:
  - "pass@1 = passed trials / completed trials of a benchmark, agent and model. Every trial with a C(result.json)
    counts, errored and cancelled ones included, as in Harbor's Mean metric (a trial without rewards counts 0). A
    trial passes when its primary reward (O(reward_key)) is at least 1, whatever exception it also recorded. For 0/1
    rewards pass@1 equals Harbor's C(stats.evals[KEY].metrics[0].mean) (one key) or C(metrics[0][KEY]) (several);
    C(mean_reward) in RV(jobs[].evals) equals it for any rewards. docs/harbor_modules.md lists every rule with the Harbor
    field it matches."
  - Field names follow Harbor 0.25's C(result.json), C(config.json) and C(lock.json).
requirements:
  - Python standard library only.
seealso:
  - module: aisbench.agent_runtime.harbor_job
  - module: ansible.builtin.fetch
author: aisbench maintainers (!UNKNOWN)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - aisbench.agent_runtime.runtime_contract
  - aisbench.agent_runtime.attributes
attributes:
  check_mode:
    details: In check mode the summary files are not written; RV(files) names the files that would be.
"""

EXAMPLES = r"""
- name: Summarize last night's jobs and write the reports
  aisbench.agent_runtime.harbor_job_info:
    jobs_dir: /opt/swebench/jobs
    jobs: ["nightly-*"]
    output_dir: /opt/swebench/logs/reports
  register: report

- name: Bring the Markdown report home
  ansible.builtin.fetch:
    src: "{{ report.files.md }}"
    dest: "reports/{{ inventory_hostname }}/"
    flat: true

- name: Fail when the oracle does not solve everything
  ansible.builtin.assert:
    that: item.pass_at_1 == 1.0
    fail_msg: "{{ item.benchmark }}: pass@1 {{ item.pass_at_1 }}"
  loop: "{{ report.pass_at_1 | selectattr('agent', 'equalto', 'oracle') }}"

- name: Look at the job that started last
  aisbench.agent_runtime.harbor_job_info:
    jobs_dir: /opt/swebench/jobs
    jobs: [latest]
"""

RETURN = r"""
jobs:
  description: One summary per selected job, in name order (unmatched plain names last).
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: Job name (its directory name).
      type: str
    path:
      description: Job directory on the target.
      type: str
    status:
      description: V(finished) (C(finished_at) set), V(unfinished) (running or interrupted), or V(error) (the job-level
        C(result.json) or the directory is missing or unreadable).
      type: str
    error:
      description: What is wrong with the job's files, or null.
      type: str
    source:
      description:
        - Where the counters come from. V(job_result) for a finished job; V(job_result+trial_results) for an unfinished
          one (the job-level file plus the trial files it does not cover yet); V(trial_results) without a readable
          job-level file.
      type: str
    started_at:
      description: Job start (Harbor's local time, ISO 8601).
      type: str
    updated_at:
      description: Last update of the job-level result.
      type: str
    finished_at:
      description: Job end, null until the job finishes.
      type: str
    benchmarks:
      description: Dataset names (Harbor's C(source)), from the results and the config.
      type: list
      elements: str
    agents:
      description: Agent names.
      type: list
      elements: str
    models:
      description: Model names, empty for agents without a model.
      type: list
      elements: str
    n_total:
      description: Trials planned.
      type: int
    n_completed:
      description: Trials with a result, errors and cancellations included (the denominator of pass@1).
      type: int
    n_errored:
      description: Trials ended by an exception.
      type: int
    n_running:
      description: Trials started without a result yet.
      type: int
    n_pending:
      description: Trials not started.
      type: int
    n_cancelled:
      description: Trials ended by a cancellation (C(CancelledError)).
      type: int
    n_retries:
      description: Trials Harbor ran again.
      type: int
    n_pass:
      description: Trials whose primary reward is at least 1.
      type: int
    pass_at_1:
      description: n_pass over completed trials; null without any.
      type: float
    mean_reward:
      description: Mean primary reward over the same trials, trials without rewards counted as 0 (Harbor's mean).
      type: float
    exceptions:
      description: Exception type to number of trials.
      type: dict
    n_input_tokens:
      description: Input tokens over all trials, null when no agent reported them.
      type: int
    n_cache_tokens:
      description: Cached input tokens, null when not reported.
      type: int
    n_output_tokens:
      description: Output tokens, null when not reported.
      type: int
    cost_usd:
      description: Cost in USD, null when not reported.
      type: float
    evals:
      description:
        - The same counters per benchmark, agent and model (Harbor's C(stats.evals) keys), plus C(n_rewarded) (trials
          with rewards, Harbor's C(n_trials)), C(primary_key) and C(primary_key_reason), C(rewards) (per key C(sum),
          C(mean) and C(n_pass)), C(binary_rewards), and C(harbor_metrics) (the C(metrics) Harbor recorded).
        - With O(details), also C(tasks) (per task C(n_trials), C(n_pass), C(n_fail), C(n_error), C(exceptions),
          C(trials), C(total_sec) of trial time over C(n_timed) trials), token and cost sums (C(n_cost_reported) trials reported a cost)
          and C(durations) (per phase
          C(environment_setup), C(agent_setup), C(agent_execution), C(verifier) and C(total), C(total_sec) over
          C(n) trials).
      type: list
      elements: dict
    trials:
      description:
        - With O(trials), one item per completed trial, C(trial), C(task) (the task's name), C(task_dir) (its directory
          name), C(key) (C([agent, model, benchmark])), C(rewards), C(exception), C(started_at), C(finished_at),
          C(durations) (seconds per phase and C(total)) and the token and cost counters.
      returned: with O(trials)
      type: list
      elements: dict
    trial_errors:
      description: Trials whose result.json could not be read (unfinished jobs).
      type: list
      elements: dict
  sample:
    - name: nightly-2026-12-02
      status: finished
      benchmarks: [hello]
      agents: [oracle]
      models: []
      n_total: 2
      n_completed: 2
      n_errored: 0
      n_pass: 1
      pass_at_1: 0.5
pass_at_1:
  description: pass@1 by benchmark, agent and model, summed over the selected jobs.
  returned: always
  type: list
  elements: dict
  sample:
    - {benchmark: hello, agent: oracle, model: null, jobs: [nightly-2026-12-02], n_completed: 2, n_errored: 0,
       n_cancelled: 0, n_pass: 1, pass_at_1: 0.5}
progress:
  description:
    - "Progress of every selected job that is not finished, for people watching a long job (not written to the summary
      files). C(line) reads like C(job J: 37/120 trials done, 3 errored (AgentTimeoutError=3), 4 running,
      pass@1 0.541, elapsed 1h02m, ETA 1h05m)."
    - The ETA is the remaining trials at the rate trials ended since Harbor last started the job.
  returned: always
  type: list
  elements: dict
  sample:
    - {job: nightly-2026-12-02, n_total: 120, n_completed: 37, n_errored: 3, n_running: 4, eta_sec: 3900,
       line: "job nightly-2026-12-02: 37/120 trials done, ..."}
errors:
  description: The jobs with an error, as C({job, error}).
  returned: always
  type: list
  elements: dict
files:
  description: Format to path of the summary files written (or, in check mode, that would be written).
  returned: when output_dir is set
  type: dict
  sample: {json: /opt/swebench/logs/reports/summary-20261202-060000.json}
"""

import os
import re

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._harbor_results import (
    job_progress,
    report_timestamp,
    summarize,
    write_reports_if_changed,
)
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._runtime_contract import apply_contract

TIMESTAMP_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}\Z")


def main():
    module = AnsibleModule(
        argument_spec=dict(
            jobs_dir=dict(type="path"),
            jobs=dict(type="list", elements="str", default=["all"]),
            output_dir=dict(type="path"),
            output_formats=dict(type="list", elements="str", choices=["json", "csv", "md"], default=["json", "csv", "md"]),
            output_timestamp=dict(type="str"),
            details=dict(type="bool", default=True),
            trials=dict(type="bool", default=False),
            reward_key=dict(type="str", no_log=False),
            runtime=dict(type="dict"),
        ),
        supports_check_mode=True,
    )
    params = module.params
    problem = apply_contract(params, "harbor_job_info")
    if problem:
        module.fail_json(msg=problem)
    jobs_dir = params["jobs_dir"]
    if not jobs_dir:
        module.fail_json(msg="jobs_dir is required (or runtime, the runtime contract that gives it)")
    if not os.path.isdir(jobs_dir):
        module.fail_json(msg="jobs_dir %s is not a directory" % jobs_dir)
    timestamp = params["output_timestamp"]
    if timestamp is not None and not TIMESTAMP_PATTERN.match(timestamp):
        module.fail_json(msg="output_timestamp %r refused: use letters, digits, '-' and '_' only" % timestamp)
    formats = []
    for fmt in params["output_formats"]:
        if fmt not in formats:
            formats.append(fmt)

    if params["reward_key"] is not None and not params["reward_key"].strip():
        module.fail_json(msg="reward_key refused: an empty key")
    result = summarize(jobs_dir, params["jobs"], params["details"], params["reward_key"], params["trials"])
    output = {
        "changed": False,
        "jobs": result["jobs"],
        "pass_at_1": result["pass_at_1"],
        "progress": [job_progress(job["path"], job) for job in result["jobs"]
                     if job["status"] == "unfinished"],
        "errors": [{"job": job["name"], "error": job["error"]} for job in result["jobs"] if job["error"]],
    }

    output_dir = params["output_dir"]
    if output_dir:
        timestamp = timestamp or report_timestamp()
        if os.path.exists(output_dir) and not os.path.isdir(output_dir):
            module.fail_json(msg="output_dir %s exists and is not a directory" % output_dir, **output)
        if not formats:
            output["files"] = {}
        elif module.check_mode:
            output["files"], output["changed"] = write_reports_if_changed(result, output_dir, formats, timestamp, dry_run=True)
        else:
            try:
                if not os.path.isdir(output_dir):
                    os.makedirs(output_dir, mode=0o755)
                output["files"], output["changed"] = write_reports_if_changed(result, output_dir, formats, timestamp)
            except OSError as exc:
                module.fail_json(msg="cannot write the summary files to %s: %s" % (output_dir, exc), **output)
    module.exit_json(**output)


if __name__ == "__main__":
    main()
