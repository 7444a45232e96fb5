# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0 (see LICENSE)
"""Split one benchmark matrix across the fleet and merge the shards' trials (standard library only).

A Harbor job config runs every task of its datasets with every agent entry, ``n_attempts`` times: the
night's *units* are the (dataset, task, agent entry, attempt) combinations. In shard mode the nightly
playbook splits them across the reachable hosts and merges what they ran into one result:

* ``new_plan`` splits whole tasks (each with all its agent and attempt units) across the hosts, balanced
  by count or, where earlier nights measured them, by trial time (greedy longest-first, ties broken by
  name, so the same inputs give the same plan). Each host's part is one Harbor job: the matrix with
  ``datasets[].task_names`` cut to its tasks, under its own job name.
* The plan is kept on the controller as ``REPORT_DIR/NIGHT/shard-plan.json``; a rerun of the night
  reuses it (same job names: finished jobs are not run again, interrupted ones are resumed by harbor_job).
* ``merge`` takes every host's trial records (harbor_job_info ``trials``), keeps those of the plan's jobs
  (each unit counted once), adds one ``MissingUnit`` outcome for every unit no trial covers, and scores
  them with harbor_results.build_evals (score_trials): a missing unit stays in the denominator.
* ``rebalance`` (a rerun with ``aisbench_nightly_rebalance``) moves the units that a host which cannot
  be reached now did not finish to the hosts that can, as new jobs of a new round; what the old host
  finished (its last fetched trials) keeps counting, anything it adds later does not.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import hashlib
import json
import os
import re

from ansible_collections.aisbench.agent_runtime.plugins.module_utils._harbor_results import (
    DEFAULT_AGENT,
    build_evals,
    read_regular_file,
)
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._harbor_runner import JOB_NAME_MAX

PLAN_FILE = "shard-plan.json"
PLAN_FORMAT = 1
MODES = ("replicate", "shard")
MISSING_EXCEPTION = "MissingUnit"
ACTIVE = "active"
RETIRED = "retired"
HOST_SLUG = re.compile(r"[^A-Za-z0-9_-]+")
GLOB_SPECIAL = re.compile(r"([*?\[])")


class ShardError(Exception):
    """Bad input or a plan that cannot be used (the task fails, nothing is written)."""


# --- the matrix's units --------------------------------------------------------------------

def escape_task_name(name):
    """A task_names pattern that matches exactly this name (Harbor matches task_names with fnmatch)."""
    return GLOB_SPECIAL.sub(r"[\1]", name)


# Keys of a job config that are no input of the run: Harbor's own JobConfig equality leaves them out, and a config
# Harbor printed (harbor_matrix_units on a target without PyYAML) has job_name set to the second it was read.
NON_RUN_CONFIG_KEYS = ("job_name", "debug")


def listing_body(listing):
    """What hosts must agree on: the matrix (without NON_RUN_CONFIG_KEYS), its agents, attempts and task lists."""
    body = {key: listing[key] for key in ("matrix", "agents", "n_attempts")}
    body["matrix"] = dict((k, v) for k, v in listing["matrix"].items() if k not in NON_RUN_CONFIG_KEYS)
    # Where a host keeps the tasks (host_path) may differ between hosts; what Harbor sees may not.
    body["datasets"] = [dict((k, v) for k, v in dataset.items() if k != "host_path") for dataset in listing["datasets"]]
    return body


def listing_digest(listing):
    """Fingerprint of a matrix and its task lists: hosts must agree on it, and a night's plan keeps it."""
    return hashlib.sha256(json.dumps(listing_body(listing), sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()


def listing_differences(listing, other, limit=3):
    """The first keys (dotted paths) where two listings differ, for a message."""
    found = []

    def walk(left, right, path):
        if len(found) >= limit or left == right:
            return
        if isinstance(left, dict) and isinstance(right, dict):
            for key in sorted(set(left) | set(right), key=str):
                walk(left.get(key), right.get(key), "%s.%s" % (path, key) if path else str(key))
        elif isinstance(left, list) and isinstance(right, list) and len(left) == len(right):
            for index, (one, two) in enumerate(zip(left, right)):
                walk(one, two, "%s[%d]" % (path, index))
        else:
            found.append(path or "the listing")

    walk(listing_body(listing), listing_body(other), "")
    return found


def validate_listing(listing, where):
    """A harbor_matrix_units result (matrix, datasets with tasks, agents, n_attempts), or ShardError."""
    if not isinstance(listing, dict):
        raise ShardError("%s: not a harbor_matrix_units result" % where)
    for field, kind in (("matrix", dict), ("datasets", list), ("agents", list), ("n_attempts", int)):
        if not isinstance(listing.get(field), kind) or isinstance(listing.get(field), bool):
            raise ShardError("%s: %s is missing or not a %s" % (where, field, kind.__name__))
    if listing["n_attempts"] < 1:
        raise ShardError("%s: n_attempts must be at least 1" % where)
    if not listing["agents"]:
        raise ShardError("%s: no agents" % where)
    for dataset in listing["datasets"]:
        if not isinstance(dataset, dict) or not isinstance(dataset.get("tasks"), list) \
                or not isinstance(dataset.get("benchmark"), str):
            raise ShardError("%s: a dataset without benchmark or tasks" % where)
    if not any(dataset["tasks"] for dataset in listing["datasets"]):
        raise ShardError("%s: the matrix has no tasks" % where)
    return listing


def choose_listing(listings):
    """(listing, {host: problem}): the matrix most hosts agree on (ties: the one of the first host by name).

    listings: {host: harbor_matrix_units result}. A host that sees another matrix or other tasks gets no
    shard (its problem is recorded as that host's failure): one night runs one matrix.
    """
    if not listings:
        raise ShardError("no host listed the matrix's tasks: nothing to plan")
    groups = {}
    for host in sorted(listings):
        digest = listing_digest(validate_listing(listings[host], "host %s" % host))
        groups.setdefault(digest, []).append(host)
    best = sorted(groups.items(), key=lambda item: (-len(item[1]), item[1][0]))[0]
    listing = dict(listings[best[1][0]], digest=best[0])
    problems = {}
    for digest, hosts in groups.items():
        if digest == best[0]:
            continue
        for host in hosts:
            problems[host] = ("its matrix or task list differs from that of %s (%d vs %d tasks; differs in %s): one "
                              "night runs one matrix; sync the tasks and the matrix" % (
                                  ", ".join(best[1]), count_tasks(listings[host]), count_tasks(listing),
                                  ", ".join(listing_differences(listings[host], listing))))
    return listing, problems


def count_tasks(listing):
    return sum(len(dataset["tasks"]) for dataset in listing["datasets"])


def agent_label(agent):
    return agent.get("agent") or DEFAULT_AGENT, agent.get("model")


def unit_key(plan, dataset_index, task, agent_index):
    """(benchmark, task, agent, model) of a unit, as the reports name it."""
    agent, model = agent_label(plan["agents"][agent_index])
    return plan["datasets"][dataset_index]["benchmark"], task, agent, model


# --- weights and the split -----------------------------------------------------------------

def unit_weights(plan, durations):
    """{(dataset index, task, agent index): seconds of one trial}: measured where known, else the mean of the
    known ones, else 1 (so without any measurement the split balances the number of units)."""
    durations = durations or {}
    measured = {}
    for dataset_index, dataset in enumerate(plan["datasets"]):
        for task in dataset["tasks"]:
            for agent_index in range(len(plan["agents"])):
                seconds = durations.get(unit_key(plan, dataset_index, task, agent_index))
                if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and seconds > 0:
                    measured[(dataset_index, task, agent_index)] = float(seconds)
    default = round(sum(measured.values()) / len(measured), 3) if measured else 1.0
    weights = {}
    for dataset_index, dataset in enumerate(plan["datasets"]):
        for task in dataset["tasks"]:
            for agent_index in range(len(plan["agents"])):
                weights[(dataset_index, task, agent_index)] = measured.get((dataset_index, task, agent_index), default)
    return weights, ("duration" if measured else "count"), len(measured)


def rectangles(units):
    """Harbor jobs (tasks x agents x attempts) that run exactly the given unit counts.

    units: {(dataset index, task, agent index): count}. Tasks that need the same agents the same number of
    times share a job; where one task needs agents a different number of times, the extra attempts of some
    agents become a further job with fewer agents.
    """
    signatures = {}
    for (dataset_index, task, agent_index), count in units.items():
        if count > 0:
            signatures.setdefault((dataset_index, task), {})[agent_index] = count
    groups = {}
    for block, counts in signatures.items():
        groups.setdefault(tuple(sorted(counts.items())), []).append(block)
    result = []
    for signature in sorted(groups):
        done = 0
        for level in sorted(set(count for _agent, count in signature)):
            result.append({"tasks": sorted(groups[signature]),
                           "agents": sorted(agent for agent, count in signature if count >= level),
                           "n_attempts": level - done})
            done = level
    return result


def distribute(shapes, hosts, weights, loads=None):
    """[(host, shape part)]: each shape's tasks over the hosts, heaviest task first onto the least loaded host.

    Ties go to the host with fewer tasks, then to the first by name: the same inputs give the same split.
    """
    if not hosts:
        raise ShardError("no usable host to run the units on")
    hosts = sorted(hosts)
    loads = dict((host, 0.0) for host in hosts) if loads is None else loads
    counts = dict((host, 0) for host in hosts)
    parts = []
    for shape in shapes:
        def block_weight(block):
            return sum(weights[(block[0], block[1], agent)] for agent in shape["agents"]) * shape["n_attempts"]
        given = dict((host, []) for host in hosts)
        for block in sorted(shape["tasks"], key=lambda b: (-block_weight(b), b[0], b[1])):
            host = min(hosts, key=lambda h: (round(loads[h], 6), counts[h], h))
            given[host].append(block)
            loads[host] += block_weight(block)
            counts[host] += 1
        for host in hosts:
            if given[host]:
                parts.append((host, {"tasks": sorted(given[host]), "agents": list(shape["agents"]),
                                     "n_attempts": shape["n_attempts"],
                                     "weight": round(sum(block_weight(b) for b in given[host]), 3)}))
    return parts


def host_slug(host):
    return HOST_SLUG.sub("-", host).strip("-") or "host"


def job_names(base, round_number, parts, taken):
    """Distinct job names for the parts of one round: BASE-HOST (round 0), BASE-rN-HOST later, -2, -3 on repeats."""
    names = []
    for host, _part in parts:
        stem = "%s-%s" % (base, host_slug(host)) if round_number == 0 else "%s-r%d-%s" % (base, round_number, host_slug(host))
        name = stem
        suffix = 2
        while name in taken:
            name = "%s-%d" % (stem, suffix)
            suffix += 1
        if len(name) > JOB_NAME_MAX:
            raise ShardError("the shard job name %s is longer than %d characters; use a shorter job prefix or "
                             "host name" % (name, JOB_NAME_MAX))
        taken.add(name)
        names.append(name)
    return names


def _assignments(base, round_number, parts, taken, reason):
    names = job_names(base, round_number, parts, taken)
    return [dict(part, job=name, host=host, round=round_number, state=ACTIVE, reason=reason)
            for name, (host, part) in zip(names, parts)]


def new_plan(night, job_base, listing, hosts, durations=None):
    """The night's plan: every unit of listing in exactly one host's job (round 0)."""
    plan = {
        "format": PLAN_FORMAT,
        "night": night,
        "job_base": job_base,
        "digest": listing.get("digest") or listing_digest(listing),
        "matrix": listing["matrix"],
        "datasets": [{"benchmark": d["benchmark"], "path": d.get("path"), "tasks": list(d["tasks"])} for d in listing["datasets"]],
        "agents": listing["agents"],
        "n_attempts": listing["n_attempts"],
        "hosts": sorted(hosts),
    }
    weights, plan["balanced_by"], plan["n_measured_units"] = unit_weights(plan, durations)
    units = dict(((dataset_index, task, agent_index), plan["n_attempts"])
                 for dataset_index, dataset in enumerate(plan["datasets"]) for task in dataset["tasks"]
                 for agent_index in range(len(plan["agents"])))
    parts = distribute(rectangles(units), hosts, weights)
    plan["assignments"] = _assignments(job_base, 0, parts, set(), "plan")
    plan["rounds"] = [{"round": 0, "hosts": sorted(set(host for host, _part in parts)), "moved_from": []}]
    return plan


def assignment_units(assignment):
    """{(dataset index, task, agent index): count} of one assignment."""
    return dict(((block[0], block[1], agent), assignment["n_attempts"])
                for block in assignment["tasks"] for agent in assignment["agents"])


def plan_units(plan):
    """Every unit of the night, with its count (the matrix: n_attempts per task and agent)."""
    return dict(((dataset_index, task, agent_index), plan["n_attempts"])
                for dataset_index, dataset in enumerate(plan["datasets"]) for task in dataset["tasks"]
                for agent_index in range(len(plan["agents"])))


def shard_config(plan, assignment):
    """The Harbor job config of one assignment: the matrix cut to its tasks, agents and attempts."""
    config = copy.deepcopy(plan["matrix"])
    config.pop("tasks", None)
    datasets = []
    for dataset_index, dataset in enumerate(config.get("datasets") or []):
        tasks = [task for index, task in assignment["tasks"] if index == dataset_index]
        if not tasks:
            continue
        entry = dict(dataset)
        for field in ("exclude_task_names", "n_tasks"):
            entry.pop(field, None)  # the listing applied them already
        entry["task_names"] = [escape_task_name(task) for task in tasks]
        datasets.append(entry)
    config["datasets"] = datasets
    agents = config.get("agents") if isinstance(config.get("agents"), list) and config.get("agents") else [{"name": DEFAULT_AGENT}]
    config["agents"] = [copy.deepcopy(agents[index]) for index in assignment["agents"]]
    config["n_attempts"] = assignment["n_attempts"]
    return config


def host_jobs(plan, host):
    """[{name, config, round}] the host runs tonight: its active assignments, in round order."""
    return [{"name": a["job"], "config": shard_config(plan, a), "round": a["round"],
             "n_units": sum(assignment_units(a).values())}
            for a in sorted(plan["assignments"], key=lambda a: (a["round"], a["job"]))
            if a["host"] == host and a["state"] == ACTIVE]


# --- plan file -----------------------------------------------------------------------------

def load_plan(path):
    """The night's plan, or None when there is none; ShardError when it cannot be used."""
    try:
        data = read_regular_file(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ShardError("cannot read %s: %s" % (path, exc.strerror or exc))
    try:
        plan = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise ShardError("%s is not valid JSON: %s" % (path, exc))
    if not isinstance(plan, dict) or plan.get("format") != PLAN_FORMAT or not isinstance(plan.get("assignments"), list):
        raise ShardError("%s is not a shard plan of format %d" % (path, PLAN_FORMAT))
    validate_listing(plan, path)
    for assignment in plan["assignments"]:
        assignment["tasks"] = [tuple(block) for block in assignment["tasks"]]
    return plan


def render_plan(plan):
    return json.dumps(plan, indent=2, sort_keys=True) + "\n"


# --- trials of the shards ------------------------------------------------------------------

def load_host_trials(path):
    """{job name: [trial record]} from a host's harbor_job_summary JSON written with trials: true."""
    try:
        data = json.loads(read_regular_file(path).decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    jobs = data.get("jobs") if isinstance(data, dict) else None
    result = {}
    for job in jobs if isinstance(jobs, list) else []:
        if not isinstance(job, dict) or not isinstance(job.get("trials"), list):
            continue
        records = []
        for record in job["trials"]:
            if isinstance(record, dict) and isinstance(record.get("key"), list) and len(record["key"]) == 3:
                records.append(dict(record, key=tuple(record["key"])))
        result[str(job.get("name"))] = records
    return result


def _match_unit(plan, assignment, record, room):
    """The unit of assignment a trial record fills, or None (not one of its units, or all its attempts done)."""
    agent, model, benchmark = record["key"]
    task = record.get("task_dir") or record.get("task")
    candidates = []
    for dataset_index, block_task in assignment["tasks"]:
        if block_task == task and plan["datasets"][dataset_index]["benchmark"] == benchmark:
            candidates += [(dataset_index, task, index) for index in assignment["agents"]]
    exact = [unit for unit in candidates if agent_label(plan["agents"][unit[2]]) == (agent, model)]
    # An agent may report its model under another spelling than the config's model_name: fall back to the name.
    loose = [unit for unit in candidates if agent_label(plan["agents"][unit[2]])[0] == agent]
    for unit in exact or loose:
        if room.get(unit, 0) > 0:
            return unit
    return None


def count_assignment(plan, assignment, records):
    """(counted [(unit, record)], left over records) of one assignment's job."""
    room = assignment_units(assignment)
    allowed = set(assignment.get("counted_trials") or []) if assignment["state"] == RETIRED else None
    counted = []
    extra = []
    for record in sorted(records, key=lambda r: (r.get("finished_at") or "", r["trial"])):
        if allowed is not None and record["trial"] not in allowed:
            extra.append(record)
            continue
        unit = _match_unit(plan, assignment, record, room)
        if unit is None:
            extra.append(record)
            continue
        room[unit] -= 1
        counted.append((unit, record))
    return counted, extra


def rebalance(plan, usable_hosts, host_trials, durations=None):
    """Move what hosts that are not usable now left undone to the usable ones (a new round); the moves.

    host_trials: {host: {job: [record]}} as last fetched. An active assignment of a host outside
    usable_hosts is retired: the trials it had finished by its last fetch keep counting (their names are
    kept), its other units go to new jobs on the usable hosts.
    """
    usable = sorted(set(usable_hosts))
    moved_from = []
    missing = {}
    for assignment in plan["assignments"]:
        if assignment["state"] != ACTIVE or assignment["host"] in usable:
            continue
        counted, _extra = count_assignment(plan, assignment, host_trials.get(assignment["host"], {}).get(assignment["job"], []))
        assignment["state"] = RETIRED
        assignment["counted_trials"] = sorted(record["trial"] for _unit, record in counted)
        left = assignment_units(assignment)
        for unit, _record in counted:
            left[unit] -= 1
        for unit, count in left.items():
            if count > 0:
                missing[unit] = missing.get(unit, 0) + count
        moved_from.append({"host": assignment["host"], "job": assignment["job"],
                           "n_units": sum(count for count in left.values() if count > 0),
                           "n_kept": len(counted)})
    if not moved_from:
        return []
    round_number = max(a["round"] for a in plan["assignments"]) + 1
    weights, _how, _n = unit_weights(plan, durations)
    parts = distribute(rectangles(missing), usable, weights) if missing else []
    taken = set(a["job"] for a in plan["assignments"])
    plan["assignments"] += _assignments(plan["job_base"], round_number, parts, taken,
                                        "rebalanced from %s" % ", ".join(sorted(set(m["host"] for m in moved_from))))
    plan["rounds"].append({"round": round_number, "hosts": sorted(set(host for host, _part in parts)),
                           "moved_from": moved_from})
    return moved_from


# --- the merge -----------------------------------------------------------------------------

def _missing_record(plan, unit, number, host, job, task_names):
    dataset_index, task, agent_index = unit
    benchmark, _task, agent, model = unit_key(plan, dataset_index, task, agent_index)
    return {"trial": "missing:%s:%s:%s:%d" % (job, task, agent_index, number), "task": task_names.get((benchmark, task), task),
            "task_dir": task, "key": (agent, model, benchmark), "rewards": None, "exception": MISSING_EXCEPTION,
            "durations": {}, "host": host, "job": job, "missing": True}


def merge(plan, host_trials, reward_key=None):
    """One result for the night from every shard's trials: evals scored by harbor_results.build_evals.

    host_trials: {host: {job: [record]}}. Returns {evals, missing, shards, provenance, n_units, n_counted,
    n_missing, warnings}. Each unit of the plan is counted once: by a trial of the job it was assigned to,
    else as a MissingUnit outcome (no reward, never dropped from the denominator).
    """
    records = []
    shards = []
    missing = []
    warnings = []
    task_names = {}
    covered = {}
    for assignment in sorted(plan["assignments"], key=lambda a: (a["round"], a["job"])):
        job_records = host_trials.get(assignment["host"], {}).get(assignment["job"], [])
        counted, extra = count_assignment(plan, assignment, job_records)
        for unit, record in counted:
            records.append(dict(record, host=assignment["host"], job=assignment["job"]))
            covered[unit] = covered.get(unit, 0) + 1
            task_names[(record["key"][2], unit[1])] = record["task"]
        if extra and assignment["state"] == ACTIVE:
            warnings.append("job %s on %s has %d trial(s) outside its part of the matrix; not counted" % (
                assignment["job"], assignment["host"], len(extra)))
        units = assignment_units(assignment)
        n_units = sum(units.values()) if assignment["state"] == ACTIVE else len(counted)
        shards.append({"job": assignment["job"], "host": assignment["host"], "round": assignment["round"],
                       "state": assignment["state"], "reason": assignment.get("reason"), "n_units": n_units,
                       "n_done": len(counted), "n_missing": max(n_units - len(counted), 0),
                       "n_not_counted": len(extra)})
    expected = plan_units(plan)
    owners = {}
    for assignment in plan["assignments"]:
        if assignment["state"] == ACTIVE:
            for unit in assignment_units(assignment):
                owners.setdefault(unit, (assignment["host"], assignment["job"]))
    for unit in sorted(expected):
        left = expected[unit] - covered.get(unit, 0)
        host, job = owners.get(unit, (None, None))
        for number in range(left):
            record = _missing_record(plan, unit, number + 1, host, job, task_names)
            records.append(record)
        if left > 0:
            benchmark, task, agent, model = unit_key(plan, *unit)
            missing.append({"host": host, "job": job, "benchmark": benchmark, "task": task_names.get((benchmark, task), task),
                            "agent": agent, "model": model, "n": left})
    evals = build_evals(records, reward_key, details=True)
    provenance = {}
    for record in records:
        agent, model, benchmark = record["key"]
        item = provenance.setdefault((benchmark, record["task"], agent, model), {
            "benchmark": benchmark, "task": record["task"], "agent": agent, "model": model, "hosts": [], "jobs": [],
            "n_trials": 0, "n_missing": 0, "missing_hosts": []})
        if record.get("missing"):
            item["n_missing"] += 1
            if record["host"] and record["host"] not in item["missing_hosts"]:
                item["missing_hosts"].append(record["host"])
            continue
        item["n_trials"] += 1
        for field, value in (("hosts", record["host"]), ("jobs", record["job"])):
            if value not in item[field]:
                item[field].append(value)
    n_missing = sum(item["n"] for item in missing)
    return {
        "evals": evals,
        "missing": missing,
        "shards": shards,
        "provenance": [provenance[key] for key in sorted(provenance, key=lambda k: tuple(p or "" for p in k))],
        "n_units": sum(expected.values()),
        "n_counted": sum(covered.values()),
        "n_missing": n_missing,
        "warnings": warnings,
    }


def measured_durations(reports):
    """{(benchmark, task, agent, model): seconds per trial} from earlier fleet reports, newest first wins."""
    durations = {}
    for report in reports:
        for row in (report.get("fleet") or {}).get("rows") or []:
            if not isinstance(row, dict) or not isinstance(row.get("tasks"), dict):
                continue
            for task, outcome in row["tasks"].items():
                if not isinstance(outcome, dict):
                    continue
                total, timed = outcome.get("total_sec"), outcome.get("n_timed")
                key = (row.get("benchmark"), task, row.get("agent"), row.get("model"))
                if key in durations or not isinstance(timed, int) or isinstance(timed, bool) or timed < 1 \
                        or not isinstance(total, (int, float)) or isinstance(total, bool):
                    continue
                durations[key] = total / timed
    return durations


def plan_path(report_dir, night):
    return os.path.join(report_dir, night, PLAN_FILE)
