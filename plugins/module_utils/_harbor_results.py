# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0 (see LICENSE)
"""Read Harbor job directories and summarize them (standard library only).

Layout written by Harbor 0.25 (checked against real runs, see tests/fixtures/harbor):

    JOBS_DIR/NAME/config.json   JobConfig, defaults omitted (no ``agents`` key means oracle)
    JOBS_DIR/NAME/lock.json     resolved plan: one entry per trial under ``trials``
    JOBS_DIR/NAME/result.json   live job result (JobResult); ``finished_at`` is set only when the job
                                ends normally; ``stats.evals["agent__dataset"]`` or
                                ``stats.evals["agent__model__dataset"]`` (AgentDatasetStats) hold
                                ``reward_stats = {KEY: {"1.0": [trial, ...], "0.0": [...]}}`` for every
                                reward key, ``exception_stats = {"Type": [trial, ...]}``, ``n_trials``
                                (trials with rewards), ``n_errors`` and ``metrics`` (Harbor's Mean)
    JOBS_DIR/NAME/TRIAL/result.json  TrialResult, written once when the trial ends: ``task_name``,
                                ``source``, ``verifier_result.rewards``, ``exception_info.exception_type``,
                                ``agent_info``, ``agent_result`` token/cost counters, phase timings
                                (``environment_setup``, ``agent_setup``, ``agent_execution``, ``verifier``)

The numbers (pass@1, mean reward, per-key means) come from one function, score_trials, which
follows Harbor's own Mean metric (harbor/metrics/mean.py, harbor/metrics/base.py); see
docs/harbor_modules.md ("How results are counted").

Without ``details`` a finished job is summarized from its job-level result.json alone (one small
file, whatever the number of trials): its reward buckets and exception lists name every trial
with its outcome. With ``details`` every trial's result.json is read too, for the per-task
outcomes, tokens, cost and phase durations per (benchmark, agent, model). An unfinished job
(running, interrupted) or one whose job-level file is missing or unreadable is summarized from
its trial result files plus what the job-level file already records.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import csv
import fnmatch
import io
import json
import os
import re
import stat
import time
from datetime import datetime

from ansible_collections.aisbench.agent_runtime.plugins.module_utils._atomic_file import atomic_write
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._report_cells import csv_cell, md_escape, md_table

KEYWORD_ALL = "all"
KEYWORD_LATEST = "latest"
REWARD_KEY = "reward"
TOKEN_FIELDS = ("n_input_tokens", "n_cache_tokens", "n_output_tokens", "cost_usd")
# A trial passes when its primary reward reaches 1 (for 0/1 rewards pass@1 is Harbor's mean).
PASS_THRESHOLD = 1.0
CANCELLED_ERROR = "CancelledError"
# TrialResult timing fields, in the order a trial runs them; a multi-step trial times the last two per step.
PHASES = ("environment_setup", "agent_setup", "agent_execution", "verifier")
STEP_PHASES = ("agent_execution", "verifier")
OUTCOME_PASS = "pass"
OUTCOME_FAIL = "fail"
OUTCOME_ERROR = "error"
# Harbor's own default agent when a config names none.
DEFAULT_AGENT = "oracle"
GLOB_CHARACTERS = frozenset("*?[")


class JobReadError(Exception):
    """A job directory that cannot be summarized (reported per job, never fatal)."""


def read_regular_file(path):
    """Bytes of path; OSError unless it is a regular file (a FIFO or device is never opened for a blocking read)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "not a regular file"
            raise OSError(0, kind)
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    finally:
        os.close(fd)


def path_problem(path):
    """Why path (a job or jobs directory) cannot be used as a directory, or None."""
    try:
        if stat.S_ISDIR(os.stat(path).st_mode):
            os.listdir(path)
            return None
        return "is not a directory"
    except OSError as exc:
        return "cannot be read: %s" % (exc.strerror or exc)


def _read_json_object(directory, filename, errors):
    """The JSON object in directory/filename, or None with the reason appended to errors."""
    try:
        data = _read_json(os.path.join(directory, filename))
    except JobReadError as exc:
        errors.append(str(exc))
        return None
    if not isinstance(data, dict):
        errors.append("%s is not an object" % filename)
        return None
    return data


def _read_json(path):
    """Return the parsed JSON document at path; JobReadError on any problem."""
    try:
        data = read_regular_file(path)
    except FileNotFoundError:
        raise JobReadError("%s is missing" % os.path.basename(path))
    except OSError as exc:
        raise JobReadError("cannot read %s: %s" % (os.path.basename(path), exc.strerror or exc))
    if not data.strip():
        raise JobReadError("%s is empty" % os.path.basename(path))
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise JobReadError("%s is not valid JSON: %s" % (os.path.basename(path), exc))


def _as_dict(value):
    return value if isinstance(value, dict) else {}


def _as_int(value):
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value
    return 0


def split_eval_key(key):
    """Split Harbor's evals key into (agent, model, dataset).

    Harbor joins ``agent__dataset`` or ``agent__model__dataset``; model names may contain
    slashes (``provider/model``) and, in theory, double underscores, so the agent is the
    first part, the dataset the last, and anything between is the model.
    """
    parts = str(key).split("__")
    if len(parts) == 1:
        return parts[0], None, "adhoc"
    if len(parts) == 2:
        return parts[0], None, parts[1]
    return parts[0], "__".join(parts[1:-1]), parts[-1]


def _dataset_label(entry):
    """Benchmark name Harbor records for a config dataset entry (trial ``source``)."""
    entry = _as_dict(entry)
    if entry.get("name"):
        return str(entry["name"])
    path = entry.get("path")
    if path:
        return os.path.basename(os.path.normpath(str(path)))
    return None


# --- the one definition of pass@1 and friends ---------------------------------------------

def choose_primary_key(reward_keys, reward_key=None):
    """(key, reason): the reward key pass@1 and the mean reward are computed on.

    In order: ``reward_key`` when the eval records it; ``reward`` (what Harbor's reward.txt
    becomes); the only key; else the first key in name order, the one Harbor's own progress bar
    shows (Job._update_metric_display shows the first item of the Mean's dict, whose keys are
    sorted). None when no trial recorded a reward.
    """
    keys = sorted(reward_keys)
    if not keys:
        return None, "no trial recorded a reward"
    if reward_key and reward_key in keys:
        return reward_key, "configured (reward_key)"
    if REWARD_KEY in keys:
        return REWARD_KEY, "the reward key"
    if len(keys) == 1:
        return keys[0], "the only key"
    return keys[0], "first of %d keys in name order, as Harbor's progress bar shows; set reward_key to choose" % len(keys)


