# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""Controller side of fleet_report: reads the per-host summaries, builds the night's report and writes it.

Everything runs on the controller (the inputs were fetched there). The report document, the tables and
the Markdown/CSV/JSON files come from plugin_utils/_fleet_report.py; the HTML page is rendered here from
the Jinja2 templates shipped in the collection (templates/fleet_report/), with autoescaping on.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import time

from ansible_collections.aisbench.agent_runtime.plugins.plugin_utils import _fleet_report as fr
from ansible_collections.aisbench.agent_runtime.plugins.plugin_utils import _fleet_shard as fs
from ansible_collections.aisbench.agent_runtime.plugins.plugin_utils._action import CollectionAction

TEMPLATE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "templates", "fleet_report")
HTML_TEMPLATE = "report.html.j2"
FLEET_RETURN_FIELDS = ("benchmark", "agent", "model", "pass_at_1", "mean_reward", "primary_key", "previous_pass_at_1",
                       "delta", "change", "n_pass", "n_completed", "n_errored", "n_cancelled", "n_hosts",
                       "n_input_tokens", "n_cache_tokens", "n_output_tokens", "cost_usd")

ARGUMENT_SPEC = dict(
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
    history=dict(type="int", default=fr.DEFAULT_HISTORY),
    update_latest=dict(type="bool", default=True),
    reward_key=dict(type="str", no_log=False),
)


class FleetReportError(Exception):
    def __init__(self, msg, result=None):
        super(FleetReportError, self).__init__(msg)
        self.result = result or {}


