# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0 (see LICENSE)
"""Fleet-wide nightly report from per-host harbor_job_summary files (standard library only).

Used by the fleet_report action plugin on the controller. Layout of a report directory
(see docs/fleet_report.md)::

    REPORT_DIR/NIGHT/hosts/HOST/summary.json   harbor_job_summary's JSON file, fetched from HOST
    REPORT_DIR/NIGHT/hosts/HOST/failure.json   {"host": HOST, "stage": STAGE, "error": TEXT}
    REPORT_DIR/NIGHT/fleet-report.{json,csv,md,html}
    REPORT_DIR/latest -> NIGHT                 newest night holding a fleet-report.json

This file builds the report document (fleet-report.json), the tables every format shows
(report_tables) and the Markdown and CSV files; the HTML page is rendered from the same tables by
the action plugin's Jinja2 templates. Everything is a pure function of the inputs (no clock, no
absolute paths that change between runs), so a rerun on the same inputs gives byte-identical files.

The counting rules are harbor_results.score_trials's: pass@1 = passed trials / scored trials, the trials
Harbor's own mean counts (Harbor 0.25: every completed trial, errored and cancelled ones included; 0.26: those
whose reward is valid). Across hosts (and jobs) the counts are summed, never the hosts' pass@1 averaged.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import csv
import io
import json
import math
import os
import re

from ansible_collections.aisbench.agent_runtime.plugins.module_utils._atomic_file import atomic_symlink, atomic_write
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._harbor_results import (
    STEP_PHASES,
    TOKEN_FIELDS,
    format_steps,
    per_completed,
    read_regular_file,
)
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._report_cells import csv_cell, md_escape, md_table
from ansible_collections.aisbench.agent_runtime.plugins.plugin_utils._fleet_shard import MISSING_EXCEPTION, PLAN_FILE
from ansible_collections.aisbench.agent_runtime.plugins.plugin_utils._text_table import text_table

REPORT_FORMAT_VERSION = 2
# Earlier reports still read as previous nights and history (their pass@1 left cancelled trials out).
READABLE_FORMATS = (1, 2)
REPORT_BASENAME = "fleet-report"
REPORT_FORMATS = ("json", "csv", "md", "html")
HOSTS_SUBDIR = "hosts"
SUMMARY_FILE = "summary.json"
FAILURE_FILE = "failure.json"
# What the night's model gateway served on a host (nightly.yml writes it; docs/model_gateway.md).
GATEWAY_FILE = "model-gateway.json"
GATEWAY_FIELDS = ("requests", "failed_requests", "prompt_tokens", "completion_tokens", "cost_usd")
LATEST_LINK = "latest"
# Stage recorded for a host whose summary file cannot be used.
REPORT_STAGE = "report"
CHANGES = ("regressed", "improved", "new", "gone", "unchanged")
NIGHT_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
COUNTERS = ("n_completed", "n_scored", "n_errored", "n_cancelled", "n_pass")
PHASES = ("environment_setup", "agent_setup", "agent_execution", "verifier", "total")
PHASE_TITLES = {"environment_setup": "environment", "agent_setup": "agent setup", "agent_execution": "agent",
                "verifier": "verifier", "total": "trial"}
TASK_COUNTERS = ("n_trials", "n_pass", "n_fail", "n_error")
MAX_ERROR_CHARS = 500
DEFAULT_HISTORY = 14
PASS_PPM = 1000000


class ReportError(Exception):
    """Bad input that stops the report (the task fails, nothing is written)."""


class InputError(Exception):
    """A per-host input that cannot be used (reported as that host's failure)."""


def night_problem(night):
    """Why night is not usable as a night id (a directory name), or None."""
    if not isinstance(night, str) or not NIGHT_PATTERN.match(night):
        return "use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"
    if night == LATEST_LINK or ".." in night:
        return "'latest' and '..' are reserved"
    return None


def _short(text):
    text = " ".join(str(text).split())
    return text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS - 3] + "..."


def _read_json(path, label):
    try:
        data = read_regular_file(path)  # never blocks on a FIFO
    except FileNotFoundError:
        raise InputError("%s is missing" % label)
    except OSError as exc:
        raise InputError("cannot read %s: %s" % (label, exc.strerror or exc))
    if not data.strip():
        raise InputError("%s is empty" % label)
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputError("%s is not UTF-8 text" % label)
    except ValueError as exc:
        raise InputError("%s is not valid JSON: %s" % (label, exc))


def _count(value, where):
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError("%s: expected a count, got %r" % (where, value))
    return value