def per_completed(total, n_completed):
    """total over the scored trials, rounded to 6 digits; None without a scored trial.

    pass@1 is per_completed(n_pass, n_scored) and a mean reward per_completed(reward sum, n_scored) (n_scored: the
    trials Harbor's mean counts, see score_trials): the one division every summary, table and fleet report uses, so
    that they equal Harbor's own means.
    """
    return round(total / n_completed, 6) if n_completed else None


def score_trials(outcomes, reward_key=None):
    """pass@1, mean reward and per-key means of one eval (agent, model, benchmark).

    outcomes: one ``(rewards, exception_types, reward_valid)`` per trial with a result (Harbor's TrialResult):
    ``rewards`` is ``verifier_result.rewards`` (a dict, or None without a verifier result), ``exception_types``
    the types of the exceptions the trial recorded (``exception_info``, then each step's), ``reward_valid`` Harbor
    0.26's TrialResult.reward_valid (None for a trial recorded by Harbor 0.25, which has no such field).

    As Harbor's Mean metric (harbor/metrics/base.py aggregate_reward_dicts) computes it over the
    trials Harbor gives it (harbor/job.py, final_rewards): Harbor 0.25 gives every trial, errored and
    cancelled ones included, a trial without rewards counting 0; Harbor 0.26 gives only the trials whose
    reward is valid (reward_valid: a verifier result with rewards and no exception whose error policy
    makes the reward invalid, such as CancelledError, an API error or RewardFileNotFoundError). Those are
    the ``n_scored`` trials; the others (``n_reward_invalid``) are in no number but the counts. A key a
    scored trial did not record counts 0 for that trial. So ``mean_reward`` equals
    ``stats.evals[KEY].metrics[0]["mean"]`` (one reward key) or ``metrics[0][primary_key]`` (several
    keys), and ``rewards[k]["mean"]`` equals ``metrics[0][k]``. A scored trial passes when its primary
    reward is at least 1, whatever exception it also recorded (Harbor grades some, e.g. AgentTimeoutError);
    ``pass_at_1 = n_pass / n_scored``, which for 0/1 rewards is Harbor's mean.
    """
    n_completed = 0
    n_scored = 0
    n_rewarded = 0
    n_errored = 0
    n_cancelled = 0
    exceptions = {}
    sums = {}
    passes = {}
    values = set()
    recorded = []
    for rewards, exc_types, reward_valid in outcomes:
        n_completed += 1
        if exc_types:
            n_errored += 1
            for exc_type in set(exc_types):
                exceptions[exc_type] = exceptions.get(exc_type, 0) + 1
            if CANCELLED_ERROR in exc_types:
                n_cancelled += 1
        if reward_valid is False:
            continue
        n_scored += 1
        if rewards is None:
            continue
        n_rewarded += 1
        recorded.append(rewards)
        for key, value in rewards.items():
            sums[key] = sums.get(key, 0.0) + value
            if value >= PASS_THRESHOLD:
                passes[key] = passes.get(key, 0) + 1
    primary, reason = choose_primary_key(sums, reward_key)
    if primary is not None:
        values = set(rewards.get(primary, 0) for rewards in recorded)
    n_pass = passes.get(primary, 0) if primary is not None else 0

    return {
        "n_completed": n_completed,
        "n_scored": n_scored,
        "n_reward_invalid": n_completed - n_scored,
        "n_rewarded": n_rewarded,
        "n_errored": n_errored,
        "n_cancelled": n_cancelled,
        "n_pass": n_pass,
        "pass_at_1": per_completed(n_pass, n_scored),
        "mean_reward": per_completed(sums.get(primary, 0.0), n_scored),
        "primary_key": primary,
        "primary_key_reason": reason,
        "binary_rewards": values <= {0, 1},
        "rewards": dict((key, {"sum": round(sums[key], 6), "mean": per_completed(sums[key], n_scored), "n_pass": passes.get(key, 0)})
                        for key in sorted(sums)),
        "exceptions": dict(sorted(exceptions.items())),
    }


# --- trials ------------------------------------------------------------------------------------

def _reward_value(raw):
    try:
        return float(raw)
    except (TypeError, ValueError):
        return None


def _rewards_of(result):
    """verifier_result.rewards as {key: float}, or None (no verifier result, or rewards null)."""
    verifier = result.get("verifier_result")
    if not isinstance(verifier, dict):
        return None
    rewards = verifier.get("rewards")
    if not isinstance(rewards, dict):
        return None
    clean = {}
    for key, raw in rewards.items():
        value = _reward_value(raw)
        if value is not None:
            clean[str(key)] = value
    return clean


def _parse_time(value):
    """Harbor's ISO timestamps (trial timings are UTC with a ``Z``) as aware or naive datetimes."""
    if not isinstance(value, str) or not value:
        return None
    text = value[:-1] + "+00:00" if value.endswith("Z") else value
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def _seconds(timing):
    """Duration of a TimingInfo ({started_at, finished_at}) in seconds, or None."""
    if not isinstance(timing, dict):
        return None
    start = _parse_time(timing.get("started_at"))
    end = _parse_time(timing.get("finished_at"))
    if start is None or end is None or (start.tzinfo is None) != (end.tzinfo is None):
        return None
    return max((end - start).total_seconds(), 0.0)


def _usage(result):
    """(n_input, n_cache, n_output, cost) as TrialResult.compute_token_cost_totals sums them."""
    agent_result = result.get("agent_result")
    if isinstance(agent_result, dict):
        contexts = [agent_result]
    else:
        contexts = [step.get("agent_result") for step in result.get("step_results") or []
                    if isinstance(step, dict) and isinstance(step.get("agent_result"), dict)]
    totals = dict((field, None) for field in TOKEN_FIELDS)
    for context in contexts:
        for field in TOKEN_FIELDS:
            value = context.get(field)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                totals[field] = (totals[field] or 0) + value
    return totals


def task_of_trial_name(trial):
    """Task name from a trial name (``TASK__xxxxxxx``; Harbor cuts TASK to 32 characters)."""
    return trial.rsplit("__", 1)[0] if "__" in trial else trial


def _exception_type(info):
    return str(info.get("exception_type") or "Exception") if isinstance(info, dict) else None


