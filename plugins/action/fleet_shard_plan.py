# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""Controller side of fleet_shard_plan: split the night's units across the hosts, or reuse the night's plan.

The plan lives in REPORT_DIR/NIGHT/shard-plan.json (plugin_utils/_fleet_shard.py computes it); the
fleet report reads the same file to merge the shards.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.aisbench.agent_runtime.plugins.plugin_utils import _fleet_report as fr
from ansible_collections.aisbench.agent_runtime.plugins.plugin_utils import _fleet_shard as fs
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._harbor_runner import job_name_problem
from ansible_collections.aisbench.agent_runtime.plugins.plugin_utils._action import CollectionAction

ARGUMENT_SPEC = dict(
    report_dir=dict(type="path", required=True),
    night=dict(type="str", required=True),
    job_base=dict(type="str", required=True),
    listings=dict(type="dict", required=True),
    rebalance=dict(type="bool", default=False),
    balance=dict(type="str", default="auto", choices=["auto", "count"]),
    history=dict(type="int", default=fr.DEFAULT_HISTORY),
)


def _earlier_reports(report_dir, night, history):
    _previous_night, _previous, loaded, _warnings = fr.find_history(report_dir, night, None, history)
    return [report for _name, report in loaded]


def _host_trials(report_dir, night, hosts):
    result = {}
    for host in hosts:
        path = os.path.join(report_dir, night, fr.HOSTS_SUBDIR, host, fr.SUMMARY_FILE)
        result[host] = fs.load_host_trials(path)
    return result


def run_plan(params, check_mode=False):
    """The task's result: each host's jobs for tonight, the plan's summary, and what changed."""
    problem = fr.night_problem(params["night"])
    if problem:
        raise fs.ShardError("night %r refused: %s" % (params["night"], problem))
    problem = job_name_problem(params["job_base"])
    if problem:
        raise fs.ShardError("job_base %r refused: %s" % (params["job_base"], problem))
    if not 1 <= params["history"] <= 366:
        raise fs.ShardError("history %r refused: 1 to 366 nights" % params["history"])
    report_dir = params["report_dir"]
    night = params["night"]
    listing, host_problems = fs.choose_listing(params["listings"])
    usable = sorted(host for host in params["listings"] if host not in host_problems)
    path = fs.plan_path(report_dir, night)
    plan = fs.load_plan(path)
    durations = {}
    if params["balance"] == "auto":
        durations = fs.measured_durations(_earlier_reports(report_dir, night, params["history"]))
    created = plan is None
    moved = []
    if created:
        plan = fs.new_plan(night, params["job_base"], listing, usable, durations)
    else:
        if plan.get("digest") != listing["digest"]:
            raise fs.ShardError(
                "night %s was planned for another matrix or task list (%s); run it with the matrix and tasks it was "
                "planned for, or use another night id (removing the plan starts the night over: its finished jobs "
                "are not counted)" % (night, path))
        if params["rebalance"]:
            hosts = sorted(set(a["host"] for a in plan["assignments"]))
            moved = fs.rebalance(plan, usable, _host_trials(report_dir, night, hosts), durations)
    text = fs.render_plan(plan)
    previous = fr.read_text(path)
    changed = previous != text
    if changed and not check_mode:
        os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
        fr.write_file(path, text.encode("utf-8"))
    hosts = sorted(set(params["listings"]) | set(a["host"] for a in plan["assignments"]))
    jobs = dict((host, fs.host_jobs(plan, host)) for host in hosts)
    idle = [a["host"] for a in plan["assignments"] if a["state"] == fs.ACTIVE and a["host"] not in usable]
    return {
        "changed": changed,
        "plan_file": path,
        "created": created,
        "moved": moved,
        "jobs": jobs,
        "host_problems": host_problems,
        "unusable_hosts_with_units": sorted(set(idle)),
        "balanced_by": plan["balanced_by"],
        "n_units": sum(fs.plan_units(plan).values()),
        "rounds": len(plan["rounds"]),
        "summary_lines": ["%s: %s" % (host, ", ".join("%s (%d units)" % (job["name"], job["n_units"]) for job in jobs[host])
                                      or "no units") for host in hosts],
    }


class ActionModule(CollectionAction):
    """Runs on the controller: the hosts' listings came from harbor_matrix_units, the plan is a controller file."""

    NAME = "fleet_shard_plan"

    def run(self, tmp=None, task_vars=None):
        return self._run_on_controller(task_vars, ARGUMENT_SPEC, run_plan, fs.ShardError)
