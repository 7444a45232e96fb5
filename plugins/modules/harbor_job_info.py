#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: harbor_job_info
short_description: Summarize Harbor benchmark jobs (reads only)
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
  - Changes nothing on the target. M(aisbench.agent_runtime.harbor_job_summary) takes the same options and writes
    the summary as JSON, CSV and Markdown files, ready for M(ansible.builtin.fetch).
requirements:
  - Python standard library only.
seealso:
  - module: aisbench.agent_runtime.harbor_job
  - module: aisbench.agent_runtime.harbor_job_summary
  - module: ansible.builtin.fetch
author: aisbench maintainers (!UNKNOWN)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - aisbench.agent_runtime.harbor_jobs
  - aisbench.agent_runtime.runtime_contract
  - aisbench.agent_runtime.attributes
"""

EXAMPLES = r"""
- name: Summarize last night's jobs
  aisbench.agent_runtime.harbor_job_info:
    jobs_dir: /opt/swebench/jobs
    jobs: ["nightly-*"]
  register: report

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
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._harbor_job_read import READ_OPTIONS, read_jobs


def main():
    module = AnsibleModule(argument_spec=dict(READ_OPTIONS), supports_check_mode=True)
    output = read_jobs(module, "harbor_job_info")[1]
    module.exit_json(changed=False, **output)


if __name__ == "__main__":
    main()