def _steps(result):
    """Each step of a multi-step trial (Harbor's step_results): its name, agent and verifier seconds and exception
    type; [] for a single-step trial."""
    steps = []
    for index, step in enumerate(result.get("step_results") or []):
        if not isinstance(step, dict):
            continue
        steps.append({"step": str(step.get("step_name") or index + 1),
                      "agent_execution": _seconds(step.get("agent_execution")),
                      "verifier": _seconds(step.get("verifier")),
                      "exception": _exception_type(step.get("exception_info"))})
    return steps


def _step_sum(steps, phase):
    seconds = [step[phase] for step in steps if step[phase] is not None]
    return round(sum(seconds), 6) if seconds else None


def trial_record(result, name):
    """One trial's result.json reduced to what the summaries use.

    A multi-step trial records its agent and verifier timings and its handled exceptions per step (step_results), not
    on the trial: its agent_execution and verifier seconds are the sums over its steps, its exceptions the trial's
    own first, then each step's (Harbor 0.26's TrialResult.recorded_exceptions), and ``steps`` lists them per step.
    """
    agent_info = _as_dict(result.get("agent_info"))
    model_info = agent_info.get("model_info")
    model = model_info.get("name") if isinstance(model_info, dict) else None
    steps = _steps(result)
    exceptions = []
    for exc_type in [_exception_type(result.get("exception_info"))] + [step["exception"] for step in steps]:
        if exc_type is not None and exc_type not in exceptions:
            exceptions.append(exc_type)
    valid = result.get("reward_valid")
    task = result.get("task_name")
    task_id = result.get("task_id")
    task_path = task_id.get("path") if isinstance(task_id, dict) else None
    record = {
        "trial": str(result.get("trial_name") or name),
        "task": str(task).rsplit("/", maxsplit=1)[-1] if task else task_of_trial_name(name),
        # The task's directory name: what a dataset's task_names filter matches (Harbor's LocalTaskId.get_name).
        "task_dir": os.path.basename(os.path.normpath(str(task_path))) if task_path else None,
        "key": (str(agent_info.get("name") or DEFAULT_AGENT), str(model) if model else None,
                str(result.get("source") or "adhoc")),
        "rewards": _rewards_of(result),
        # The first recorded exception (what a task's outcome names), and all of them.
        "exception": exceptions[0] if exceptions else None,
        "exceptions": exceptions,
        # Harbor 0.26 writes reward_valid; a 0.25 trial has none (None: every trial counts, as 0.25's mean does).
        "reward_valid": valid if isinstance(valid, bool) else None,
        "started_at": result.get("started_at"),
        "finished_at": result.get("finished_at"),
        "durations": dict((phase, _seconds(result.get(phase))) for phase in PHASES),
    }
    if steps:
        for phase in STEP_PHASES:
            record["durations"][phase] = _step_sum(steps, phase)
        record["steps"] = steps
    record["durations"]["total"] = _seconds(result)
    record.update(_usage(result))
    return record


def rewards_validated(job_result):
    """Whether Harbor 0.26 or later wrote this job-level result.json (it has ``schema_version``): its reward buckets
    then hold only the trials whose reward is valid, and its exception lists the steps' exceptions too."""
    return isinstance(job_result, dict) and "schema_version" in job_result


def known_trial_outcomes(stats):
    """Trial name -> [eval key, rewards, exception types] from the job-level ``stats.evals``.

    Harbor lists a trial in ``reward_stats[KEY][VALUE]`` for every reward key it recorded (0.26: only when the
    reward is valid) and in ``exception_stats[TYPE]`` for each type it raised (0.26: the steps' too), so a trial's
    rewards dict is rebuilt key by key. Trials with neither (no verifier result and no exception, or an empty
    rewards dict) are not listed; known_complete tells whether any are missing.
    """
    known = {}
    for key, raw in _as_dict(stats.get("evals")).items():
        raw = _as_dict(raw)
        eval_key = split_eval_key(key)
        for reward_name, buckets in _as_dict(raw.get("reward_stats")).items():
            for raw_value, trials in _as_dict(buckets).items():
                value = _reward_value(raw_value)
                if value is None:
                    continue
                for trial in trials if isinstance(trials, list) else []:
                    entry = known.setdefault(trial, [eval_key, None, []])
                    if entry[1] is None:
                        entry[1] = {}
                    entry[1][str(reward_name)] = value
        for exc_type, trials in _as_dict(raw.get("exception_stats")).items():
            for trial in trials if isinstance(trials, list) else []:
                types = known.setdefault(trial, [eval_key, None, []])[2]
                if str(exc_type) not in types:
                    types.append(str(exc_type))
    for entry in known.values():
        entry[2].sort()
    return known


def known_complete(stats, known):
    """Whether the job-level stats name every trial they count (n_completed_trials, n_trials)."""
    if _as_int(stats.get("n_completed_trials")) != len(known):
        return False
    rewarded = {}
    for entry in known.values():
        if entry[1] is not None:
            rewarded[entry[0]] = rewarded.get(entry[0], 0) + 1
    for key, raw in _as_dict(stats.get("evals")).items():
        if _as_int(_as_dict(raw).get("n_trials")) != rewarded.get(split_eval_key(key), 0):
            return False
    return True


def _read_trial(path, name):
    """(record, None), (None, None) for a running trial, or (None, problem)."""
    try:
        data = read_regular_file(os.path.join(path, "result.json"))  # never blocks on a FIFO
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, "cannot read result.json: %s" % (exc.strerror or exc)
    try:
        result = json.loads(data)
    except (ValueError, RecursionError):
        # Harbor writes a trial result in one go: an empty or cut file is being written or damaged.
        return None, "result.json is not valid JSON"
    if not isinstance(result, dict):
        return None, "result.json is not an object"
    return trial_record(result, name), None


