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
  - "Runs on the controller (C(delegate_to: localhost), C(run_once: true)) after the per-host summary files of
    M(aisbench.agent_runtime.harbor_job_info) have been fetched. Reads one summary and/or one failure record per host
    and writes C(fleet-report.md), C(.csv), C(.json) and C(.html) into C(REPORT_DIR/NIGHT/)."
  - "Input layout (the defaults): C(REPORT_DIR/NIGHT/hosts/HOST/summary.json), the JSON file written by
    M(aisbench.agent_runtime.harbor_job_info), and C(REPORT_DIR/NIGHT/hosts/HOST/failure.json),
    C({\"host\": HOST, \"stage\": STAGE, \"error\": TEXT}) for a host that failed. O(summaries) and O(failures) give
    them explicitly instead."
  - The report has pass@1 by benchmark, agent and model per host and across the fleet. The fleet value is the sum of
    passed trials over the sum of scored trials of every host, not a mean of the hosts' pass@1.
  - It compares each row with the latest earlier night in O(report_dir) that has a C(fleet-report.json) (night
    directories sorted by name) and marks it C(improved), C(regressed), C(unchanged), C(new) or C(gone), with deltas; a
    change counts when pass@1 moves by at least O(threshold) and both nights scored at least O(min_trials) trials.
  - It lists the hosts that failed (stage and error) and the hosts without results. A summary file that cannot be read
    or is not a harbor_job_info summary makes that host failed at stage C(report); it never stops the report.
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
        description: The harbor_job_info summary JSON of that host, on the controller.
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
    description: Both nights must have scored at least this many trials of a row for it to count as improved or
      regressed; otherwise the row stays C(unchanged) (its delta is still shown).
    type: int
    default: 1
  update_latest:
    description: Maintain the C(REPORT_DIR/latest) symlink.
    type: bool
    default: true
notes:
  - pass@1 is passed trials over scored trials (completed trials minus cancelled ones; errored trials count as
    failures), as in M(aisbench.agent_runtime.harbor_job_info).
  - A failed host whose summary is still readable (for example a job that timed out) keeps its partial results in the
    tables and is listed as failed.
  - Per-host comparisons cover hosts with results on both nights; a host that failed or has no results is listed as
    such instead of as C(gone) rows.
requirements:
  - Python standard library only.
seealso:
  - module: aisbench.agent_runtime.harbor_job_info
  - module: ansible.builtin.fetch
author: aisbench maintainers
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Nothing is written; RV(changed) says whether a file or the link would change.
  diff_mode:
    support: full
    details: The diff shows C(fleet-report.md) before and after.
  platform:
    platforms: posix
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
    - {benchmark: hello, agent: oracle, model: null, pass_at_1: 0.666667, previous_pass_at_1: 0.6, delta: 0.066667,
       change: improved, n_pass: 2, n_scored: 3, n_errored: 0, n_hosts: 2}
fleet_pass_at_1:
  description: Passed over scored trials of every row and host together, null without any.
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
failed_hosts:
  description: Hosts that failed, as C({host, stage, error, failed_previous_night}).
  returned: always
  type: list
  elements: dict
no_result_hosts:
  description: Hosts without a scored trial, as C({host, reason}).
  returned: always
  type: list
  elements: dict
counts:
  description: Number of hosts (total, ok, failed, without results) and of fleet rows per change.
  returned: always
  type: dict
report_warnings:
  description: Problems that did not stop the report (for example an unusable earlier report that was skipped).
  returned: always
  type: list
  elements: str
summary_lines:
  description: A short text summary (fleet table, regressions, failed hosts, hosts without results) for
    M(ansible.builtin.debug).
  returned: always
  type: list
  elements: str
"""

import os
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aisbench.agent_runtime.plugins.module_utils import fleet_report as fr

FLEET_RETURN_FIELDS = ("benchmark", "agent", "model", "pass_at_1", "previous_pass_at_1", "delta", "change", "n_pass",
                       "n_scored", "n_errored", "n_hosts")


def _validate(module, params):
    problem = fr.night_problem(params["night"])
    if problem:
        module.fail_json(msg="night %r refused: %s" % (params["night"], problem))
    if params["previous_night"] is not None:
        problem = fr.night_problem(params["previous_night"])
        if problem:
            module.fail_json(msg="previous_night %r refused: %s" % (params["previous_night"], problem))
    if not 0 <= params["threshold"] <= 1:
        module.fail_json(msg="threshold %r refused: a pass@1 difference between 0 and 1" % params["threshold"])
    if params["min_trials"] < 1:
        module.fail_json(msg="min_trials %r refused: at least 1" % params["min_trials"])
    report_dir = params["report_dir"]
    if os.path.lexists(report_dir) and not os.path.isdir(report_dir):
        module.fail_json(msg="report_dir %s exists and is not a directory" % report_dir)
    for field in ("summaries", "failures"):
        for item in params[field]:
            if not item["host"].strip():
                module.fail_json(msg="%s: an entry has an empty host name" % field)
    for field in ("expected_hosts", "dropped_hosts"):
        for host in params[field]:
            if not host.strip():
                module.fail_json(msg="%s: an empty host name" % field)
    if params["update_latest"]:
        problem = fr.latest_problem(report_dir)
        if problem:
            module.fail_json(msg=problem)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            report_dir=dict(type="path", required=True),
            night=dict(type="str"),
            hosts_dir=dict(type="path"),
            summaries=dict(type="list", elements="dict", default=[], options=dict(
                host=dict(type="str", required=True),
                path=dict(type="path", required=True),
            )),
            failures=dict(type="list", elements="dict", default=[], options=dict(
                host=dict(type="str", required=True),
                stage=dict(type="str", default="unknown"),
                error=dict(type="str", default="no error recorded"),
            )),
            expected_hosts=dict(type="list", elements="str", default=[]),
            dropped_hosts=dict(type="list", elements="str", default=[]),
            previous_night=dict(type="str"),
            threshold=dict(type="float", default=0.05),
            min_trials=dict(type="int", default=1),
            update_latest=dict(type="bool", default=True),
        ),
        supports_check_mode=True,
    )
    params = module.params
    if params["night"] is None:
        params["night"] = time.strftime("%Y-%m-%d", time.gmtime())
    _validate(module, params)

    report_dir = params["report_dir"]
    night = params["night"]
    night_dir = os.path.join(report_dir, night)
    hosts_dir = params["hosts_dir"] or os.path.join(night_dir, fr.HOSTS_SUBDIR)
    if not os.path.isdir(hosts_dir) and not (params["summaries"] or params["failures"] or params["expected_hosts"]
                                             or params["dropped_hosts"]):
        module.fail_json(msg="nothing to report: hosts_dir %s is not a directory and no summaries, failures, "
                             "expected_hosts or dropped_hosts were given" % hosts_dir)

    try:
        hosts = fr.collect_hosts(night_dir, hosts_dir, params["summaries"], params["failures"], params["expected_hosts"],
                                 params["dropped_hosts"])
    except fr.ReportError as exc:
        module.fail_json(msg=str(exc))
    previous_night, previous, warnings = fr.find_previous(report_dir, night, params["previous_night"])
    if params["previous_night"] and previous is None:
        module.fail_json(msg="previous_night %s: %s" % (params["previous_night"], "; ".join(warnings)))
    report = fr.build_report(night, hosts, previous_night, previous, params["threshold"], params["min_trials"], warnings)
    for warning in warnings:
        module.warn(warning)

    paths = fr.report_paths(night_dir)
    contents = fr.render_all(report)
    pending = fr.files_to_write(paths, contents)
    latest_path, latest_target = (None, None)
    if params["update_latest"]:
        latest_path, latest_target = fr.latest_needs_update(report_dir, night)

    result = {
        "changed": bool(pending or latest_target),
        "night": night,
        "night_dir": night_dir,
        "previous_night": report["previous_night"],
        "files": paths,
        "latest": latest_path,
        "fleet": [dict((field, row[field]) for field in FLEET_RETURN_FIELDS) for row in report["fleet"]["rows"]],
        "fleet_pass_at_1": report["fleet"]["pass_at_1"],
        "regressions": report["regressions"],
        "host_regressions": report["host_regressions"],
        "failed_hosts": report["failed_hosts"],
        "no_result_hosts": report["no_result_hosts"],
        "counts": report["counts"],
        "report_warnings": report["warnings"],
        "summary_lines": fr.summary_lines(report),
    }
    if module._diff and "md" in pending:
        before = fr.read_text(paths["md"])
        result["diff"] = {"before": before or "", "after": contents["md"].decode("utf-8"),
                          "before_header": paths["md"] if before is not None else "%s (absent)" % paths["md"],
                          "after_header": paths["md"]}

    if module.check_mode:
        module.exit_json(**result)
    try:
        for path in (report_dir, night_dir):
            if not os.path.isdir(path):
                os.makedirs(path, mode=0o755)
        for fmt in pending:
            fr.write_file(paths[fmt], contents[fmt])
        if latest_target:
            fr.point_latest(latest_path, latest_target)
    except OSError as exc:
        module.fail_json(msg="cannot write the fleet report to %s: %s" % (night_dir, exc), **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
