#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: fleet_shard_plan
short_description: Split one night's benchmark matrix across the fleet (shard mode of the nightly playbook)
version_added: 0.2.0
description:
  - "An action plugin: runs on the controller (use C(run_once: true)). Takes every host's
    M(aisbench.agent_runtime.harbor_matrix_units) result and returns the Harbor jobs each host runs tonight, so that
    every (task, agent, model, attempt) unit of the matrix runs on exactly one host."
  - "The split moves whole tasks (each with all its agents and attempts): each host's part is one Harbor job, the
    matrix with C(datasets[].task_names) cut to its tasks, named C(JOB_BASE-HOST). Tasks go heaviest first to the least
    loaded host (ties: fewer tasks, then host name), so the same inputs give the same plan. A task's weight is its
    trial time measured on the latest earlier nights of O(report_dir) (the fleet report keeps it per task, agent and
    model) where known, else the mean of the known ones, else 1 (balance by count)."
  - The plan is written to C(REPORT_DIR/NIGHT/shard-plan.json). A rerun of the same night reuses it (same job names, so
    finished jobs are not run again and interrupted ones are resumed); it refuses a night whose matrix or task list
    changed.
  - Hosts that list another matrix or other tasks than most hosts get no part (RV(host_problems)).
  - With O(rebalance), the units of hosts that are not among the listings now (unreachable, or failed before they
    listed) and that their last fetched summary does not show finished move to the listed hosts, as new jobs named
    C(JOB_BASE-rN-HOST) (round N). What the old host finished keeps counting; what it adds later does not.
  - M(aisbench.agent_runtime.fleet_report) reads the same plan file to merge the hosts' trials into one result.
options:
  report_dir:
    description: Directory holding one directory per night (as for M(aisbench.agent_runtime.fleet_report)).
    type: path
    required: true
  night:
    description: The night id (a directory name under O(report_dir)).
    type: str
    required: true
  job_base:
    description: Start of the shard jobs' names, for example C(nightly-2026-12-02).
    type: str
    required: true
  listings:
    description: Host name to that host's M(aisbench.agent_runtime.harbor_matrix_units) result, for the hosts that can
      run a part tonight.
    type: dict
    required: true
  rebalance:
    description: Move the unfinished units of planned hosts missing from O(listings) to the hosts in it.
    type: bool
    default: false
  balance:
    description: V(auto) weighs tasks by their measured trial time where earlier nights recorded it; V(count) gives
      every unit the same weight.
    type: str
    choices: [auto, count]
    default: auto
  history:
    description: Earlier nights read for measured trial times.
    type: int
    default: 14
author: aisbench maintainers (!UNKNOWN)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - aisbench.agent_runtime.attributes
attributes:
  check_mode:
    details: The plan is computed and returned but not written.
seealso:
  - module: aisbench.agent_runtime.harbor_matrix_units
  - module: aisbench.agent_runtime.fleet_report
"""

EXAMPLES = r"""
- name: Split the night's matrix across the hosts that listed it
  aisbench.agent_runtime.fleet_shard_plan:
    report_dir: /srv/aisbench/reports
    night: "2026-12-02"
    job_base: nightly-2026-12-02
    listings: "{{ dict(ansible_play_hosts | zip(ansible_play_hosts | map('extract', hostvars, 'units'))) }}"
    rebalance: true
  delegate_to: localhost
  run_once: true
  register: plan
"""

RETURN = r"""
jobs:
  description: Host name to the jobs it runs tonight, C([{name, config, round, n_units}]) (C(config) is the Harbor job
    config for M(aisbench.agent_runtime.harbor_job)).
  returned: always
  type: dict
plan_file:
  description: The plan on the controller.
  returned: always
  type: str
created:
  description: Whether this run made the plan (the night's first run).
  returned: always
  type: bool
moved:
  description: With O(rebalance), the retired jobs C({host, job, n_units, n_kept}) whose units moved.
  returned: always
  type: list
  elements: dict
host_problems:
  description: Host to why it gets no part (its matrix or task list differs).
  returned: always
  type: dict
unusable_hosts_with_units:
  description: Planned hosts not in O(listings) that still hold units (reported as missing until a rebalance).
  returned: always
  type: list
  elements: str
balanced_by:
  description: V(duration) when measured trial times weighed the split, else V(count).
  returned: always
  type: str
n_units:
  description: Units of the night's matrix.
  returned: always
  type: int
rounds:
  description: Rounds of the plan (1 until a rebalance).
  returned: always
  type: int
summary_lines:
  description: One line per host with its jobs and units.
  returned: always
  type: list
  elements: str
"""