def scan_trials(job_path, known=None, read_known=False, validated=False):
    """The trials of one job directory: (records, n_running, trial_errors).

    known: outcomes recorded in the job-level result.json (known_trial_outcomes). Their
    result.json files are read only with read_known (for tasks, tokens and timings); a known
    trial whose file cannot be read keeps its recorded outcome. Trial directories without a
    result.json are running (Harbor writes it once, when a trial ends). Known names without a
    directory (a resume removed them) are left out. validated: the job-level file is Harbor 0.26's
    (rewards_validated).
    """
    known = known or {}
    records = []
    trial_errors = []
    n_running = 0
    try:
        entries = list(os.scandir(job_path))
    except OSError as exc:
        raise JobReadError("cannot list the job directory: %s" % (exc.strerror or exc))
    for entry in sorted(entries, key=lambda e: e.name):
        if entry.name.startswith(".") or not entry.is_dir(follow_symlinks=False):
            continue
        outcome = known.get(entry.name)
        if outcome is not None and not read_known:
            records.append(_known_record(entry.name, outcome, validated))
            continue
        record, problem = _read_trial(entry.path, entry.name)
        if record is not None:
            records.append(record)
        elif outcome is not None:
            records.append(_known_record(entry.name, outcome, validated))
        elif problem is None:
            n_running += 1
        else:
            trial_errors.append({"trial": entry.name, "error": problem})
    return records, n_running, trial_errors


def _known_record(name, outcome, validated):
    """A trial's record from the job-level file: in Harbor 0.26's, a trial in the reward buckets has a valid reward
    and every other one has none."""
    return {"trial": name, "task": task_of_trial_name(name), "key": outcome[0], "rewards": outcome[1],
            "exception": outcome[2][0] if outcome[2] else None, "exceptions": list(outcome[2]),
            "reward_valid": (outcome[1] is not None) if validated else None}


def record_exceptions(record):
    """The exception types a trial record names (records made before steps were read name one, or none)."""
    if "exceptions" in record:
        return record["exceptions"] or []
    return [record["exception"]] if record.get("exception") else []


def _task_outcome(record, primary):
    """pass / error / fail of one trial: pass when its primary reward counts and reaches 1 (whatever it raised)."""
    rewards = record["rewards"] or {}
    if primary is not None and record.get("reward_valid") is not False and rewards.get(primary, 0) >= PASS_THRESHOLD:
        return OUTCOME_PASS
    return OUTCOME_ERROR if record_exceptions(record) else OUTCOME_FAIL


def _add(totals, field, value):
    if value is not None:
        totals[field] = round((totals.get(field) or 0) + value, 6)


def build_evals(records, reward_key=None, details=False, harbor_evals=None):
    """One eval dict per (agent, model, benchmark) of the trial records, scored by score_trials."""
    groups = {}
    for record in records:
        groups.setdefault(record["key"], []).append(record)
    harbor_evals = harbor_evals or {}
    evals = []
    for key in sorted(groups, key=lambda k: tuple(p or "" for p in k)):
        group = groups[key]
        agent, model, benchmark = key
        ev = {"key": "__".join(part for part in key if part), "benchmark": benchmark, "agent": agent, "model": model}
        ev.update(score_trials(((r["rewards"], record_exceptions(r), r.get("reward_valid")) for r in group), reward_key))
        recorded = _as_dict(harbor_evals.get(ev["key"]))
        ev["harbor_metrics"] = recorded.get("metrics") if isinstance(recorded.get("metrics"), list) else None
        if details:
            _add_details(ev, group)
        evals.append(ev)
    return evals


def _add_details(ev, group):
    """Tokens, cost, phase durations and per-task outcomes of one eval's trials."""
    usage = dict((field, None) for field in TOKEN_FIELDS)
    n_cost = 0
    durations = dict((phase, {"total_sec": 0.0, "n": 0}) for phase in PHASES + ("total",))
    tasks = {}
    steps = {}
    for record in group:
        _add_steps(steps, record["task"], record.get("steps") or [])
        for field in TOKEN_FIELDS:
            _add(usage, field, record.get(field))
        if record.get("cost_usd") is not None:
            n_cost += 1
        for phase, seconds in (record.get("durations") or {}).items():
            if seconds is not None:
                durations[phase]["total_sec"] = round(durations[phase]["total_sec"] + seconds, 3)
                durations[phase]["n"] += 1
        task = tasks.setdefault(record["task"], {"task": record["task"], "n_trials": 0, "n_pass": 0,
                                                 "n_fail": 0, "n_error": 0, "exceptions": {}, "trials": [],
                                                 "total_sec": 0.0, "n_timed": 0})
        outcome = _task_outcome(record, ev["primary_key"])
        task["n_trials"] += 1
        seconds = (record.get("durations") or {}).get("total")
        if seconds is not None:
            # Trial time per task: what fleet_shard balances a later night's shards by.
            task["total_sec"] = round(task["total_sec"] + seconds, 3)
            task["n_timed"] += 1
        task["n_" + outcome] += 1
        task["trials"].append(record["trial"])
        for exc_type in record_exceptions(record):
            task["exceptions"][exc_type] = task["exceptions"].get(exc_type, 0) + 1
    ev.update(usage)
    ev["n_cost_reported"] = n_cost
    ev["durations"] = durations
    ev["tasks"] = [tasks[name] for name in sorted(tasks)]
    # Multi-step trials: each task's steps, in the order the trials ran them.
    ev["steps"] = [steps[key] for key in sorted(steps, key=lambda key: (key[0], steps[key]["index"]))]


def _add_steps(steps, task, record_steps):
    """Add one trial's steps into steps ((task, step) -> totals): agent and verifier seconds, trials, errored steps."""
    for index, step in enumerate(record_steps):
        totals = steps.get((task, step["step"]))
        if totals is None:
            totals = steps[(task, step["step"])] = {
                "task": task, "step": step["step"], "index": index, "n_trials": 0, "n_errored": 0, "exceptions": {},
                "durations": dict((phase, {"total_sec": 0.0, "n": 0}) for phase in STEP_PHASES)}
        totals["n_trials"] += 1
        for phase in STEP_PHASES:
            if step.get(phase) is not None:
                totals["durations"][phase]["total_sec"] = round(totals["durations"][phase]["total_sec"] + step[phase], 3)
                totals["durations"][phase]["n"] += 1
        if step.get("exception"):
            totals["n_errored"] += 1
            totals["exceptions"][step["exception"]] = totals["exceptions"].get(step["exception"], 0) + 1


def job_outcomes(job_path, job_result, details=False):
    """(records, n_running, trial_errors, source) of one job, reading as few files as possible."""
    stats = _as_dict(job_result.get("stats")) if job_result else {}
    finished = bool(job_result and job_result.get("finished_at"))
    known = known_trial_outcomes(stats)
    validated = rewards_validated(job_result)
    if finished and not details and known_complete(stats, known):
        return [_known_record(name, known[name], validated) for name in sorted(known)], 0, [], "job_result"
    records, n_running, trial_errors = scan_trials(job_path, known, read_known=details, validated=validated)
    if finished:
        source = "job_result+trial_results"
    else:
        source = "job_result+trial_results" if job_result else "trial_results"
    return records, n_running, trial_errors, source