def _number(value, where):
    """A non-negative number or None (tokens, cost, seconds, reward sums)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or value < 0:
        raise InputError("%s: expected a number, got %r" % (where, value))
    return value


def _reward(value, where):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise InputError("%s: expected a number, got %r" % (where, value))
    return value


def _label(value, where, optional=False):
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value:
        raise InputError("%s: expected a name, got %r" % (where, value))
    return value


def _dict(value, where):
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError("%s is not an object" % where)
    return value


def _round(value, digits=6):
    return None if value is None else round(value, digits)


# --- rows: one per (benchmark, agent, model) -------------------------------------------------

def _new_row(benchmark, agent, model):
    row = {"benchmark": benchmark, "agent": agent, "model": model, "exceptions": {}, "primary_keys": [],
           "reward_sums": {}, "n_cost_reported": 0, "tasks": {}}
    for field in COUNTERS:
        row[field] = 0
    for field in TOKEN_FIELDS:
        row[field] = None
    row["durations"] = dict((phase, {"total_sec": 0.0, "n": 0}) for phase in PHASES)
    # Multi-step trials: (task, step) -> totals (harbor_results' evals[].steps), in the order the trials ran them.
    row["steps"] = {}
    return row


def _merge_steps(steps, other_steps):
    """Add step totals (harbor_results' evals[].steps entries) into steps ((task, step) -> totals)."""
    for step in other_steps:
        mine = steps.setdefault((step["task"], step["step"]), {
            "task": step["task"], "step": step["step"], "index": step["index"], "n_trials": 0, "n_errored": 0,
            "exceptions": {}, "durations": dict((phase, {"total_sec": 0.0, "n": 0}) for phase in STEP_PHASES)})
        mine["n_trials"] += step["n_trials"]
        mine["n_errored"] += step["n_errored"]
        for name, number in step["exceptions"].items():
            mine["exceptions"][name] = mine["exceptions"].get(name, 0) + number
        for phase in STEP_PHASES:
            mine["durations"][phase]["total_sec"] = _round(mine["durations"][phase]["total_sec"]
                                                           + step["durations"][phase]["total_sec"], 3)
            mine["durations"][phase]["n"] += step["durations"][phase]["n"]


def _add_number(row, field, value):
    if value is not None:
        row[field] = _round((row[field] or 0) + value)


def _merge_row(row, other):
    """Add the counters, rewards, usage, durations and tasks of other into row."""
    for field in COUNTERS:
        row[field] += other[field]
    for name, number in other["exceptions"].items():
        row["exceptions"][name] = row["exceptions"].get(name, 0) + number
    for key in other["primary_keys"]:
        if key not in row["primary_keys"]:
            row["primary_keys"].append(key)
    for key, total in other["reward_sums"].items():
        row["reward_sums"][key] = _round(row["reward_sums"].get(key, 0.0) + total)
    for field in TOKEN_FIELDS:
        _add_number(row, field, other[field])
    row["n_cost_reported"] += other["n_cost_reported"]
    for phase in PHASES:
        row["durations"][phase]["total_sec"] = _round(row["durations"][phase]["total_sec"]
                                                      + other["durations"][phase]["total_sec"], 3)
        row["durations"][phase]["n"] += other["durations"][phase]["n"]
    # A finished row (a host's) lists its steps; one being summed keeps them by name.
    _merge_steps(row["steps"], other["steps"].values() if isinstance(other["steps"], dict) else other["steps"])
    for name, task in other["tasks"].items():
        mine = row["tasks"].setdefault(name, _new_task())
        for field in TASK_COUNTERS + ("n_timed",):
            mine[field] += task[field]
        mine["total_sec"] = _round(mine["total_sec"] + task["total_sec"], 3)
        for exc, number in task["exceptions"].items():
            mine["exceptions"][exc] = mine["exceptions"].get(exc, 0) + number


def _new_task():
    task = dict((field, 0) for field in TASK_COUNTERS)
    task["exceptions"] = {}
    # Trial time of the task (summaries from before it was recorded have none): shard plans balance by it.
    task["total_sec"] = 0.0
    task["n_timed"] = 0
    return task


def _eval_row(ev, where):
    """One summary eval as a row (validated)."""
    key = (_label(ev.get("benchmark"), where + ".benchmark"), _label(ev.get("agent"), where + ".agent"),
           _label(ev.get("model"), where + ".model", optional=True))
    row = _new_row(*key)
    for field in COUNTERS:
        row[field] = _count(ev.get(field, 0), "%s.%s" % (where, field))
    if "n_scored" not in ev:
        # A summary from before Harbor 0.26's reward_valid was read: every completed trial was scored.
        row["n_scored"] = row["n_completed"]
    for name, number in _dict(ev.get("exceptions"), where + ".exceptions").items():
        row["exceptions"][str(name)] = _count(number, where + ".exceptions")
    primary = ev.get("primary_key")
    if primary is not None:
        row["primary_keys"].append(_label(primary, where + ".primary_key"))
    for key_name, reward in _dict(ev.get("rewards"), where + ".rewards").items():
        reward = _dict(reward, "%s.rewards.%s" % (where, key_name))
        row["reward_sums"][str(key_name)] = _reward(reward.get("sum", 0.0), "%s.rewards.%s.sum" % (where, key_name))
    if primary is None and "rewards" not in ev:
        # A summary from before reward keys were recorded: its passes are its reward.
        row["reward_sums"]["reward"] = float(row["n_pass"])
        row["primary_keys"].append("reward")
    for field in TOKEN_FIELDS:
        row[field] = _number(ev.get(field), "%s.%s" % (where, field))
    row["n_cost_reported"] = _count(ev.get("n_cost_reported", 0), where + ".n_cost_reported")
    steps = ev.get("steps") or []
    if not isinstance(steps, list):
        raise InputError("%s.steps is not a list" % where)
    _merge_steps(row["steps"], [_step_entry(step, "%s.steps[%d]" % (where, index)) for index, step in enumerate(steps)])
    for phase, timing in _dict(ev.get("durations"), where + ".durations").items():
        if phase in row["durations"]:
            timing = _dict(timing, "%s.durations.%s" % (where, phase))
            row["durations"][phase] = {
                "total_sec": _number(timing.get("total_sec", 0.0), "%s.durations.%s.total_sec" % (where, phase)) or 0.0,
                "n": _count(timing.get("n", 0), "%s.durations.%s.n" % (where, phase))}
    tasks = ev.get("tasks") or []
    if not isinstance(tasks, list):
        raise InputError("%s.tasks is not a list" % where)
    for index, task in enumerate(tasks):
        task_where = "%s.tasks[%d]" % (where, index)
        task = _dict(task, task_where)
        mine = row["tasks"].setdefault(_label(task.get("task"), task_where + ".task"), _new_task())
        for field in TASK_COUNTERS + ("n_timed",):
            mine[field] += _count(task.get(field, 0), "%s.%s" % (task_where, field))
        mine["total_sec"] = _round(mine["total_sec"] + (_number(task.get("total_sec"), task_where + ".total_sec") or 0.0), 3)
        for exc, number in _dict(task.get("exceptions"), task_where + ".exceptions").items():
            mine["exceptions"][str(exc)] = mine["exceptions"].get(str(exc), 0) + _count(number, task_where + ".exceptions")
    return key, row


def _step_entry(step, where):
    """One step of a summary eval's steps (validated)."""
    step = _dict(step, where)
    entry = {"task": _label(step.get("task"), where + ".task"), "step": _label(step.get("step"), where + ".step"),
             "index": _count(step.get("index", 0), where + ".index"),
             "n_trials": _count(step.get("n_trials", 0), where + ".n_trials"),
             "n_errored": _count(step.get("n_errored", 0), where + ".n_errored"), "exceptions": {}, "durations": {}}
    for name, number in _dict(step.get("exceptions"), where + ".exceptions").items():
        entry["exceptions"][str(name)] = _count(number, where + ".exceptions")
    durations = _dict(step.get("durations"), where + ".durations")
    for phase in STEP_PHASES:
        timing = _dict(durations.get(phase), "%s.durations.%s" % (where, phase))
        entry["durations"][phase] = {
            "total_sec": _number(timing.get("total_sec", 0.0), "%s.durations.%s.total_sec" % (where, phase)) or 0.0,
            "n": _count(timing.get("n", 0), "%s.durations.%s.n" % (where, phase))}
    return entry


def _finish_row(row):
    """pass@1, mean reward and key means (harbor_results.per_completed over the scored trials, as in score_trials)."""
    completed = row["n_scored"]
    row["pass_at_1"] = per_completed(row["n_pass"], completed)
    primary = row["primary_keys"][0] if len(row["primary_keys"]) == 1 else None
    row["primary_key"] = primary
    if not completed or (primary is None and row["reward_sums"]):
        row["mean_reward"] = None       # no trial, or jobs that scored different keys
    else:
        # No reward recorded at all counts 0, as Harbor's mean.
        row["mean_reward"] = per_completed(row["reward_sums"].get(primary, 0.0), completed)
    row["reward_means"] = dict((key, per_completed(total, completed))
                               for key, total in sorted(row["reward_sums"].items()))
    row["exceptions"] = dict(sorted(row["exceptions"].items()))
    row["tasks"] = dict(sorted(row["tasks"].items()))
    row["steps"] = [row["steps"][key] for key in sorted(row["steps"], key=lambda key: (key[0], row["steps"][key]["index"]))]
    return row


def _sort_key(key):
    return tuple(part or "" for part in key)


# --- inputs ------------------------------------------------------------------------------

def load_summary(path):
    """Parse one harbor_job_summary JSON file into (rows, jobs); InputError when unusable.

    rows: one per (benchmark, agent, model), summed over the summary's jobs, from ``jobs[].evals``.
    """
    data = _read_json(path, SUMMARY_FILE)
    if not isinstance(data, dict) or not isinstance(data.get("jobs"), list):
        raise InputError("%s is not a harbor_job_summary file (no 'jobs' list)" % SUMMARY_FILE)
    rows = {}
    jobs = []
    for index, job in enumerate(data["jobs"]):
        where = "%s jobs[%d]" % (SUMMARY_FILE, index)
        if not isinstance(job, dict):
            raise InputError("%s is not an object" % where)
        evals = job.get("evals")
        if not isinstance(evals, list):
            raise InputError("%s has no 'evals' list" % where)
        jobs.append({
            "name": str(job.get("name")),
            "status": str(job.get("status")),
            "error": _short(job["error"]) if job.get("error") else None,
        })
        for eval_index, ev in enumerate(evals):
            ev_where = "%s.evals[%d]" % (where, eval_index)
            if not isinstance(ev, dict):
                raise InputError("%s is not an object" % ev_where)
            key, row = _eval_row(ev, ev_where)
            if key in rows:
                _merge_row(rows[key], row)
            else:
                rows[key] = row
    return [_finish_row(rows[key]) for key in sorted(rows, key=_sort_key)], jobs


def load_failure(path):
    """Parse one failure record; InputError when unusable."""
    data = _read_json(path, FAILURE_FILE)
    if not isinstance(data, dict):
        raise InputError("%s is not an object" % FAILURE_FILE)
    return {"host": data.get("host"), "stage": data.get("stage"), "error": data.get("error")}


def load_gateway(path):
    """The gateway's counts of one host's night ({field: number}); InputError when unusable."""
    data = _read_json(path, GATEWAY_FILE)
    if not isinstance(data, dict):
        raise InputError("%s is not an object" % GATEWAY_FILE)
    counts = {}
    for field in GATEWAY_FIELDS:
        value = data.get(field, 0)
        counts[field] = _number(value, "%s %s" % (GATEWAY_FILE, field)) if field == "cost_usd" \
            else _count(value, "%s %s" % (GATEWAY_FILE, field))
    return counts


def discover_hosts(hosts_dir):
    """{host: {"summary", "failure", "gateway": path or None}} from HOSTS_DIR/HOST/ directories."""
    found = {}
    try:
        entries = sorted(os.scandir(hosts_dir), key=lambda e: e.name)
    except FileNotFoundError:
        return found
    except OSError as exc:
        raise ReportError("cannot list %s: %s" % (hosts_dir, exc.strerror or exc))
    for entry in entries:
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = True  # a symlink loop: reading its summary reports why, per host
        if entry.name.startswith(".") or not is_dir:
            continue
        summary = os.path.join(entry.path, SUMMARY_FILE)
        failure = os.path.join(entry.path, FAILURE_FILE)
        gateway = os.path.join(entry.path, GATEWAY_FILE)
        found[entry.name] = {
            "summary": summary if os.path.lexists(summary) or not os.path.isdir(entry.path) else None,
            "failure": failure if os.path.lexists(failure) else None,
            "gateway": gateway if os.path.lexists(gateway) else None,
        }
    return found


def _display_path(path, base):
    """Path relative to base when it lies inside it, so reports do not depend on where they live."""
    absolute = os.path.abspath(path)
    base = os.path.abspath(base)
    if absolute == base or absolute.startswith(base.rstrip(os.sep) + os.sep):
        return os.path.relpath(absolute, base)
    return absolute


def _text(value):
    return None if value is None else _short(value)


DROPPED_STAGE = "dropped"
DROPPED_ERROR = "left the play (unreachable, or failed outside a rescue block); see the Ansible log"


def collect_hosts(night_dir, hosts_dir=None, summaries=None, failures=None, expected_hosts=None, dropped_hosts=None):
    """One entry per host, sorted by name.

    summaries: [{"host", "path"}]; failures: [{"host", "stage", "error"}] (records given
    inline); both win over what hosts_dir holds for the same host. expected_hosts without
    any input are listed as hosts without results. dropped_hosts (hosts that left the play)
    are failed at stage "dropped" unless they have a failure record of their own.
    """
    sources = {}
    if hosts_dir:
        for host, found in discover_hosts(hosts_dir).items():
            sources[host] = {"summary": found["summary"], "failure_file": found["failure"], "failure": None,
                             "gateway_file": found["gateway"]}
    for item in summaries or []:
        sources.setdefault(item["host"], {"summary": None, "failure_file": None, "failure": None})["summary"] = item["path"]
    for item in failures or []:
        entry = sources.setdefault(item["host"], {"summary": None, "failure_file": None, "failure": None})
        entry["failure"] = {"stage": item.get("stage"), "error": item.get("error")}
        entry["failure_file"] = None
    for host in expected_hosts or []:
        sources.setdefault(host, {"summary": None, "failure_file": None, "failure": None})
    for host in dropped_hosts or []:
        entry = sources.setdefault(host, {"summary": None, "failure_file": None, "failure": None})
        if entry["failure"] is None and entry["failure_file"] is None:
            entry["failure"] = {"stage": DROPPED_STAGE, "error": DROPPED_ERROR}
    return [_host_entry(host, sources[host], night_dir) for host in sorted(sources)]


def _host_entry(host, source, night_dir):
    entry = {
        "host": host,
        "status": "ok",
        "stage": None,
        "error": None,
        "reason": None,
        "summary": _display_path(source["summary"], night_dir) if source["summary"] else None,
        "jobs": [],
        "notes": [],
        "rows": [],
        "gone": [],
        "gateway": None,
    }
    if source.get("gateway_file"):
        try:
            entry["gateway"] = load_gateway(source["gateway_file"])
        except InputError as exc:
            entry["notes"].append(str(exc))
    failure = source["failure"]
    if source["failure_file"]:
        try:
            failure = load_failure(source["failure_file"])
        except InputError as exc:
            failure = {"stage": REPORT_STAGE, "error": str(exc)}
        if failure.get("host") not in (None, host):
            entry["notes"].append("%s names host %s" % (FAILURE_FILE, _short(failure["host"])))
    if failure is not None:
        entry["status"] = "failed"
        entry["stage"] = _text(failure.get("stage")) or "unknown"
        entry["error"] = _text(failure.get("error")) or "no error recorded"

    if source["summary"]:
        try:
            rows, jobs = load_summary(source["summary"])
        except InputError as exc:
            if failure is None:
                entry.update(status="failed", stage=REPORT_STAGE, error=str(exc))
            else:
                entry["notes"].append(str(exc))
        else:
            entry["rows"] = rows
            entry["jobs"] = jobs
            for job in jobs:
                if job["error"]:
                    entry["notes"].append("job %s: %s" % (job["name"], job["error"]))
                elif job["status"] != "finished":
                    entry["notes"].append("job %s is %s" % (job["name"], job["status"]))
            for row in rows:
                if len(row["primary_keys"]) > 1:
                    entry["notes"].append("%s: the jobs score different reward keys (%s); no mean reward" % (
                        _row_title(row), ", ".join(row["primary_keys"])))
    _add_totals(entry)
    if entry["status"] == "ok" and not entry["n_completed"]:
        entry["status"] = "no_results"
        if not source["summary"]:
            entry["reason"] = "no %s and no %s" % (SUMMARY_FILE, FAILURE_FILE)
        elif not entry["jobs"]:
            entry["reason"] = "the summary lists no jobs"
        else:
            entry["reason"] = "no completed trials"
    return entry


def _row_title(row):
    return " / ".join(part for part in (row["benchmark"], row["agent"], row["model"]) if part)


def _add_totals(entry):
    for field in COUNTERS:
        entry[field] = sum(row[field] for row in entry["rows"])
    entry["pass_at_1"] = per_completed(entry["n_pass"], entry["n_scored"])
    entry["usage"] = usage_totals(entry["rows"])


def usage_totals(rows):
    """Tokens, cost and phase durations of several rows together (a host's night, the fleet's)."""
    total = _new_row(None, None, None)
    for row in rows:
        for field in TOKEN_FIELDS:
            _add_number(total, field, row[field])
        total["n_cost_reported"] += row["n_cost_reported"]
        total["n_completed"] += row["n_completed"]
        for phase in PHASES:
            total["durations"][phase]["total_sec"] = _round(total["durations"][phase]["total_sec"]
                                                            + row["durations"][phase]["total_sec"], 3)
            total["durations"][phase]["n"] += row["durations"][phase]["n"]
    usage = dict((field, total[field]) for field in TOKEN_FIELDS)
    usage.update(n_cost_reported=total["n_cost_reported"], n_completed=total["n_completed"],
                 durations=total["durations"])
    return usage


def fleet_rows(hosts):
    """Per (benchmark, agent, model) over every host: counts summed, then pass@1 = passes / completed."""
    rows = {}
    for host in hosts:
        for row in host["rows"]:
            key = (row["benchmark"], row["agent"], row["model"])
            fleet = rows.get(key)
            if fleet is None:
                fleet = rows[key] = _new_row(*key)
                fleet["hosts"] = []
                fleet["host_pass_at_1"] = []
            _merge_row(fleet, row)
            fleet["hosts"].append(host["host"])
            if row["pass_at_1"] is not None:
                fleet["host_pass_at_1"].append(row["pass_at_1"])
    result = []
    for key in sorted(rows, key=_sort_key):
        row = _finish_row(rows[key])
        spread = row.pop("host_pass_at_1")
        row["n_hosts"] = len(row["hosts"])
        row["host_min_pass_at_1"] = min(spread) if spread else None
        row["host_max_pass_at_1"] = max(spread) if spread else None
        result.append(row)
    return result


def shard_rows(merged):
    """Fleet rows of a shard night, from fleet_shard.merge: every shard's trials scored together (score_trials).

    Each row also names the hosts that ran it (n_hosts, hosts) and its missing units (n_missing, counted in
    n_completed and n_errored as MissingUnit outcomes); each task names the hosts that ran it and those that did not.
    """
    provenance = {}
    for item in merged["provenance"]:
        provenance.setdefault((item["benchmark"], item["agent"], item["model"]), []).append(item)
    rows = []
    for index, ev in enumerate(merged["evals"]):
        key, row = _eval_row(ev, "shard merge evals[%d]" % index)
        row = _finish_row(row)
        items = provenance.get(key, [])
        row["hosts"] = sorted(set(host for item in items for host in item["hosts"]))
        row["n_hosts"] = len(row["hosts"])
        row["host_min_pass_at_1"] = row["host_max_pass_at_1"] = None
        row["n_missing"] = sum(item["n_missing"] for item in items)
        for item in items:
            task = row["tasks"].get(item["task"])
            if task is not None:
                task["hosts"] = item["hosts"]
                task["missing_hosts"] = item["missing_hosts"]
        rows.append(row)
    return sorted(rows, key=lambda r: _sort_key((r["benchmark"], r["agent"], r["model"])))


# --- tasks ---------------------------------------------------------------------------------

def task_status(task):
    """pass (every trial passed), partial (some), error (none, one raised), fail (none)."""
    if task["n_trials"] and task["n_pass"] == task["n_trials"]:
        return "pass"
    if task["n_pass"]:
        return "partial"
    return "error" if task["n_error"] else "fail"


def task_label(task):
    status = task_status(task)
    if status == "partial":
        return "%d/%d pass" % (task["n_pass"], task["n_trials"])
    if status == "error":
        exceptions = sorted(task["exceptions"].items(), key=lambda item: (-item[1], item[0]))
        return "error: %s" % exceptions[0][0] if exceptions else "error"
    if task["n_trials"] > 1:
        return "%s (%d)" % (status, task["n_trials"])
    return status


def task_outcomes(rows):
    """{(benchmark, task, agent, model): {status, label, counts}} of one scope's rows."""
    outcomes = {}
    for row in rows:
        for name, task in row["tasks"].items():
            outcomes[(row["benchmark"], name, row["agent"], row["model"])] = dict(
                task, status=task_status(task), label=task_label(task))
    return outcomes


def _outcome_list(outcomes):
    return [dict(benchmark=key[0], task=key[1], agent=key[2], model=key[3], **outcomes[key])
            for key in sorted(outcomes, key=_sort_key)]


def task_matrix(rows):
    """Per benchmark: tasks x (agent, model) columns, each cell a task outcome (or None)."""
    outcomes = task_outcomes(rows)
    matrix = []
    for benchmark in sorted(set(key[0] for key in outcomes)):
        columns = sorted(set((key[2], key[3]) for key in outcomes if key[0] == benchmark), key=_sort_key)
        tasks = sorted(set(key[1] for key in outcomes if key[0] == benchmark))
        matrix.append({
            "benchmark": benchmark,
            "columns": [{"agent": agent, "model": model} for agent, model in columns],
            "rows": [{"task": task, "cells": [outcomes.get((benchmark, task, agent, model)) for agent, model in columns]}
                     for task in tasks],
        })
    return matrix


# --- earlier nights ------------------------------------------------------------------------

def report_nights(report_dir):
    """Night directories of report_dir that hold a fleet report, sorted by name."""
    try:
        names = os.listdir(report_dir)
    except OSError:
        return []
    report = REPORT_BASENAME + ".json"
    return sorted(name for name in names
                  if night_problem(name) is None and os.path.isfile(os.path.join(report_dir, name, report)))


def earlier_nights(report_dir, night):
    """Nights with a fleet report that sort before night, newest first."""
    return [name for name in reversed(report_nights(report_dir)) if name < night]


def load_report(path):
    """A fleet-report.json written by this code (format 1 or 2); InputError when unusable."""
    data = _read_json(path, os.path.basename(path))
    if not isinstance(data, dict) or data.get("format") not in READABLE_FORMATS:
        raise InputError("%s is not a fleet report of format %s" % (
            os.path.basename(path), " or ".join(str(v) for v in READABLE_FORMATS)))
    fleet = data.get("fleet")
    hosts = data.get("hosts")
    if not isinstance(fleet, dict) or not isinstance(fleet.get("rows"), list) or not isinstance(hosts, list):
        raise InputError("%s lacks the fleet rows or hosts" % os.path.basename(path))
    return data


def find_history(report_dir, night, previous_night=None, history=DEFAULT_HISTORY):
    """(previous night, its report, [(night, report)] newest first, warnings).

    The previous night is previous_night or the latest earlier night with a usable report; the
    history is up to history - 1 earlier usable nights (tonight makes the N-th). Unusable reports
    are skipped with a warning.
    """
    warnings = []
    loaded = []
    for name in earlier_nights(report_dir, night):
        if len(loaded) >= max(history - 1, 0):
            break
        try:
            loaded.append((name, load_report(os.path.join(report_dir, name, REPORT_BASENAME + ".json"))))
        except InputError as exc:
            warnings.append("previous night %s skipped: %s" % (name, exc))
    if previous_night:
        try:
            return previous_night, load_report(os.path.join(report_dir, previous_night, REPORT_BASENAME + ".json")), \
                loaded, warnings
        except InputError as exc:
            warnings.append("previous night %s skipped: %s" % (previous_night, exc))
            return None, None, loaded, warnings
    if loaded:
        return loaded[0][0], loaded[0][1], loaded, warnings
    return None, None, loaded, warnings


def _rows_by_key(rows):
    result = {}
    for row in rows or []:
        if isinstance(row, dict) and row.get("pass_at_1") is not None:
            result[(row.get("benchmark"), row.get("agent"), row.get("model"))] = row
    return result


def _as_count(value):
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _completed(row):
    # Format 1 reports counted "scored" trials (cancelled ones left out).
    return _as_count(row.get("n_completed", row.get("n_scored")))


def classify(current, previous, threshold, min_trials):
    """improved / regressed / unchanged for two pass@1 values."""
    delta = round(current["pass_at_1"] - previous["pass_at_1"], 6)
    enough = current["n_completed"] >= min_trials and _completed(previous) >= min_trials
    if not enough or delta == 0 or abs(delta) < threshold:
        return "unchanged", delta
    return ("improved" if delta > 0 else "regressed"), delta


def compare_rows(rows, previous_rows, threshold, min_trials):
    """Annotate rows with previous_pass_at_1, delta and change; return the gone rows."""
    previous = _rows_by_key(previous_rows)
    seen = set()
    for row in rows:
        key = (row["benchmark"], row["agent"], row["model"])
        before = previous.get(key)
        if before is None:
            row.update(previous_pass_at_1=None, delta=None, change="new")
            continue
        seen.add(key)
        change, delta = classify(row, before, threshold, min_trials)
        row.update(previous_pass_at_1=before["pass_at_1"], delta=delta, change=change)
    gone = []
    for key in sorted(set(previous) - seen, key=_sort_key):
        before = previous[key]
        gone.append({
            "benchmark": key[0], "agent": key[1], "model": key[2], "change": "gone",
            "previous_pass_at_1": before["pass_at_1"], "previous_n_completed": _completed(before),
        })
    return gone


def _mark_new(rows):
    for row in rows:
        row.update(previous_pass_at_1=None, delta=None, change="new")


def _report_rows(report, host=None):
    """The rows of an earlier report, of the fleet or of one host."""
    if host is None:
        return (report.get("fleet") or {}).get("rows") or []
    for entry in report.get("hosts") or []:
        if isinstance(entry, dict) and entry.get("host") == host:
            return entry.get("rows") or []
    return []


def _earlier_task_statuses(rows):
    """{(benchmark, task, agent, model): status} from an earlier report's rows (format 2 has tasks)."""
    statuses = {}
    for row in rows:
        if not isinstance(row, dict) or not isinstance(row.get("tasks"), dict):
            continue
        for name, task in row["tasks"].items():
            if isinstance(task, dict) and all(isinstance(task.get(f), int) for f in TASK_COUNTERS):
                statuses[(row.get("benchmark"), name, row.get("agent"), row.get("model"))] = (
                    task_status(task), task_label(dict(task, exceptions=task.get("exceptions") or {})))
    return statuses


STATUS_WORDS = {"pass": "passed", "fail": "failed", "error": "errored", "partial": "passed partly"}


def _said(status, label):
    if status == "error":
        return "errored (%s)" % label.split(": ", 1)[1] if ": " in label else "errored"
    if status == "partial":
        return "passed %s" % label.replace(" pass", "")
    return STATUS_WORDS[status]


def task_changes(rows, history, host=None):
    """Per task of tonight's rows: regressed / fixed against the latest earlier night it ran, and flaky.

    history: [(night, report)] newest first. A task regressed when it passed (every trial) the
    last night it ran and does not tonight; fixed the other way round. Flaky: its outcome flipped
    between pass and not pass at least twice over the nights shown (e.g. pass, fail, pass).
    """
    earlier = [(night, _earlier_task_statuses(_report_rows(report, host))) for night, report in history]
    changes = []
    for key, outcome in sorted(task_outcomes(rows).items(), key=lambda item: _sort_key(item[0])):
        sequence = [(night, statuses[key][0]) for night, statuses in reversed(earlier) if key in statuses]
        sequence.append((None, outcome["status"]))
        passed = [status == "pass" for _night, status in sequence]
        flips = sum(1 for a, b in zip(passed, passed[1:]) if a != b)
        previous = next(((night, statuses[key]) for night, statuses in earlier if key in statuses), None)
        change = None
        if previous is not None:
            was_pass = previous[1][0] == "pass"
            if was_pass and outcome["status"] != "pass":
                change = "regressed"
            elif not was_pass and outcome["status"] == "pass":
                change = "fixed"
        item = {
            "host": host, "benchmark": key[0], "task": key[1], "agent": key[2], "model": key[3],
            "status": outcome["status"], "label": outcome["label"], "change": change,
            "previous_night": previous[0] if previous else None,
            "previous_status": previous[1][0] if previous else None,
            "flips": flips, "flaky": flips >= 2,
            "outcomes": [{"night": night, "status": status} for night, status in sequence[:-1]],
        }
        if change:
            item["text"] = "%s on %s, %s tonight" % (_said(*previous[1]), previous[0], _said(outcome["status"], outcome["label"]))
        changes.append(item)
    return changes


def history_series(rows, history, night):
    """pass@1 per (benchmark, agent, model) over the history nights and tonight (oldest first)."""
    nights = [name for name, _report in reversed(history)] + [night]
    earlier = dict((name, _rows_by_key(_report_rows(report))) for name, report in history)
    keys = [(row["benchmark"], row["agent"], row["model"]) for row in rows]
    for rows_then in earlier.values():
        for key in rows_then:
            if key not in keys:
                keys.append(key)
    tonight = _rows_by_key(rows)
    series = []
    for key in sorted(keys, key=_sort_key):
        values = []
        for name in nights:
            row = tonight.get(key) if name == night else earlier[name].get(key)
            values.append(row["pass_at_1"] if row else None)
        series.append({"benchmark": key[0], "agent": key[1], "model": key[2], "values": values})
    return {"nights": nights, "series": series}


# --- the report --------------------------------------------------------------------------

PASS_AT_1_DEFINITION = ("passed trials / scored trials, the trials Harbor's mean counts (Harbor 0.25: every completed "
                        "trial, errored and cancelled ones as failures; Harbor 0.26: those whose reward is valid), "
                        "summed over hosts: the fleet value is not a mean of the hosts' values")


def build_report(night, hosts, previous_night=None, previous=None, threshold=0.05, min_trials=1, warnings=None,
                 history=None, history_size=DEFAULT_HISTORY, shard=None):
    """The report document (also the content of fleet-report.json).

    shard: {"plan": the night's shard plan, "merge": fleet_shard.merge of it} for a shard night: the fleet rows are
    the merged trials of every shard; hosts, each running a different part, are not compared with earlier nights.
    """
    history = list(history or [])
    warnings = list(warnings or [])
    rows = shard_rows(shard["merge"]) if shard else fleet_rows(hosts)
    previous_hosts = {}
    previous_failed = set()
    if previous is not None:
        for host in previous.get("hosts") or []:
            if isinstance(host, dict) and isinstance(host.get("host"), str):
                previous_hosts[host["host"]] = host
                if host.get("status") == "failed":
                    previous_failed.add(host["host"])
    if previous is not None:
        gone = compare_rows(rows, previous["fleet"]["rows"], threshold, min_trials)
    else:
        gone = []
        _mark_new(rows)
    changes = task_changes(rows, history)
    for host in hosts:
        before = previous_hosts.get(host["host"])
        if shard:
            # A host ran its part of the matrix, another part another night: nothing to compare.
            for row in host["rows"]:
                row.update(previous_pass_at_1=None, delta=None, change=SHARD_CHANGE)
            host["failed_previous_night"] = host["host"] in previous_failed
            continue
        # A host compares with its own previous rows; a failed or empty host is listed as such
        # instead of as a pile of "gone" rows.
        if before is not None and host["rows"]:
            host["gone"] = compare_rows(host["rows"], before.get("rows"), threshold, min_trials)
        else:
            _mark_new(host["rows"])
        host["failed_previous_night"] = host["host"] in previous_failed
        changes += task_changes(host["rows"], history, host["host"])

    n_pass = sum(row["n_pass"] for row in rows)
    n_completed = sum(row["n_completed"] for row in rows)
    n_scored = sum(row["n_scored"] for row in rows)
    counted = dict((name, 0) for name in CHANGES)
    for row in rows:
        counted[row["change"]] += 1
    counted["gone"] = len(gone)
    statuses = {"ok": 0, "failed": 0, "no_results": 0}
    for host in hosts:
        statuses[host["status"]] += 1
    return {
        "format": REPORT_FORMAT_VERSION,
        "night": night,
        "previous_night": previous_night if previous is not None else None,
        "threshold": threshold,
        "min_trials": min_trials,
        "history_size": history_size,
        "pass_at_1_definition": PASS_AT_1_DEFINITION,
        "fleet": {
            "rows": rows,
            "gone": gone,
            "n_pass": n_pass,
            "n_completed": n_completed,
            "n_scored": n_scored,
            "n_errored": sum(row["n_errored"] for row in rows),
            "n_cancelled": sum(row["n_cancelled"] for row in rows),
            "pass_at_1": per_completed(n_pass, n_scored),
            "usage": usage_totals(rows),
        },
        "counts": {
            "hosts": len(hosts),
            "hosts_ok": statuses["ok"],
            "hosts_failed": statuses["failed"],
            "hosts_no_results": statuses["no_results"],
            "changes": counted,
            "task_regressions": sum(1 for item in changes if item["change"] == "regressed"),
            "task_fixes": sum(1 for item in changes if item["change"] == "fixed"),
            "flaky_tasks": sum(1 for item in changes if item["flaky"]),
        },
        "hosts": hosts,
        "failed_hosts": [{"host": h["host"], "stage": h["stage"], "error": h["error"],
                          "failed_previous_night": h["failed_previous_night"]}
                         for h in hosts if h["status"] == "failed"],
        "no_result_hosts": [{"host": h["host"], "reason": h["reason"]} for h in hosts if h["status"] == "no_results"],
        "regressions": [_change_item(row) for row in rows if row["change"] == "regressed"],
        "host_regressions": [_change_item(row, host["host"]) for host in hosts for row in host["rows"]
                             if row["change"] == "regressed"],
        "task_regressions": [item for item in changes if item["change"] == "regressed"],
        "task_fixes": [item for item in changes if item["change"] == "fixed"],
        "flaky_tasks": [item for item in changes if item["flaky"]],
        "history": history_series(rows, history, night),
        "warnings": warnings + (shard["merge"]["warnings"] if shard else []),
        "mode": "shard" if shard else "replicate",
        "shard": shard_section(shard) if shard else None,
    }


SHARD_CHANGE = "shard part"


def shard_section(shard):
    """The report's account of a shard night: the plan's jobs, what each did, the missing units, task provenance."""
    plan = shard["plan"]
    merged = shard["merge"]
    return {
        "plan_file": PLAN_FILE,
        "balanced_by": plan["balanced_by"],
        "rounds": len(plan["rounds"]),
        "hosts": plan["hosts"],
        "n_units": merged["n_units"],
        "n_counted": merged["n_counted"],
        "n_missing": merged["n_missing"],
        "shards": merged["shards"],
        "missing": merged["missing"],
        "provenance": merged["provenance"],
    }


def _change_item(row, host=None):
    item = {"benchmark": row["benchmark"], "agent": row["agent"], "model": row["model"],
            "pass_at_1": row["pass_at_1"], "previous_pass_at_1": row["previous_pass_at_1"], "delta": row["delta"]}
    if host is not None:
        item = dict(host=host, **item)
    return item


# --- formatting (every format shows the same cells) --------------------------------------------

def fmt_rate(value):
    return "-" if value is None else "%.3f" % value


def fmt_delta(value):
    return "-" if value is None else "%+.3f" % value


def fmt_exceptions(exceptions):
    return ", ".join("%s=%d" % item for item in sorted(exceptions.items()))


def fmt_int(value):
    return "-" if value is None else "{:,}".format(int(value))


def fmt_cost(value):
    return "-" if value is None else "%.4f" % value


def fmt_seconds(value):
    """Seconds as 12.3 s, 4m05s or 2h07m."""
    if value is None:
        return "-"
    if value < 60:
        return "%.1f s" % value
    minutes, seconds = divmod(int(round(value)), 60)
    if minutes < 60:
        return "%dm%02ds" % (minutes, seconds)
    hours, minutes = divmod(minutes, 60)
    return "%dh%02dm" % (hours, minutes)


def fmt_key_means(row):
    return ", ".join("%s=%s" % (key, fmt_rate(value)) for key, value in row["reward_means"].items()
                     if key != row.get("primary_key")) or "-"


def _mean_seconds(timing):
    return timing["total_sec"] / timing["n"] if timing["n"] else None


def _spread(row):
    if row.get("host_min_pass_at_1") is None:
        return "-"
    return "%s-%s" % (fmt_rate(row["host_min_pass_at_1"]), fmt_rate(row["host_max_pass_at_1"]))


def _table(headers, rows, classes=None, title=None):
    cells = [["-" if cell is None or cell == "" else str(cell) for cell in row] for row in rows]
    return {"headers": list(headers), "rows": cells, "classes": list(classes or [None] * len(cells)), "title": title}


FLEET_HEADERS = ["benchmark", "agent", "model", "pass@1", "mean reward", "reward key", "other keys", "previous",
                 "delta", "change", "passed", "completed", "errored", "cancelled", "hosts", "host range"]
HOST_TABLE_HEADERS = ["host", "status", "benchmark", "agent", "model", "pass@1", "previous", "delta", "change",
                      "passed", "completed", "errored", "exceptions"]
USAGE_HEADERS = ["benchmark", "agent", "model", "trials", "input tokens", "cache tokens", "output tokens",
                 "cost (USD)", "cost reported"] + ["%s (mean)" % PHASE_TITLES[p] for p in PHASES] + ["trial time (sum)"]
STEP_HEADERS = ["benchmark", "agent", "model", "task", "step", "trials", "agent (mean)", "verifier (mean)", "errored",
                "exceptions"]
TASK_CHANGE_HEADERS = ["scope", "benchmark", "task", "agent", "model", "change", "what happened", "flaky"]
FLAKY_HEADERS = ["scope", "benchmark", "task", "agent", "model", "flips", "outcomes (oldest first)", "tonight"]


def _fleet_cells(row):
    return [row["benchmark"], row["agent"], row["model"], fmt_rate(row["pass_at_1"]), fmt_rate(row["mean_reward"]),
            row["primary_key"] or ", ".join(row["primary_keys"]), fmt_key_means(row),
            fmt_rate(row["previous_pass_at_1"]), fmt_delta(row["delta"]), row["change"], row["n_pass"],
            row["n_completed"], row["n_errored"], row["n_cancelled"], row["n_hosts"], _spread(row)]


def _usage_cells(label, usage):
    durations = usage["durations"]
    return label + [usage["n_completed"], fmt_int(usage["n_input_tokens"]), fmt_int(usage["n_cache_tokens"]),
                    fmt_int(usage["n_output_tokens"]), fmt_cost(usage["cost_usd"]),
                    "%d of %d" % (usage["n_cost_reported"], usage["n_completed"])] + \
        [fmt_seconds(_mean_seconds(durations[phase])) for phase in PHASES] + \
        [fmt_seconds(durations["total"]["total_sec"] if durations["total"]["n"] else None)]


def _row_usage(row):
    usage = dict((field, row[field]) for field in TOKEN_FIELDS)
    usage.update(n_cost_reported=row["n_cost_reported"], n_completed=row["n_completed"], durations=row["durations"])
    return usage


def _scope(item):
    return item["host"] or "fleet"


def _matrix_table(matrix, title):
    headers = ["task"] + ["%s / %s" % (c["agent"], c["model"]) if c["model"] else c["agent"] for c in matrix["columns"]]
    rows = []
    statuses = []
    for line in matrix["rows"]:
        rows.append([line["task"]] + [cell["label"] if cell else "-" for cell in line["cells"]])
        statuses.append([cell["status"] if cell else None for cell in line["cells"]])
    table = _table(headers, rows, title=title)
    table["statuses"] = statuses
    return table


def report_tables(report):
    """Every table of the report as cells (headers, rows, row classes): Markdown and HTML show these."""
    fleet = report["fleet"]
    tables = {"fleet": _table(FLEET_HEADERS, [_fleet_cells(r) for r in fleet["rows"]],
                              [r["change"] for r in fleet["rows"]])}
    regressions = report["regressions"] + report["host_regressions"]
    tables["regressions"] = _table(
        ["scope", "benchmark", "agent", "model", "pass@1", "previous", "delta"],
        [[r.get("host", "fleet"), r["benchmark"], r["agent"], r["model"], fmt_rate(r["pass_at_1"]),
          fmt_rate(r["previous_pass_at_1"]), fmt_delta(r["delta"])] for r in regressions], ["regressed"] * len(regressions))
    changed = [r for r in fleet["rows"] if r["change"] in ("improved", "new")] + fleet["gone"]
    tables["changed"] = _table(
        ["change", "benchmark", "agent", "model", "pass@1", "previous", "delta"],
        [[r["change"], r["benchmark"], r["agent"], r["model"], fmt_rate(r.get("pass_at_1")),
          fmt_rate(r["previous_pass_at_1"]), fmt_delta(r.get("delta"))] for r in changed], [r["change"] for r in changed])
    task_items = report["task_regressions"] + report["task_fixes"]
    tables["task_changes"] = _table(
        TASK_CHANGE_HEADERS,
        [[_scope(t), t["benchmark"], t["task"], t["agent"], t["model"], t["change"], t["text"],
          "flaky" if t["flaky"] else "-"] for t in task_items],
        ["regressed" if t["change"] == "regressed" else "improved" for t in task_items])
    tables["flaky"] = _table(
        FLAKY_HEADERS,
        [[_scope(t), t["benchmark"], t["task"], t["agent"], t["model"], t["flips"],
          " ".join("%s:%s" % (o["night"], o["status"]) for o in t["outcomes"]), t["label"]]
         for t in report["flaky_tasks"]])
    tables["usage"] = _table(
        USAGE_HEADERS,
        [_usage_cells([r["benchmark"], r["agent"], r["model"]], _row_usage(r)) for r in fleet["rows"]]
        + ([_usage_cells(["all", "-", "-"], fleet["usage"])] if fleet["rows"] else []))
    tables["host_usage"] = _table(
        ["host"] + USAGE_HEADERS,
        [_usage_cells([h["host"], r["benchmark"], r["agent"], r["model"]], _row_usage(r))
         for h in report["hosts"] for r in h["rows"]]
        + [_usage_cells([h["host"], "all", "-", "-"], h["usage"]) for h in report["hosts"] if h["rows"]])
    stepped = [(r, step) for r in fleet["rows"] for step in r["steps"]]
    tables["steps"] = _table(
        STEP_HEADERS,
        [[r["benchmark"], r["agent"], r["model"], step["task"], step["step"], step["n_trials"],
          fmt_seconds(_mean_seconds(step["durations"]["agent_execution"])),
          fmt_seconds(_mean_seconds(step["durations"]["verifier"])), step["n_errored"],
          fmt_exceptions(step["exceptions"]) or "-"] for r, step in stepped])
    tables["gateway"] = _table(
        ["host", "gateway requests", "failed", "gateway input tokens", "gateway output tokens", "gateway cost (USD)",
         "agents' input tokens", "agents' output tokens"],
        [[h["host"], h["gateway"]["requests"], h["gateway"]["failed_requests"], fmt_int(h["gateway"]["prompt_tokens"]),
          fmt_int(h["gateway"]["completion_tokens"]), fmt_cost(h["gateway"]["cost_usd"]),
          fmt_int(h["usage"]["n_input_tokens"]), fmt_int(h["usage"]["n_output_tokens"])]
         for h in report["hosts"] if h.get("gateway")])
    history = report["history"]
    tables["history"] = _table(
        ["benchmark", "agent", "model"] + history["nights"],
        [[s["benchmark"], s["agent"], s["model"]] + [fmt_rate(v) for v in s["values"]] for s in history["series"]])
    tables["failed_hosts"] = _table(
        ["host", "stage", "error", "failed the previous night"],
        [[h["host"], h["stage"], h["error"], "yes" if h["failed_previous_night"] else "no"] for h in report["failed_hosts"]])
    tables["no_result_hosts"] = _table(["host", "reason"], [[h["host"], h["reason"]] for h in report["no_result_hosts"]])
    host_rows = []
    host_classes = []
    for host in report["hosts"]:
        for row in host["rows"] + host["gone"]:
            host_rows.append([host["host"], host["status"], row["benchmark"], row["agent"], row["model"],
                              fmt_rate(row.get("pass_at_1")), fmt_rate(row["previous_pass_at_1"]),
                              fmt_delta(row.get("delta")), row["change"], row.get("n_pass"), row.get("n_completed"),
                              row.get("n_errored"), fmt_exceptions(row.get("exceptions") or {})])
            host_classes.append(row["change"])
    tables["hosts"] = _table(HOST_TABLE_HEADERS, host_rows, host_classes)
    tables["fleet_matrix"] = [_matrix_table(m, m["benchmark"]) for m in task_matrix(fleet["rows"])]
    shard = report.get("shard")
    tables["shards"] = _table(
        ["host", "job", "round", "state", "units", "done", "missing", "not counted"],
        [[s["host"], s["job"], s["round"], s["state"], s["n_units"], s["n_done"], s["n_missing"], s["n_not_counted"]]
         for s in (shard or {}).get("shards", [])],
        ["regressed" if s["n_missing"] else None for s in (shard or {}).get("shards", [])])
    tables["missing"] = _table(
        ["host", "job", "benchmark", "task", "agent", "model", "units"],
        [[m["host"], m["job"], m["benchmark"], m["task"], m["agent"], m["model"], m["n"]]
         for m in (shard or {}).get("missing", [])])
    outcomes = task_outcomes(fleet["rows"])
    tables["provenance"] = _table(
        ["benchmark", "task", "agent", "model", "outcome", "ran on", "jobs", "missing on"],
        [[p["benchmark"], p["task"], p["agent"], p["model"],
          (outcomes.get((p["benchmark"], p["task"], p["agent"], p["model"])) or {}).get("label"),
          ", ".join(p["hosts"]), ", ".join(p["jobs"]), ", ".join(p["missing_hosts"])]
         for p in (shard or {}).get("provenance", [])])
    tables["host_matrix"] = [(host["host"], [_matrix_table(m, m["benchmark"]) for m in task_matrix(host["rows"])])
                             for host in report["hosts"] if host["rows"]]
    return tables


def intro_lines(report):
    counts = report["counts"]
    lines = []
    if report["previous_night"]:
        lines.append("Compared with night %s: a change counts when pass@1 moves by at least %s and both nights have "
                     "at least %d completed trial(s)." % (report["previous_night"], report["threshold"],
                                                          report["min_trials"]))
    else:
        lines.append("No earlier night to compare with.")
    lines.append("Hosts: %d, with results %d, failed %d, without results %d." % (
        counts["hosts"], counts["hosts_ok"], counts["hosts_failed"], counts["hosts_no_results"]))
    lines.append("pass@1 = %s." % report["pass_at_1_definition"])
    shard = report.get("shard")
    if shard:
        lines.append("Shard mode: one matrix of %d units split across %d host(s) (balanced by %s, %d round(s)); "
                     "%d unit(s) missing, counted as failed trials (%s) until a rerun completes them." % (
                         shard["n_units"], len(shard["hosts"]), shard["balanced_by"], shard["rounds"],
                         shard["n_missing"], MISSING_EXCEPTION))
    lines.append("Tasks: %d regressed, %d fixed, %d flaky over the last %d night(s) with a report." % (
        counts["task_regressions"], counts["task_fixes"], counts["flaky_tasks"], len(report["history"]["nights"])))
    return lines


def totals_line(report):
    fleet = report["fleet"]
    return "All benchmarks together: %s (%d of %d completed trials passed, %d errored, %d cancelled)." % (
        fmt_rate(fleet["pass_at_1"]), fleet["n_pass"], fleet["n_completed"], fleet["n_errored"], fleet["n_cancelled"])


# --- charts (geometry here, drawn by the HTML template) ----------------------------------------

CHART_LABEL_WIDTH = 220
CHART_BAR_WIDTH = 360
CHART_BAR_HEIGHT = 14
CHART_GAP = 4
TREND_WIDTH = 300
TREND_HEIGHT = 120
TREND_PAD = 24


def bar_chart(report):
    """Tonight's pass@1: per (benchmark, agent, model) a fleet bar, then one bar per host, ticks at the previous night."""
    per_host = {}
    for host in report["hosts"]:
        for row in host["rows"]:
            per_host.setdefault((row["benchmark"], row["agent"], row["model"]), []).append((host, row))
    step = CHART_BAR_HEIGHT + CHART_GAP
    groups = []
    y = 0
    for row in report["fleet"]["rows"]:
        key = (row["benchmark"], row["agent"], row["model"])
        title = _row_title(row)
        y += step
        group = {"title": title, "y": y, "bars": []}
        bars = [("fleet", row, "fleet")] + [(h["host"], r, "failed" if h["status"] == "failed" else "host")
                                            for h, r in per_host.get(key, [])]
        for label, bar_row, kind in bars:
            y += step
            length = int(round((bar_row["pass_at_1"] or 0) * CHART_BAR_WIDTH))
            previous = bar_row.get("previous_pass_at_1")
            group["bars"].append({
                "label": label, "kind": kind, "y": y, "top": y - CHART_BAR_HEIGHT + 3, "length": length,
                "text": "%s (%d/%d)" % (fmt_rate(bar_row["pass_at_1"]), bar_row["n_pass"], bar_row["n_completed"]),
                "title": "%s %s: %s (%s/%s)" % (title, label, fmt_rate(bar_row["pass_at_1"]), bar_row["n_pass"], bar_row["n_completed"]),
                "tick": None if previous is None else {
                    "x": CHART_LABEL_WIDTH + int(round(previous * CHART_BAR_WIDTH)), "y1": y - CHART_BAR_HEIGHT + 1,
                    "y2": y + 5, "title": "%s %s: previous night %s" % (title, label, fmt_rate(previous))},
            })
        groups.append(group)
    y += step
    legend = ("Bars: pass@1 tonight (fleet, then each host; red: a failed host's partial results)"
              + ("; black tick: night %s." % report["previous_night"] if report["previous_night"] else "."))
    return {"groups": groups, "legend_y": y, "height": y + step, "width": CHART_LABEL_WIDTH + CHART_BAR_WIDTH + 140,
            "label_width": CHART_LABEL_WIDTH, "legend": legend}


def trend_charts(report):
    """One small line chart per (benchmark, agent, model): fleet pass@1 over the history nights."""
    nights = report["history"]["nights"]
    span = max(len(nights) - 1, 1)
    inner_w = TREND_WIDTH - 2 * TREND_PAD
    inner_h = TREND_HEIGHT - 2 * TREND_PAD
    charts = []
    for series in report["history"]["series"]:
        points = []
        for index, (night, value) in enumerate(zip(nights, series["values"])):
            if value is None:
                continue
            points.append({"x": TREND_PAD + int(round(index * inner_w / span)),
                           "y": TREND_PAD + int(round((1 - value) * inner_h)),
                           "night": night, "value": fmt_rate(value)})
        charts.append({
            "title": _row_title(series), "points": points,
            "polyline": " ".join("%d,%d" % (p["x"], p["y"]) for p in points),
            "first": nights[0], "last": nights[-1],
        })
    return {"charts": charts, "width": TREND_WIDTH, "height": TREND_HEIGHT, "pad": TREND_PAD,
            "inner_w": inner_w, "inner_h": inner_h, "nights": nights}


def html_context(report):
    """What templates/fleet_report/report.html.j2 renders: the report, its tables, intro and charts."""
    return {"report": report, "tables": report_tables(report), "intro": intro_lines(report),
            "totals": totals_line(report), "bars": bar_chart(report), "trends": trend_charts(report),
            "notes": note_lines(report)}


def note_lines(report):
    return list(report["warnings"]) + ["%s: %s" % (h["host"], note) for h in report["hosts"] for note in h["notes"]]


# --- Markdown, CSV, JSON -----------------------------------------------------------------------

def render_json(report):
    return json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


CSV_COLUMNS = ("scope", "host", "host_status", "benchmark", "agent", "model", "task", "pass_at_1", "mean_reward",
               "primary_key", "reward_means", "previous_pass_at_1", "delta", "change", "n_pass", "n_completed",
               "n_errored", "n_cancelled", "n_hosts", "exceptions", "outcome", "flaky", "n_input_tokens",
               "n_cache_tokens", "n_output_tokens", "cost_usd", "n_cost_reported", "environment_setup_sec",
               "agent_setup_sec", "agent_execution_sec", "verifier_sec", "trial_sec", "night", "stage", "error",
               "n_missing", "job", "hosts", "n_scored", "steps")


def _csv_row_values(row):
    values = dict(row, exceptions=fmt_exceptions(row.get("exceptions") or {}))
    values["reward_means"] = "; ".join("%s=%s" % item for item in (row.get("reward_means") or {}).items())
    values["hosts"] = ", ".join(row.get("hosts") or []) or None
    values["steps"] = format_steps(row.get("steps") or []) or None
    values.pop("tasks", None)
    for phase, column in zip(PHASES, ("environment_setup_sec", "agent_setup_sec", "agent_execution_sec",
                                      "verifier_sec", "trial_sec")):
        timing = (row.get("durations") or {}).get(phase)
        values[column] = timing["total_sec"] if timing and timing["n"] else None
    return values


def render_csv(report):
    """Rows: fleet (and gone), host, task (fleet and per host, with change and flaky), history."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)

    def emit(values):
        # csv_cell: host, job, task and exception names come from the fleet, so no cell starts a spreadsheet formula.
        writer.writerow([csv_cell(values.get(column)) for column in CSV_COLUMNS])

    for row in report["fleet"]["rows"] + report["fleet"]["gone"]:
        emit(dict(_csv_row_values(row), scope="fleet"))
    for host in report["hosts"]:
        base = {"scope": "host", "host": host["host"], "host_status": host["status"], "stage": host["stage"],
                "error": host["error"] or host["reason"]}
        if not host["rows"]:
            emit(base)
        for row in host["rows"] + host["gone"]:
            emit(dict(base, **_csv_row_values(row)))
    changes = dict(((t["host"], t["benchmark"], t["task"], t["agent"], t["model"]), t)
                   for t in report["task_regressions"] + report["task_fixes"] + report["flaky_tasks"])
    scopes = [(None, "", report["fleet"]["rows"])] + [(h["host"], h["status"], h["rows"]) for h in report["hosts"]]
    for host, status, rows in scopes:
        for key, task in sorted(task_outcomes(rows).items(), key=lambda item: _sort_key(item[0])):
            change = changes.get((host, key[0], key[1], key[2], key[3])) or {}
            emit({"scope": "task", "host": host, "host_status": status, "benchmark": key[0], "task": key[1],
                  "agent": key[2], "model": key[3], "outcome": task["label"], "n_pass": task["n_pass"],
                  "hosts": ", ".join(task.get("hosts") or []) or None,
                  "n_completed": task["n_trials"], "n_errored": task["n_error"],
                  "exceptions": fmt_exceptions(task["exceptions"]), "change": change.get("change"),
                  "flaky": "yes" if change.get("flaky") else None, "night": change.get("previous_night")})
    shard = report.get("shard") or {}
    for item in shard.get("shards", []):
        emit({"scope": "shard", "host": item["host"], "job": item["job"], "outcome": item["state"],
              "n_completed": item["n_done"], "n_missing": item["n_missing"]})
    for item in shard.get("missing", []):
        emit({"scope": "missing", "host": item["host"], "job": item["job"], "benchmark": item["benchmark"],
              "task": item["task"], "agent": item["agent"], "model": item["model"], "n_missing": item["n"]})
    history = report["history"]
    for series in history["series"]:
        for night, value in zip(history["nights"], series["values"]):
            if value is not None:
                emit({"scope": "history", "benchmark": series["benchmark"], "agent": series["agent"],
                      "model": series["model"], "night": night, "pass_at_1": value})
    return out.getvalue()


def _md(value):
    if value is None or value == "":
        return "-"
    return md_escape(value)


def _md_table(table, empty="None."):
    if not table["rows"]:
        return [empty]
    return md_table(table["headers"], table["rows"], _md)


def render_markdown(report):
    tables = report_tables(report)
    fleet = report["fleet"]
    lines = ["# Fleet report %s" % _md(report["night"]), ""] + [_md(line) for line in intro_lines(report)]
    lines += ["", "## Fleet pass@1", ""]
    if fleet["rows"]:
        lines += _md_table(tables["fleet"]) + ["", totals_line(report)]
    else:
        lines.append("No host reported a completed trial.")
    sections = [
        ("Regressions", tables["regressions"]),
        ("Improved, new and gone (fleet)", tables["changed"]),
        ("Task regressions and fixes", tables["task_changes"]),
        ("Flaky tasks", tables["flaky"]),
    ]
    for title, table in sections:
        lines += ["", "## %s" % title, ""] + _md_table(table)
    lines += ["", "## Tasks (fleet)", ""]
    if tables["fleet_matrix"]:
        for matrix in tables["fleet_matrix"]:
            lines += ["### %s" % _md(matrix["title"]), ""] + _md_table(matrix) + [""]
        lines.pop()
    else:
        lines.append("No task outcomes (summaries without details).")
    if report.get("shard"):
        lines += ["", "## Shards", ""] + _md_table(tables["shards"])
        lines += ["", "### Missing units", ""] + _md_table(tables["missing"])
        lines += ["", "### Which host ran each task", ""] + _md_table(tables["provenance"])
    lines += ["", "## Tokens, cost and time", ""] + _md_table(tables["usage"], "No trials.")
    if tables["steps"]["rows"]:
        lines += ["", "### Steps of multi-step trials (their agent and verifier times above are the steps' sums)", ""] \
            + _md_table(tables["steps"])
    lines += ["", "## pass@1 history (fleet)", ""] + _md_table(tables["history"], "No history.")
    lines += ["", "## Failed hosts", ""] + _md_table(tables["failed_hosts"])
    lines += ["", "## Hosts without results", ""] + _md_table(tables["no_result_hosts"])
    lines += ["", "## Per host", ""] + _md_table(tables["hosts"], "No host rows.")
    if tables["host_usage"]["rows"]:
        lines += ["", "### Tokens, cost and time per host", ""] + _md_table(tables["host_usage"])
    if tables["gateway"]["rows"]:
        lines += ["", "### Model gateway per host (what it served, next to the agents' own counts)", ""] \
            + _md_table(tables["gateway"])
    for host, matrices in tables["host_matrix"]:
        for matrix in matrices:
            lines += ["", "### Tasks on %s: %s" % (_md(host), _md(matrix["title"])), ""] + _md_table(matrix)
    notes = note_lines(report)
    if notes:
        lines += ["", "## Notes", ""] + ["- %s" % _md(text) for text in notes]
    return "\n".join(lines) + "\n"


def summary_lines(report, limit=20):
    """A short text summary for the Ansible output: fleet table, regressions, tasks, cost, failed and empty hosts."""
    lines = ["Fleet report %s (previous: %s)" % (report["night"], report["previous_night"] or "none")]
    headers = ["benchmark", "agent", "model", "pass@1", "previous", "delta", "change", "passed", "completed",
               "errored", "hosts"]
    rows = [[r["benchmark"], r["agent"], r["model"], fmt_rate(r["pass_at_1"]), fmt_rate(r["previous_pass_at_1"]),
             fmt_delta(r["delta"]), r["change"], r["n_pass"], r["n_completed"], r["n_errored"], r["n_hosts"]]
            for r in report["fleet"]["rows"]]
    if rows:
        lines += text_table(headers, rows, right=("pass@1", "previous", "delta", "passed", "completed", "errored", "hosts"))
    else:
        lines.append("No host reported a completed trial.")
    shard = report.get("shard")
    if shard:
        by_host = {}
        for item in shard["missing"]:
            by_host[item["host"]] = by_host.get(item["host"], 0) + item["n"]
        lines.append("Shard mode: %d units on %d host(s), %d missing%s" % (
            shard["n_units"], len(set(s["host"] for s in shard["shards"])), shard["n_missing"],
            " (%s)" % ", ".join("%s: %d" % (host or "-", n) for host, n in sorted(by_host.items(), key=lambda i: i[0] or ""))
            if by_host else ""))
    regressions = report["regressions"] + report["host_regressions"]
    lines.append("Regressions: %d" % len(regressions))
    for item in regressions[:limit]:
        lines.append("  %s %s: %s -> %s (%s)" % (
            item.get("host", "fleet"), _row_title(item), fmt_rate(item["previous_pass_at_1"]),
            fmt_rate(item["pass_at_1"]), fmt_delta(item["delta"])))
    fleet_tasks = [t for t in report["task_regressions"] if t["host"] is None]
    lines.append("Task regressions (fleet): %d" % len(fleet_tasks))
    for item in fleet_tasks[:limit]:
        lines.append("  %s %s / %s: %s%s" % (item["benchmark"], item["task"], _row_title(
            {"benchmark": None, "agent": item["agent"], "model": item["model"]}), item["text"],
            " (flaky)" if item["flaky"] else ""))
    usage = report["fleet"]["usage"]
    lines.append("Tokens in/cache/out: %s / %s / %s; cost: %s USD (%d of %d trials reported one)" % (
        fmt_int(usage["n_input_tokens"]), fmt_int(usage["n_cache_tokens"]), fmt_int(usage["n_output_tokens"]),
        fmt_cost(usage["cost_usd"]), usage["n_cost_reported"], usage["n_completed"]))
    lines.append("Failed hosts: %d" % len(report["failed_hosts"]))
    for item in report["failed_hosts"][:limit]:
        lines.append("  %s (%s): %s" % (item["host"], item["stage"], item["error"]))
    lines.append("Hosts without results: %d" % len(report["no_result_hosts"]))
    for item in report["no_result_hosts"][:limit]:
        lines.append("  %s: %s" % (item["host"], item["reason"]))
    return lines


# --- files -------------------------------------------------------------------------------

def report_paths(night_dir):
    return dict((fmt, os.path.join(night_dir, "%s.%s" % (REPORT_BASENAME, fmt))) for fmt in REPORT_FORMATS)


def render_all(report, render_html):
    """{format: bytes}; render_html(context) gives the HTML page (the action plugin's Jinja2 templates)."""
    return {
        "json": render_json(report).encode("utf-8"),
        "csv": render_csv(report).encode("utf-8"),
        "md": render_markdown(report).encode("utf-8"),
        "html": render_html(html_context(report)).encode("utf-8"),
    }


def _current_bytes(path):
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def read_text(path):
    content = _current_bytes(path)
    return None if content is None else content.decode("utf-8", "replace")


def files_to_write(paths, contents):
    """Formats whose file is missing or differs from the new content."""
    return [fmt for fmt in REPORT_FORMATS if _current_bytes(paths[fmt]) != contents[fmt]]


def write_file(path, content, mode=0o644):
    atomic_write(path, content, mode)


def latest_night(report_dir, extra=None):
    """Newest night (by name) with a fleet report, counting extra as having one."""
    nights = set(report_nights(report_dir))
    if extra:
        nights.add(extra)
    return max(nights) if nights else None


def latest_problem(report_dir):
    path = os.path.join(report_dir, LATEST_LINK)
    if os.path.lexists(path) and not os.path.islink(path):
        return "%s exists and is not a symlink; move it away so the module can maintain the link" % path
    return None


def latest_needs_update(report_dir, night):
    """(link path, target) when REPORT_DIR/latest must change to point at the newest night, else (path, None)."""
    path = os.path.join(report_dir, LATEST_LINK)
    target = latest_night(report_dir, night)
    if os.path.islink(path) and os.readlink(path) == target:
        return path, None
    return path, target


def point_latest(path, target):
    atomic_symlink(target, path)
