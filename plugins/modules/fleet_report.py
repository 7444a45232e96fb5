#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: fleet_report
short_description: Build the fleet-wide nightly report from per-host Harbor summaries
version_added: 0.1.0
description:
  - "An action plugin: runs entirely on the controller (use C(run_once: true)) after the per-host summary files of
    M(aisbench.agent_runtime.harbor_job_summary) have been fetched. Reads one summary and/or one failure record per host
    and writes C(fleet-report.md), C(.csv), C(.json) and C(.html) into C(REPORT_DIR/NIGHT/). The HTML page is
    rendered from the Jinja2 templates shipped in the collection (C(templates/fleet_report/)); it needs nothing from
    the network to be viewed (no scripts, no external styles or images)."
  - "Input layout (the defaults): C(REPORT_DIR/NIGHT/hosts/HOST/summary.json), the JSON file written by
    M(aisbench.agent_runtime.harbor_job_summary), and C(REPORT_DIR/NIGHT/hosts/HOST/failure.json),
    C({\"host\": HOST, \"stage\": STAGE, \"error\": TEXT}) for a host that failed. O(summaries) and O(failures) give
    them explicitly instead."
  - The report has pass@1 (and the mean reward, with every reward key's mean) by benchmark, agent and model per host
    and across the fleet. The fleet value is the sum of passed trials over the sum of completed trials of every host,
    not a mean of the hosts' pass@1.
  - "Per task: a task x (agent, model) matrix per host and for the fleet (pass, fail, C(error: TYPE), or C(k/n pass)
    when a task ran several times), task regressions and fixes against the latest earlier night the task ran
    (C(passed on 2026-11-30, failed tonight)) and a flaky marker for tasks whose outcome flipped at least twice in the
    last O(history) nights."
  - Tokens (input, cache, output), cost in USD where the agent reports it, and the mean duration of each trial phase
    (environment setup, agent setup, agent, verifier) per benchmark, agent and model, per host and for the fleet,
    with the night's totals.
  - The fleet pass@1 of every benchmark, agent and model over the last O(history) nights, as a table and a chart.
  - It compares each row with the latest earlier night in O(report_dir) that has a C(fleet-report.json) (night
    directories sorted by name) and marks it C(improved), C(regressed), C(unchanged), C(new) or C(gone), with deltas; a
    change counts when pass@1 moves by at least O(threshold) and both nights scored at least O(min_trials) trials.
  - It lists the hosts that failed (stage and error) and the hosts without results. A summary file that cannot be read
    or is not a harbor_job_summary file makes that host failed at stage C(report); it never stops the report.
  - "Shard nights: when C(REPORT_DIR/NIGHT/shard-plan.json) exists (written by
    M(aisbench.agent_runtime.fleet_shard_plan)), the fleet rows are the trials of every host's shard jobs
    (C(jobs[].trials) of the summaries, written by harbor_job_summary with O(aisbench.agent_runtime.harbor_job_summary#module:trials))
    merged and scored together, each unit of the plan counted once. A unit no trial covers (its host failed or was
    unreachable) is counted as a failed trial with exception C(MissingUnit), never left out of the denominator, and
    listed with the host that should have run it. Every task names the hosts that ran it. Per-host rows are each
    host's part and are not compared with earlier nights (change C(shard part))."
  - Maintains the symlink C(REPORT_DIR/latest) to the newest night (by name) that has a report.
  - The files are a pure function of the inputs, so a rerun on the same inputs rewrites nothing and reports
    C(changed=false).
options:
  report_dir:
    description: Directory holding one directory per night (created with mode 0755 when missing).
    type: path
    required: true
  night:
    description:
      - Night id, the name of the night's directory under O(report_dir); 1-64 letters, digits, C(.), C(_) and C(-),
        not V(latest).
      - Defaults to the controller's UTC date (C(YYYY-MM-DD)) when the module runs; pass the id the playbook used for
        the fetch so a run that crosses midnight stays in one directory.
    type: str
  hosts_dir:
    description: Directory with one C(HOST/) directory per host holding C(summary.json) and/or C(failure.json).
      Defaults to C(REPORT_DIR/NIGHT/hosts). A missing directory is fine when other inputs are given.
    type: path
  summaries:
    description: Per-host summary files given explicitly; they win over O(hosts_dir) for the same host.
    type: list
    elements: dict
    default: []
    suboptions:
      host:
        description: Host name as shown in the report.
        type: str
        required: true
      path:
        description: The harbor_job_summary JSON file of that host, on the controller.
        type: path
        required: true
  failures:
    description: Failure records given inline; they win over a C(failure.json) in O(hosts_dir) for the same host.
    type: list
    elements: dict
    default: []
    suboptions:
      host:
        description: Host name.
        type: str
        required: true
      stage:
        description: Where the host failed, for example V(unreachable), V(preflight), V(submit), V(wait),
          V(summarize), V(fetch).
        type: str
        default: unknown
      error:
        description: What went wrong (the task's message).
        type: str
        default: no error recorded
  expected_hosts:
    description: Hosts that should have reported (for example C(ansible_play_hosts_all)); those with neither a summary
      nor a failure record are listed as hosts without results.
    type: list
    elements: str
    default: []
  dropped_hosts:
    description:
      - Hosts that left the play, usually C(ansible_play_hosts_all | difference(ansible_play_hosts)) (unreachable
        hosts, and hosts that failed outside a C(rescue) block, which therefore wrote no failure record).
      - Each is listed as failed at stage V(dropped), unless it has a failure record of its own.
    type: list
    elements: str
    default: []
  previous_night:
    description: Night to compare with instead of the latest earlier night with a report; the module fails when that
      night has no usable C(fleet-report.json).
    type: str
  threshold:
    description: Smallest pass@1 change (0 to 1) that counts as improved or regressed.
    type: float
    default: 0.05
  min_trials:
    description: Both nights must have at least this many completed trials of a row for it to count as improved or
      regressed; otherwise the row stays C(unchanged) (its delta is still shown).
    type: int
    default: 1
  history:
    description: Nights shown in the pass@1 trend and used for task regressions and the flaky marker, tonight
      included (the earlier ones are the latest nights before tonight with a usable C(fleet-report.json)).
    type: int
    default: 14
  update_latest:
    description: Maintain the C(REPORT_DIR/latest) symlink.
    type: bool
    default: true
  reward_key:
    description: The reward key a shard night's merged trials are scored on (as M(aisbench.agent_runtime.harbor_job_info)'s
      O(aisbench.agent_runtime.harbor_job_info#module:reward_key)); per-host rows keep what the summaries recorded.
    type: str
notes:
  - pass@1 is passed trials over completed trials (errored and cancelled trials count as failures, as in Harbor's own
    mean), as in M(aisbench.agent_runtime.harbor_job_info). Reports of format 1 (earlier releases, which left cancelled
    trials out) are still read as previous nights and history.
  - A failed host whose summary is still readable (for example a job that timed out) keeps its partial results in the
    tables and is listed as failed.
  - Per-host comparisons cover hosts with results on both nights; a host that failed or has no results is listed as
    such instead of as C(gone) rows.
requirements:
  - Jinja2 on the controller (ansible-core requires it).
seealso:
  - module: aisbench.agent_runtime.harbor_job_summary
  - module: ansible.builtin.fetch
author: aisbench maintainers (!UNKNOWN)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - aisbench.agent_runtime.attributes
attributes:
  check_mode:
    details: Nothing is written; C(changed) says whether a file or the link would change.
  diff_mode:
    support: full
    details: The diff shows C(fleet-report.md) before and after.
"""

EXAMPLES = r"""
- name: Build the fleet report of the night
  aisbench.agent_runtime.fleet_report:
    report_dir: /srv/aisbench/reports
    night: "{{ nightly_night }}"
    expected_hosts: "{{ ansible_play_hosts_all }}"
    threshold: 0.05
  delegate_to: localhost
  run_once: true
  register: fleet

- name: Show the fleet table and the regressions
  ansible.builtin.debug:
    msg: "{{ fleet.summary_lines }}"
  run_once: true

- name: Give explicit inputs instead of the hosts/ layout
  aisbench.agent_runtime.fleet_report:
    report_dir: /srv/aisbench/reports
    night: "2026-12-02"
    summaries:
      - {host: gpu01, path: /tmp/fetched/gpu01/summary-20261202-060000.json}
    failures:
      - {host: gpu02, stage: unreachable, error: "ssh: connect to host gpu02 port 22: No route to host"}
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
night:
  description: The night id.
  returned: always
  type: str
  sample: "2026-12-02"
night_dir:
  description: Directory the report files are in.
  returned: always
  type: str
previous_night:
  description: The night compared with, or null.
  returned: always
  type: str
files:
  description: Format (V(md), V(csv), V(json), V(html)) to path of the report files (written, or in check mode, that
    would be written).
  returned: always
  type: dict
  sample: {md: /srv/aisbench/reports/2026-12-02/fleet-report.md}
latest:
  description: Path of the C(latest) symlink, null with O(update_latest=false).
  returned: always
  type: str
fleet:
  description: Fleet pass@1 rows, one per benchmark, agent and model.
  returned: always
  type: list
  elements: dict
  sample:
    - {benchmark: hello, agent: oracle, model: null, pass_at_1: 0.666667, mean_reward: 0.666667, primary_key: reward,
       previous_pass_at_1: 0.6, delta: 0.066667, change: improved, n_pass: 2, n_completed: 3, n_errored: 0,
       n_cancelled: 0, n_hosts: 2, n_input_tokens: null, n_cache_tokens: null, n_output_tokens: null, cost_usd: null}
fleet_pass_at_1:
  description: Passed over completed trials of every row and host together, null without any.
  returned: always
  type: float
regressions:
  description: Fleet rows that regressed (benchmark, agent, model, pass_at_1, previous_pass_at_1, delta).
  returned: always
  type: list
  elements: dict
host_regressions:
  description: Per-host rows that regressed, the same fields plus C(host).
  returned: always
  type: list
  elements: dict
task_regressions:
  description: Tasks that passed the last night they ran and do not tonight, fleet-wide (C(host) null) and per host,
    as C({host, benchmark, task, agent, model, status, label, change, previous_night, previous_status, text, flips,
    flaky, outcomes}); C(text) reads C(passed on 2026-11-30, failed tonight).
  returned: always
  type: list
  elements: dict
task_fixes:
  description: Tasks that did not pass the last night they ran and pass tonight, the same fields.
  returned: always
  type: list
  elements: dict
flaky_tasks:
  description: Tasks whose outcome flipped between pass and not pass at least twice over the history nights.
  returned: always
  type: list
  elements: dict
usage:
  description: The fleet's tokens, cost and phase durations of the night (C(n_input_tokens), C(n_cache_tokens),
    C(n_output_tokens), C(cost_usd), C(n_cost_reported), C(n_completed), C(durations)).
  returned: always
  type: dict
history_nights:
  description: The nights of the pass@1 trend, oldest first, tonight last.
  returned: always
  type: list
  elements: str
failed_hosts:
  description: Hosts that failed, as C({host, stage, error, failed_previous_night}).
  returned: always
  type: list
  elements: dict
no_result_hosts:
  description: Hosts without a completed trial, as C({host, reason}).
  returned: always
  type: list
  elements: dict
counts:
  description: Number of hosts (total, ok, failed, without results), of fleet rows per change, and of task regressions,
    fixes and flaky tasks.
  returned: always
  type: dict
report_warnings:
  description: Problems that did not stop the report (for example an unusable earlier report that was skipped).
  returned: always
  type: list
  elements: str
mode:
  description: V(shard) when the night has a shard plan, else V(replicate).
  returned: always
  type: str
shard:
  description: For a shard night, C(balanced_by), C(rounds), C(hosts), C(n_units), C(n_counted), C(n_missing),
    C(shards) (per job C({host, job, round, state, n_units, n_done, n_missing, n_not_counted})), C(missing) (per
    unit C({host, job, benchmark, task, agent, model, n})) and C(provenance) (per task, agent and model
    C({hosts, jobs, n_trials, n_missing, missing_hosts})); null otherwise.
  returned: always
  type: dict
summary_lines:
  description: A short text summary (fleet table, regressions, task regressions, tokens and cost, failed hosts, hosts
    without results) for M(ansible.builtin.debug).
  returned: always
  type: list
  elements: str
"""