def _config_labels(config):
    """Benchmarks, agents and models named by a job's config.json."""
    config = _as_dict(config)
    benchmarks = [label for label in (_dataset_label(d) for d in config.get("datasets") or []) if label]
    if config.get("tasks") and not benchmarks:
        benchmarks = ["adhoc"]
    agents = []
    models = []
    raw_agents = config.get("agents")
    if not isinstance(raw_agents, list) or not raw_agents:
        raw_agents = [{"name": DEFAULT_AGENT}]
    for agent in raw_agents:
        agent = _as_dict(agent)
        if agent.get("name"):
            agents.append(str(agent["name"]))
        elif not agent.get("import_path"):
            agents.append(DEFAULT_AGENT)
        # An import_path agent (harbor_job's baked toolchains among them) is named by its trials' agent_info.
        if agent.get("model_name"):
            models.append(str(agent["model_name"]))
    return benchmarks, agents, models


def _unique(values):
    seen = []
    for value in values:
        if value is not None and value not in seen:
            seen.append(value)
    return seen


def _sum_counts(dicts):
    total = {}
    for item in dicts:
        for key, count in item.items():
            total[key] = total.get(key, 0) + count
    return dict(sorted(total.items(), key=lambda kv: (-kv[1], kv[0])))


def _tokens_from_stats(stats):
    tokens = {}
    for field in TOKEN_FIELDS:
        value = stats.get(field)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            tokens[field] = value
    return tokens


def _empty_summary(name, path):
    return {
        "name": name,
        "path": path,
        "status": "error",
        "error": None,
        "source": None,
        "started_at": None,
        "updated_at": None,
        "finished_at": None,
        "benchmarks": [],
        "agents": [],
        "models": [],
        "n_total": None,
        "n_completed": 0,
        "n_scored": 0,
        "n_reward_invalid": 0,
        "n_errored": 0,
        "n_running": 0,
        "n_pending": 0,
        "n_cancelled": 0,
        "n_retries": 0,
        "n_pass": 0,
        "pass_at_1": None,
        "mean_reward": None,
        "exceptions": {},
        "n_input_tokens": None,
        "n_cache_tokens": None,
        "n_output_tokens": None,
        "cost_usd": None,
        "evals": [],
        "trial_errors": [],
    }


def summarize_job(job_path, name=None, details=False, reward_key=None, trials=False):
    """Summary dict for one job directory; problems land in ``error``, never raised.

    details: read every trial's result.json for per-task outcomes, tokens, cost and durations
    per eval (``evals[].tasks``, ``evals[].durations``, ``evals[].n_input_tokens``...).
    reward_key: the reward key to score when an eval records several (choose_primary_key).
    trials: also list every completed trial's record (trial_record) under ``trials`` (implies details), so
    trials of several jobs and hosts can be merged and scored together (fleet_shard).
    """
    details = details or trials
    name = name if name is not None else os.path.basename(os.path.normpath(job_path))
    summary = _empty_summary(name, job_path)
    if not os.path.lexists(job_path):
        summary["error"] = "job directory not found"
        return summary
    problem = path_problem(job_path)
    if problem:
        summary["error"] = "the job directory %s" % problem
        return summary

    errors = []
    job_result = _read_json_object(job_path, "result.json", errors)
    config = _read_json_object(job_path, "config.json", errors)

    stats = _as_dict(job_result.get("stats")) if job_result else {}
    finished = bool(job_result and job_result.get("finished_at"))
    if job_result:
        for field in ("started_at", "updated_at", "finished_at"):
            summary[field] = job_result.get(field)
        total = job_result.get("n_total_trials")
        summary["n_total"] = total if isinstance(total, int) and not isinstance(total, bool) else None
        summary["n_retries"] = _as_int(stats.get("n_retries"))

    try:
        records, n_running, trial_errors, source = job_outcomes(job_path, job_result, details)
    except JobReadError as exc:
        summary["error"] = "; ".join(errors + [str(exc)])
        return summary
    summary["source"] = source
    summary["trial_errors"] = trial_errors
    if trials:
        summary["trials"] = records
    evals = build_evals(records, reward_key, details, _as_dict(stats.get("evals")))
    summary["evals"] = evals
    summary["n_completed"] = sum(ev["n_completed"] for ev in evals)
    summary["n_scored"] = sum(ev["n_scored"] for ev in evals)
    summary["n_reward_invalid"] = sum(ev["n_reward_invalid"] for ev in evals)
    summary["n_errored"] = sum(ev["n_errored"] for ev in evals)
    summary["n_cancelled"] = sum(ev["n_cancelled"] for ev in evals)
    summary["n_running"] = n_running
    tokens = _tokens_from_stats(stats) if finished else {}
    if not finished:
        for record in records:
            for field in TOKEN_FIELDS:
                if record.get(field) is not None:
                    tokens[field] = round(tokens.get(field, 0) + record[field], 6)
    if finished:
        # Harbor's own job counters (JobStats) for a finished job.
        summary["n_running"] = _as_int(stats.get("n_running_trials"))
        summary["n_cancelled"] = _as_int(stats.get("n_cancelled_trials"))
    else:
        if summary["n_total"] is None:
            summary["n_total"] = _total_from_lock(job_path)
        if summary["n_total"] is None and (summary["n_completed"] or summary["n_running"]):
            summary["n_total"] = summary["n_completed"] + summary["n_running"]

    if summary["n_total"] is not None:
        summary["n_pending"] = max(summary["n_total"] - summary["n_completed"] - summary["n_running"], 0)

    config_benchmarks, config_agents, config_models = _config_labels(config) if config else ([], [], [])
    summary["benchmarks"] = _unique([ev["benchmark"] for ev in evals] + config_benchmarks)
    summary["agents"] = _unique([ev["agent"] for ev in evals] + config_agents)
    summary["models"] = _unique([ev["model"] for ev in evals] + config_models)
    summary["n_pass"] = sum(ev["n_pass"] for ev in evals)
    if summary["n_scored"]:
        summary["pass_at_1"] = per_completed(summary["n_pass"], summary["n_scored"])
        summary["mean_reward"] = per_completed(sum(_primary_sum(ev) for ev in evals), summary["n_scored"])
    summary["exceptions"] = _sum_counts(ev["exceptions"] for ev in evals)
    for field in TOKEN_FIELDS:
        summary[field] = tokens.get(field)

    if job_result is None:
        # Without the job-level file nobody can tell finished from interrupted.
        summary["status"] = "error"
    elif finished:
        summary["status"] = "finished"
    else:
        summary["status"] = "unfinished"
    if errors:
        summary["error"] = "; ".join(errors)
    return summary