def html_renderer(template_dir=TEMPLATE_DIR):
    """render(context) -> the HTML page, from the collection's Jinja2 templates (autoescaped)."""
    import jinja2  # pylint: disable=import-outside-toplevel  # the controller has it (ansible-core needs it)

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(os.path.normpath(template_dir)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    template = env.get_template(HTML_TEMPLATE)
    return template.render


def validate(params):
    """Refuse bad options before anything is read or written."""
    problem = fr.night_problem(params["night"])
    if problem:
        raise FleetReportError("night %r refused: %s" % (params["night"], problem))
    if params["previous_night"] is not None:
        problem = fr.night_problem(params["previous_night"])
        if problem:
            raise FleetReportError("previous_night %r refused: %s" % (params["previous_night"], problem))
    if not 0 <= params["threshold"] <= 1:
        raise FleetReportError("threshold %r refused: a pass@1 difference between 0 and 1" % params["threshold"])
    if params["min_trials"] < 1:
        raise FleetReportError("min_trials %r refused: at least 1" % params["min_trials"])
    if not 1 <= params["history"] <= 366:
        raise FleetReportError("history %r refused: 1 to 366 nights" % params["history"])
    report_dir = params["report_dir"]
    if os.path.lexists(report_dir) and not os.path.isdir(report_dir):
        raise FleetReportError("report_dir %s exists and is not a directory" % report_dir)
    for field in ("summaries", "failures"):
        for item in params[field]:
            if not item["host"].strip():
                raise FleetReportError("%s: an entry has an empty host name" % field)
    for field in ("expected_hosts", "dropped_hosts"):
        for host in params[field]:
            if not host.strip():
                raise FleetReportError("%s: an empty host name" % field)
    if params["update_latest"]:
        problem = fr.latest_problem(report_dir)
        if problem:
            raise FleetReportError(problem)


def shard_merge(night_dir, hosts_dir, summaries, reward_key):
    """{plan, merge} when the night was run in shard mode (its night directory holds the plan), else None."""
    try:
        plan = fs.load_plan(os.path.join(night_dir, fs.PLAN_FILE))
    except fs.ShardError as exc:
        raise FleetReportError("the night's shard plan cannot be used: %s" % exc)
    if plan is None:
        return None
    paths = dict((item["host"], item["path"]) for item in summaries)
    host_trials = {}
    for host in sorted(set(a["host"] for a in plan["assignments"])):
        path = paths.get(host) or os.path.join(hosts_dir, host, fr.SUMMARY_FILE)
        host_trials[host] = fs.load_host_trials(path)
    return {"plan": plan, "merge": fs.merge(plan, host_trials, reward_key)}


def run_report(params, check_mode=False, diff=False, render_html=None):
    """Build the night's report and write its files (not in check mode); the task's result."""
    params = dict(params)
    if params.get("night") is None:
        params["night"] = time.strftime("%Y-%m-%d", time.gmtime())
    validate(params)
    report_dir = params["report_dir"]
    night = params["night"]
    night_dir = os.path.join(report_dir, night)
    hosts_dir = params["hosts_dir"] or os.path.join(night_dir, fr.HOSTS_SUBDIR)
    if not os.path.isdir(hosts_dir) and not (params["summaries"] or params["failures"] or params["expected_hosts"]
                                             or params["dropped_hosts"]):
        raise FleetReportError("nothing to report: hosts_dir %s is not a directory and no summaries, failures, "
                               "expected_hosts or dropped_hosts were given" % hosts_dir)
    try:
        hosts = fr.collect_hosts(night_dir, hosts_dir, params["summaries"], params["failures"],
                                 params["expected_hosts"], params["dropped_hosts"])
    except fr.ReportError as exc:
        raise FleetReportError(str(exc))
    shard = shard_merge(night_dir, hosts_dir, params["summaries"], params["reward_key"])
    previous_night, previous, history, warnings = fr.find_history(report_dir, night, params["previous_night"],
                                                                  params["history"])
    if params["previous_night"] and previous is None:
        raise FleetReportError("previous_night %s: %s" % (params["previous_night"], "; ".join(warnings)))
    report = fr.build_report(night, hosts, previous_night, previous, params["threshold"], params["min_trials"],
                             warnings, history, params["history"], shard)

    paths = fr.report_paths(night_dir)
    contents = fr.render_all(report, render_html or html_renderer())
    pending = fr.files_to_write(paths, contents)
    latest_path, latest_target = (None, None)
    if params["update_latest"]:
        latest_path, latest_target = fr.latest_needs_update(report_dir, night)

    result = {
        "changed": bool(pending or latest_target),
        "night": night,
        "night_dir": night_dir,
        "previous_night": report["previous_night"],
        "history_nights": report["history"]["nights"],
        "files": paths,
        "latest": latest_path,
        "fleet": [dict((field, row[field]) for field in FLEET_RETURN_FIELDS) for row in report["fleet"]["rows"]],
        "fleet_pass_at_1": report["fleet"]["pass_at_1"],
        "usage": report["fleet"]["usage"],
        "regressions": report["regressions"],
        "host_regressions": report["host_regressions"],
        "task_regressions": report["task_regressions"],
        "task_fixes": report["task_fixes"],
        "flaky_tasks": report["flaky_tasks"],
        "failed_hosts": report["failed_hosts"],
        "no_result_hosts": report["no_result_hosts"],
        "counts": report["counts"],
        "mode": report["mode"],
        "shard": report["shard"],
        "report_warnings": report["warnings"],
        "summary_lines": fr.summary_lines(report),
    }
    if diff and "md" in pending:
        before = fr.read_text(paths["md"])
        result["diff"] = {"before": before or "", "after": contents["md"].decode("utf-8"),
                          "before_header": paths["md"] if before is not None else "%s (absent)" % paths["md"],
                          "after_header": paths["md"]}
    if check_mode:
        return result
    try:
        for path in (report_dir, night_dir):
            if not os.path.isdir(path):
                os.makedirs(path, mode=0o755)
        for fmt in pending:
            fr.write_file(paths[fmt], contents[fmt])
        if latest_target:
            fr.point_latest(latest_path, latest_target)
    except OSError as exc:
        raise FleetReportError("cannot write the fleet report to %s: %s" % (night_dir, exc), result)
    return result


class ActionModule(CollectionAction):
    """Nothing runs on the target: the inputs and the report are on the controller."""

    NAME = "fleet_report"

    def run(self, tmp=None, task_vars=None):
        diff = self._play_context.diff
        result = self._run_on_controller(task_vars, ARGUMENT_SPEC, lambda params, check_mode: run_report(
            params, check_mode=check_mode, diff=diff), FleetReportError)
        if not result.get("failed"):
            for warning in result["report_warnings"]:
                self._display.warning(warning)
        return result