def job_damage(job_path):
    """Why a job directory cannot be trusted to resume or to wait for, or None (also when it does not exist).

    A missing result.json is not damage (Harbor had not written it yet); one that exists but cannot be read or
    parsed (cut mid-write, a FIFO, a loop) is, and so is a missing or unreadable config.json next to Harbor's files.
    """
    if not os.path.lexists(job_path):
        return None
    problem = path_problem(job_path)
    if problem:
        return "the job directory %s" % problem
    if not is_job_dir(job_path):
        return None
    for filename in ("config.json", "result.json"):
        path = os.path.join(job_path, filename)
        if filename == "result.json" and not os.path.lexists(path):
            continue
        try:
            if not isinstance(_read_json(path), dict):
                return "%s is not an object" % filename
        except JobReadError as exc:
            return str(exc)
    return None


def _primary_sum(ev):
    reward = ev["rewards"].get(ev["primary_key"]) if ev["primary_key"] is not None else None
    return reward["sum"] if reward else 0.0


def job_progress(job_path, summary, now=None):
    """Progress of a running job for people watching it: counts, errors so far, an ETA.

    The rate is the trials that ended since Harbor last (re)started the job (trial result.json
    files newer than the job's config.json, which Harbor rewrites at every start) over the time
    since then, both read from this machine's file system clock.
    """
    now = time.time() if now is None else now
    try:
        run_started = os.stat(os.path.join(job_path, "config.json")).st_mtime
    except OSError:
        run_started = None
    done_this_run = 0
    if run_started is not None:
        try:
            entries = list(os.scandir(job_path))
        except OSError:
            entries = []
        for entry in entries:
            if entry.name.startswith(".") or not entry.is_dir(follow_symlinks=False):
                continue
            try:
                if os.stat(os.path.join(entry.path, "result.json")).st_mtime >= run_started:
                    done_this_run += 1
            except OSError:
                continue
    total = summary.get("n_total")
    completed = summary.get("n_completed") or 0
    remaining = max(total - completed, 0) if isinstance(total, int) else None
    elapsed = max(now - run_started, 0.0) if run_started is not None else None
    eta = None
    if remaining == 0:
        eta = 0
    elif remaining and elapsed and done_this_run:
        eta = int(round(remaining * elapsed / done_this_run))
    progress = {
        "job": summary.get("name"),
        "status": summary.get("status"),
        "n_total": total,
        "n_completed": completed,
        "n_errored": summary.get("n_errored") or 0,
        "n_running": summary.get("n_running") or 0,
        "n_pending": summary.get("n_pending") or 0,
        "n_pass": summary.get("n_pass") or 0,
        "pass_at_1": summary.get("pass_at_1"),
        "exceptions": summary.get("exceptions") or {},
        "elapsed_sec": int(elapsed) if elapsed is not None else None,
        "eta_sec": eta,
    }
    progress["line"] = progress_line(progress)
    return progress


def _duration_text(seconds):
    if seconds is None:
        return "unknown"
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    if hours:
        return "%dh%02dm" % (hours, minutes)
    return "%dm%02ds" % (minutes, seconds) if minutes else "%ds" % seconds


def progress_line(progress):
    """One line: 'job J: 37/120 trials done (3 errored: AgentTimeoutError=2, ...), 4 running, pass@1 0.541, ETA 1h05m'."""
    total = progress["n_total"] if progress["n_total"] is not None else "?"
    parts = ["job %s: %s/%s trials done" % (progress["job"], progress["n_completed"], total)]
    errors = "%d errored" % progress["n_errored"]
    if progress["exceptions"]:
        errors += " (%s)" % ", ".join("%s=%d" % item for item in sorted(progress["exceptions"].items()))
    parts.append(errors)
    parts.append("%d running" % progress["n_running"])
    if progress["pass_at_1"] is not None:
        parts.append("pass@1 %.3f" % progress["pass_at_1"])
    parts.append("elapsed %s" % _duration_text(progress["elapsed_sec"]))
    parts.append("ETA %s" % (_duration_text(progress["eta_sec"]) if progress["eta_sec"] is not None else "unknown (no trial ended yet)"))
    return ", ".join(parts)


def _total_from_lock(job_path):
    try:
        lock = _read_json(os.path.join(job_path, "lock.json"))
    except JobReadError:
        return None
    trials = _as_dict(lock).get("trials")
    return len(trials) if isinstance(trials, list) else None


def is_job_dir(path):
    """A Harbor job directory holds at least one of its job-level files (damaged ones count)."""
    for marker in ("config.json", "result.json", "lock.json"):
        if os.path.lexists(os.path.join(path, marker)):
            return True
    return False


def _listed_as_job(entry):
    """Whether a jobs_dir entry is reported: a job directory, or an entry that cannot be read at all (a symlink
    loop, a directory that cannot be listed), which summarize_job then reports as damaged."""
    if entry.name.startswith("."):
        return False
    try:
        if not entry.is_dir():
            return entry.is_symlink() and not os.path.exists(entry.path)  # dangling link: a job moved away?
        os.listdir(entry.path)
    except OSError:
        return True
    return is_job_dir(entry.path)


def list_jobs(jobs_dir):
    """Names of the job directories under jobs_dir (hidden directories skipped; unreadable entries kept)."""
    try:
        entries = list(os.scandir(jobs_dir))
    except OSError:
        return []
    return sorted(e.name for e in entries if _listed_as_job(e))


def _start_key(jobs_dir, name):
    path = os.path.join(jobs_dir, name)
    try:
        started = _as_dict(_read_json(os.path.join(path, "result.json"))).get("started_at")
    except JobReadError:
        started = None
    try:
        mtime = os.stat(os.path.join(path, "config.json")).st_mtime
    except OSError:
        try:
            mtime = os.stat(path).st_mtime
        except OSError:
            mtime = 0.0
    if isinstance(started, str) and started:
        # ISO timestamps sort as text once the optional zone suffix is dropped.
        return (1, started.rstrip("Z")[:26], mtime, name)
    return (0, "", mtime, name)


def select_jobs(jobs_dir, patterns):
    """Resolve job selectors into (names, unmatched).

    A selector is a job name, a shell-style glob, ``all`` or ``latest`` (the job that
    started last). An exact directory name wins over glob interpretation, so names
    with ``[`` still work. A plain name that does not exist is returned in unmatched.
    """
    available = list_jobs(jobs_dir)
    patterns = list(patterns or [KEYWORD_ALL])
    selected = []
    unmatched = []
    for pattern in patterns:
        pattern = str(pattern)
        if pattern == KEYWORD_ALL:
            matches = available
        elif pattern == KEYWORD_LATEST:
            matches = [max(available, key=lambda n: _start_key(jobs_dir, n))] if available else []
        elif pattern in available:
            matches = [pattern]
        elif GLOB_CHARACTERS.intersection(pattern):
            matches = fnmatch.filter(available, pattern)
        else:
            matches = []
            unmatched.append(pattern)
        for name in matches:
            if name not in selected:
                selected.append(name)
    return selected, unmatched


def pass_at_1_table(summaries):
    """pass@1 rows by (benchmark, agent, model), summed over the given jobs (per_completed(n_pass, n_scored))."""
    rows = {}
    for summary in summaries:
        for ev in summary.get("evals") or []:
            key = (ev["benchmark"], ev["agent"], ev["model"])
            row = rows.get(key)
            if row is None:
                row = rows[key] = {
                    "benchmark": ev["benchmark"],
                    "agent": ev["agent"],
                    "model": ev["model"],
                    "jobs": [],
                    "primary_keys": [],
                    "n_completed": 0,
                    "n_scored": 0,
                    "n_reward_invalid": 0,
                    "n_errored": 0,
                    "n_cancelled": 0,
                    "n_pass": 0,
                    "reward_sum": 0.0,
                }
            if summary["name"] not in row["jobs"]:
                row["jobs"].append(summary["name"])
            if ev["primary_key"] is not None and ev["primary_key"] not in row["primary_keys"]:
                row["primary_keys"].append(ev["primary_key"])
            for field in ("n_completed", "n_scored", "n_reward_invalid", "n_errored", "n_cancelled", "n_pass"):
                row[field] += ev[field]
            row["reward_sum"] += _primary_sum(ev)
    table = []
    for key in sorted(rows, key=lambda k: tuple(part or "" for part in k)):
        row = rows[key]
        reward_sum = row.pop("reward_sum")
        row["pass_at_1"] = per_completed(row["n_pass"], row["n_scored"])
        row["mean_reward"] = per_completed(reward_sum, row["n_scored"])
        table.append(row)
    return table


def summarize(jobs_dir, patterns=None, details=False, reward_key=None, trials=False):
    """Summaries of the selected jobs plus the cross-job pass@1 table."""
    names, unmatched = select_jobs(jobs_dir, patterns)
    jobs = [summarize_job(os.path.join(jobs_dir, name), name, details, reward_key, trials) for name in names]
    for name in unmatched:
        jobs.append(summarize_job(os.path.join(jobs_dir, name), name, details, reward_key, trials))
    return {"jobs": jobs, "pass_at_1": pass_at_1_table(jobs)}


# --- reports -----------------------------------------------------------------------------

CSV_COLUMNS = (
    "job", "status", "benchmark", "agent", "model", "n_completed", "n_errored", "n_pass",
    "pass_at_1", "mean_reward", "exceptions", "job_n_total", "job_n_completed", "job_n_running",
    "job_n_pending", "started_at", "finished_at", "n_input_tokens", "n_cache_tokens",
    "n_output_tokens", "cost_usd", "error", "n_cancelled", "primary_key", "reward_means", "n_scored",
    "n_reward_invalid", "agent_execution_sec", "verifier_sec", "steps",
)


def format_reward_means(rewards):
    """'accuracy=0.600; style=0.500': the mean of every reward key (Harbor's metrics)."""
    return "; ".join("%s=%.3f" % (key, value["mean"]) for key, value in sorted(rewards.items()) if value["mean"] is not None)


def _total_seconds(ev, phase):
    """An eval's seconds in one phase, summed over its trials (summaries with details), or None."""
    timing = (ev.get("durations") or {}).get(phase) or {}
    return timing.get("total_sec") if timing.get("n") else None


def _mean_seconds(timing):
    return round(timing["total_sec"] / timing["n"], 1) if timing.get("n") else None


def format_steps(steps):
    """'task-a/build: 2 trials, agent 12.5 s, verifier 0.8 s (mean), 1 errored (RewardFileNotFoundError=1); ...'."""
    parts = []
    for step in steps:
        text = "%s/%s: %d trials, agent %s s, verifier %s s (mean)" % (
            step["task"], step["step"], step["n_trials"], _mean_seconds(step["durations"]["agent_execution"]),
            _mean_seconds(step["durations"]["verifier"]))
        if step["n_errored"]:
            text += ", %d errored (%s)" % (step["n_errored"], _format_exceptions(step["exceptions"]))
        parts.append(text)
    return "; ".join(parts)


def _format_exceptions(exceptions):
    return "; ".join("%s=%d" % (name, count) for name, count in sorted(exceptions.items()))


def render_csv(result):
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for job in result["jobs"]:
        base = {
            "job": job["name"], "status": job["status"], "job_n_total": job["n_total"],
            "job_n_completed": job["n_completed"], "job_n_running": job["n_running"],
            "job_n_pending": job["n_pending"], "started_at": job["started_at"],
            "finished_at": job["finished_at"], "error": job["error"],
        }
        for field in TOKEN_FIELDS:
            base[field] = job[field]
        evals = job["evals"] or [None]
        for ev in evals:
            row = dict(base)
            if ev is not None:
                row.update({
                    "benchmark": ev["benchmark"], "agent": ev["agent"], "model": ev["model"],
                    "n_completed": ev["n_completed"], "n_errored": ev["n_errored"], "n_pass": ev["n_pass"],
                    "pass_at_1": ev["pass_at_1"], "mean_reward": ev["mean_reward"],
                    "exceptions": _format_exceptions(ev["exceptions"]), "n_cancelled": ev["n_cancelled"],
                    "primary_key": ev["primary_key"], "reward_means": format_reward_means(ev["rewards"]),
                    "n_scored": ev["n_scored"], "n_reward_invalid": ev["n_reward_invalid"],
                    "agent_execution_sec": _total_seconds(ev, "agent_execution"), "verifier_sec": _total_seconds(ev, "verifier"),
                    "steps": format_steps(ev.get("steps") or []),
                })
            # csv_cell: job and exception names come from disk, so no cell starts a spreadsheet formula.
            writer.writerow([csv_cell(row.get(column)) for column in CSV_COLUMNS])
    return out.getvalue()


def _md_cell(value):
    if value is None:
        return ""
    if isinstance(value, float):
        return "%.3f" % value
    return md_escape(value)


def render_markdown(result, generated_at):
    lines = ["# Harbor job summary", "", "Generated %s." % generated_at, "", "## pass@1 by benchmark and agent", ""]
    table = result["pass_at_1"]
    if table:
        lines += md_table(
            ["benchmark", "agent", "model", "pass@1", "mean reward", "reward key", "passed", "scored", "completed",
             "errored", "cancelled", "jobs"],
            [[r["benchmark"], r["agent"], r["model"], r["pass_at_1"], r["mean_reward"], ", ".join(r["primary_keys"]),
              r["n_pass"], r["n_scored"], r["n_completed"], r["n_errored"], r["n_cancelled"], ", ".join(r["jobs"])]
             for r in table],
            _md_cell,
        )
        lines += ["", PASS_AT_1_RULE]
        keyed = [(job["name"], ev) for job in result["jobs"] for ev in job["evals"] if len(ev["rewards"]) > 1]
        if keyed:
            lines += ["", "## Reward keys", ""]
            lines += md_table(
                ["job", "benchmark", "agent", "model", "reward key (why)", "mean of every key"],
                [[name, ev["benchmark"], ev["agent"], ev["model"], "%s (%s)" % (ev["primary_key"], ev["primary_key_reason"]),
                  format_reward_means(ev["rewards"])] for name, ev in keyed],
                _md_cell,
            )
    else:
        lines.append("No completed trials.")
    lines += ["", "## Jobs", ""]
    lines += md_table(
        ["job", "status", "benchmarks", "agents", "models", "total", "completed", "errored", "running",
         "pending", "passed", "pass@1", "started", "finished", "exceptions", "cost (USD)"],
        [[j["name"], j["status"], ", ".join(j["benchmarks"]), ", ".join(j["agents"]), ", ".join(j["models"]),
          j["n_total"], j["n_completed"], j["n_errored"], j["n_running"], j["n_pending"], j["n_pass"],
          j["pass_at_1"], j["started_at"], j["finished_at"], _format_exceptions(j["exceptions"]), j["cost_usd"]]
         for j in result["jobs"]],
        _md_cell,
    )
    stepped = [(job["name"], ev, step) for job in result["jobs"] for ev in job["evals"] for step in ev.get("steps") or []]
    if stepped:
        lines += ["", "## Steps of multi-step trials", ""]
        lines += md_table(
            ["job", "benchmark", "agent", "model", "task", "step", "trials", "agent (mean s)", "verifier (mean s)",
             "errored", "exceptions"],
            [[name, ev["benchmark"], ev["agent"], ev["model"], step["task"], step["step"], step["n_trials"],
              _mean_seconds(step["durations"]["agent_execution"]), _mean_seconds(step["durations"]["verifier"]),
              step["n_errored"], _format_exceptions(step["exceptions"])] for name, ev, step in stepped],
            _md_cell,
        )
    broken = [j for j in result["jobs"] if j["error"]]
    if broken:
        lines += ["", "## Problems", ""]
        lines += ["- `%s`: %s" % (j["name"], j["error"]) for j in broken]
    return "\n".join(lines) + "\n"


REPORT_FORMATS = ("json", "csv", "md")
PASS_AT_1_RULE = (
    "pass@1 = passed trials / scored trials, as Harbor's mean counts them: Harbor 0.25 scores every completed trial "
    "(errored and cancelled ones as failures), Harbor 0.26 only the trials whose reward is valid (no exception that "
    "voids it, such as CancelledError, an API error or a missing reward file); a trial passes when its reward key "
    "reaches 1.")


def report_paths(output_dir, formats, timestamp):
    return {fmt: os.path.join(output_dir, "summary-%s.%s" % (timestamp, fmt)) for fmt in formats}


def report_timestamp(now=None):
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime(now))


def _render_reports(result, formats, generated_at):
    renderers = {
        "json": lambda: json.dumps(dict(result, generated_at=generated_at), indent=2, sort_keys=True) + "\n",
        "csv": lambda: render_csv(result),
        "md": lambda: render_markdown(result, generated_at),
    }
    return {fmt: renderers[fmt]() for fmt in formats}


def _read_text(path):
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return None


def _previous_generated_at(paths):
    """The generation time recorded in existing summary files, or None."""
    text = _read_text(paths["json"]) if "json" in paths else None
    if text is not None:
        try:
            value = json.loads(text).get("generated_at")
        except (ValueError, AttributeError):
            value = None
        if isinstance(value, str):
            return value
    text = _read_text(paths["md"]) if "md" in paths else None
    if text is not None:
        match = re.search(r"^Generated (\S+)\.$", text, re.MULTILINE)
        if match:
            return match.group(1)
    return None


def write_reports(result, output_dir, formats=REPORT_FORMATS, timestamp=None, mode=0o644):
    """Write summary-<timestamp>.{json,csv,md}; returns {format: path}."""
    return write_reports_if_changed(result, output_dir, formats, timestamp, mode)[0]


def write_reports_if_changed(result, output_dir, formats=REPORT_FORMATS, timestamp=None, mode=0o644, dry_run=False):
    """Like write_reports, but leaves existing files alone when only their generation time would change.

    Returns ({format: path}, changed). A rerun on unchanged jobs (the same night's summary) rewrites nothing.
    dry_run: write nothing, only say whether the files would change (check mode).
    """
    timestamp = timestamp or report_timestamp()
    paths = report_paths(output_dir, formats, timestamp)
    previous = _previous_generated_at(paths)
    if previous is not None or "json" not in paths and "md" not in paths:
        rendered = _render_reports(result, formats, previous)
        if all(_read_text(path) == rendered[fmt] for fmt, path in paths.items()):
            return paths, False
    if dry_run:
        return paths, True
    rendered = _render_reports(result, formats, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    for fmt, path in paths.items():
        atomic_write(path, rendered[fmt], mode)
    return paths, True
