# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0 (see LICENSE)
"""Read Harbor job directories and summarize them (standard library only).

Layout written by Harbor 0.25 (checked against real runs, see tests/fixtures/harbor):

    JOBS_DIR/NAME/config.json   JobConfig, defaults omitted (no ``agents`` key means oracle)
    JOBS_DIR/NAME/lock.json     resolved plan: one entry per trial under ``trials``
    JOBS_DIR/NAME/result.json   live job result; ``finished_at`` is set only when the job ends
                                normally; ``stats.evals["agent__dataset"]`` or
                                ``stats.evals["agent__model__dataset"]`` hold
                                ``reward_stats.reward = {"1.0": [trial, ...], "0.0": [...]}``
                                and ``exception_stats = {"Type": [trial, ...]}``
    JOBS_DIR/NAME/TRIAL/result.json  written once, when the trial ends: ``verifier_result.rewards``,
                                ``exception_info.exception_type``, ``agent_info`` and
                                ``agent_result`` token/cost counters

A finished job is summarized from its job-level result.json alone (one small file, whatever
the number of trials). An unfinished job (running, interrupted) or one whose job-level file is
missing or unreadable is summarized from its trial result files.
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

KEYWORD_ALL = "all"
KEYWORD_LATEST = "latest"
REWARD_KEY = "reward"
TOKEN_FIELDS = ("n_input_tokens", "n_cache_tokens", "n_output_tokens", "cost_usd")
PASS_THRESHOLD = 1.0
CANCELLED_ERROR = "CancelledError"
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


def _reward_value(raw):
    try:
        return float(raw)
    except (TypeError, ValueError):
        return None


def _dataset_label(entry):
    """Benchmark name Harbor records for a config dataset entry (trial ``source``)."""
    entry = _as_dict(entry)
    if entry.get("name"):
        return str(entry["name"])
    path = entry.get("path")
    if path:
        return os.path.basename(os.path.normpath(str(path)))
    return None


def _new_eval(agent, model, benchmark):
    return {
        "benchmark": benchmark,
        "agent": agent,
        "model": model,
        "n_completed": 0,
        "n_errored": 0,
        "n_cancelled": 0,
        "n_pass": 0,
        "reward_sum": 0.0,
        "exceptions": {},
    }


def _finish_eval(ev):
    # Cancelled trials never got to an outcome: they are left out of pass@1 and the
    # mean (errored trials count as failures, as in Harbor's own mean metric).
    scored = _scored(ev)
    ev["pass_at_1"] = round(ev["n_pass"] / scored, 6) if scored else None
    ev["mean_reward"] = round(ev.pop("reward_sum") / scored, 6) if scored else None
    return ev


def _scored(counts):
    return max(counts["n_completed"] - counts["n_cancelled"], 0)


def _evals_from_job_stats(stats):
    """Per-eval counters from the job-level result.json ``stats.evals``."""
    evals = []
    for key, raw in sorted(_as_dict(stats.get("evals")).items()):
        raw = _as_dict(raw)
        agent, model, benchmark = split_eval_key(key)
        ev = _new_eval(agent, model, benchmark)
        ev["key"] = key
        finished_trials = set()
        reward_stats = _as_dict(raw.get("reward_stats"))
        buckets = _as_dict(reward_stats.get(REWARD_KEY))
        if not buckets and len(reward_stats) == 1:
            buckets = _as_dict(next(iter(reward_stats.values())))
        for raw_value, trials in buckets.items():
            value = _reward_value(raw_value)
            trials = trials if isinstance(trials, list) else []
            finished_trials.update(trials)
            if value is None:
                continue
            ev["reward_sum"] += value * len(trials)
            if value >= PASS_THRESHOLD:
                ev["n_pass"] += len(trials)
        errored_trials = set()
        for exc_type, trials in _as_dict(raw.get("exception_stats")).items():
            trials = trials if isinstance(trials, list) else []
            ev["exceptions"][exc_type] = len(trials)
            errored_trials.update(trials)
            if exc_type == CANCELLED_ERROR:
                ev["n_cancelled"] += len(trials)
        finished_trials.update(errored_trials)
        # A trial can have both a reward and an exception (e.g. an agent timeout
        # followed by verification): count it once.
        ev["n_completed"] = len(finished_trials)
        ev["n_errored"] = len(errored_trials) or _as_int(raw.get("n_errors"))
        evals.append(_finish_eval(ev))
    return evals


def _trial_reward(result):
    verifier = result.get("verifier_result")
    if not isinstance(verifier, dict):
        return None
    rewards = verifier.get("rewards")
    if not isinstance(rewards, dict) or not rewards:
        return None
    if REWARD_KEY in rewards:
        return _reward_value(rewards[REWARD_KEY])
    if len(rewards) == 1:
        return _reward_value(next(iter(rewards.values())))
    return None


def _trial_key(result):
    agent_info = _as_dict(result.get("agent_info"))
    agent = agent_info.get("name") or DEFAULT_AGENT
    model_info = agent_info.get("model_info")
    model = model_info.get("name") if isinstance(model_info, dict) else None
    benchmark = result.get("source") or "adhoc"
    return str(agent), (str(model) if model else None), str(benchmark)


def _add_tokens(totals, agent_result):
    if not isinstance(agent_result, dict):
        return
    for field in TOKEN_FIELDS:
        value = agent_result.get(field)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            totals[field] = (totals.get(field) or 0) + value


def known_trial_outcomes(stats):
    """Trial name -> [eval key, reward, exception type] from the job-level ``stats.evals``."""
    known = {}
    for key, raw in _as_dict(stats.get("evals")).items():
        raw = _as_dict(raw)
        eval_key = split_eval_key(key)
        reward_stats = _as_dict(raw.get("reward_stats"))
        buckets = _as_dict(reward_stats.get(REWARD_KEY))
        if not buckets and len(reward_stats) == 1:
            buckets = _as_dict(next(iter(reward_stats.values())))
        for raw_value, trials in buckets.items():
            value = _reward_value(raw_value)
            for trial in trials if isinstance(trials, list) else []:
                known[trial] = [eval_key, value, None]
        for exc_type, trials in _as_dict(raw.get("exception_stats")).items():
            for trial in trials if isinstance(trials, list) else []:
                known.setdefault(trial, [eval_key, None, None])[2] = str(exc_type)
    return known


def _count_trial(evals, key, reward, exc_type):
    ev = evals.get(key)
    if ev is None:
        ev = evals[key] = _new_eval(*key)
        ev["key"] = "__".join(part for part in key if part)
    ev["n_completed"] += 1
    if reward is not None:
        ev["reward_sum"] += reward
        if reward >= PASS_THRESHOLD:
            ev["n_pass"] += 1
    if exc_type is not None:
        ev["exceptions"][exc_type] = ev["exceptions"].get(exc_type, 0) + 1
        ev["n_errored"] += 1
        if exc_type == CANCELLED_ERROR:
            ev["n_cancelled"] += 1


def scan_trials(job_path, known=None):
    """Summarize the trial directories of one job.

    known: outcomes already recorded in the job-level result.json (known_trial_outcomes);
    only the other trials' result.json files are read, which keeps a running job of
    10,000 trials cheap. Trial directories without a result.json are counted as running
    (Harbor writes it once, when a trial ends). Names in known without a directory (a
    resume removed them) are ignored.

    Returns (evals, counters, extra_tokens, trial_errors); extra_tokens covers only the
    trials read here.
    """
    known = known or {}
    evals = {}
    tokens = {}
    trial_errors = []
    n_running = 0
    try:
        entries = list(os.scandir(job_path))
    except OSError as exc:
        raise JobReadError("cannot list the job directory: %s" % (exc.strerror or exc))
    for entry in entries:
        if entry.name.startswith(".") or not entry.is_dir(follow_symlinks=False):
            continue
        outcome = known.get(entry.name)
        if outcome is not None:
            _count_trial(evals, outcome[0], outcome[1], outcome[2])
            continue
        try:
            data = read_regular_file(os.path.join(entry.path, "result.json"))
        except FileNotFoundError:
            n_running += 1
            continue
        except OSError as exc:
            trial_errors.append({"trial": entry.name, "error": "cannot read result.json: %s" % (exc.strerror or exc)})
            continue
        try:
            result = json.loads(data)
        except (ValueError, RecursionError):
            # Harbor writes a trial result in one go: an empty or cut file is being
            # written or damaged. Report it, do not count it.
            trial_errors.append({"trial": entry.name, "error": "result.json is not valid JSON"})
            continue
        if not isinstance(result, dict):
            trial_errors.append({"trial": entry.name, "error": "result.json is not an object"})
            continue
        exception = result.get("exception_info")
        exc_type = str(exception.get("exception_type") or "Exception") if isinstance(exception, dict) else None
        _count_trial(evals, _trial_key(result), _trial_reward(result), exc_type)
        agent_result = result.get("agent_result")
        if isinstance(agent_result, dict):
            _add_tokens(tokens, agent_result)
        else:
            # Multi-step trials record usage per step.
            for step in result.get("step_results") or []:
                if isinstance(step, dict):
                    _add_tokens(tokens, step.get("agent_result"))
    ordered = [_finish_eval(evals[key]) for key in sorted(evals, key=lambda k: tuple(p or "" for p in k))]
    counters = {
        "n_completed": sum(ev["n_completed"] for ev in ordered),
        "n_errored": sum(ev["n_errored"] for ev in ordered),
        "n_cancelled": sum(ev["n_cancelled"] for ev in ordered),
        "n_running": n_running,
    }
    return ordered, counters, tokens, trial_errors


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
        agents.append(str(agent.get("name") or DEFAULT_AGENT))
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


def summarize_job(job_path, name=None):
    """Summary dict for one job directory; problems land in ``error``, never raised."""
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
    job_result = None
    try:
        job_result = _read_json(os.path.join(job_path, "result.json"))
        if not isinstance(job_result, dict):
            raise JobReadError("result.json is not an object")
    except JobReadError as exc:
        errors.append(str(exc))
        job_result = None

    config = None
    try:
        config = _read_json(os.path.join(job_path, "config.json"))
        if not isinstance(config, dict):
            raise JobReadError("config.json is not an object")
    except JobReadError as exc:
        errors.append(str(exc))

    stats = _as_dict(job_result.get("stats")) if job_result else {}
    finished = bool(job_result and job_result.get("finished_at"))
    if job_result:
        for field in ("started_at", "updated_at", "finished_at"):
            summary[field] = job_result.get(field)
        total = job_result.get("n_total_trials")
        summary["n_total"] = total if isinstance(total, int) and not isinstance(total, bool) else None
        summary["n_retries"] = _as_int(stats.get("n_retries"))

    if finished:
        summary["source"] = "job_result"
        evals = _evals_from_job_stats(stats)
        summary["n_completed"] = _as_int(stats.get("n_completed_trials"))
        summary["n_errored"] = _as_int(stats.get("n_errored_trials"))
        summary["n_running"] = _as_int(stats.get("n_running_trials"))
        summary["n_cancelled"] = _as_int(stats.get("n_cancelled_trials"))
        tokens = _tokens_from_stats(stats)
    else:
        # Running or interrupted (or no readable job-level file): count the trial
        # directories, reading only the results the job-level file does not cover.
        summary["source"] = "job_result+trial_results" if job_result else "trial_results"
        try:
            evals, counters, extra_tokens, trial_errors = scan_trials(job_path, known_trial_outcomes(stats))
        except JobReadError as exc:
            summary["error"] = "; ".join(errors + [str(exc)])
            return summary
        summary.update(counters)
        summary["trial_errors"] = trial_errors
        tokens = _tokens_from_stats(stats)
        for field, value in extra_tokens.items():
            tokens[field] = tokens.get(field, 0) + value
        if summary["n_total"] is None:
            summary["n_total"] = _total_from_lock(job_path)
        if summary["n_total"] is None and (summary["n_completed"] or summary["n_running"]):
            summary["n_total"] = summary["n_completed"] + summary["n_running"]

    if summary["n_total"] is not None:
        summary["n_pending"] = max(summary["n_total"] - summary["n_completed"] - summary["n_running"], 0)

    summary["evals"] = evals
    config_benchmarks, config_agents, config_models = _config_labels(config) if config else ([], [], [])
    summary["benchmarks"] = _unique([ev["benchmark"] for ev in evals] + config_benchmarks)
    summary["agents"] = _unique([ev["agent"] for ev in evals] + config_agents)
    summary["models"] = _unique([ev["model"] for ev in evals] + config_models)
    summary["n_pass"] = sum(ev["n_pass"] for ev in evals)
    scored = sum(_scored(ev) for ev in evals)
    if scored:
        summary["pass_at_1"] = round(summary["n_pass"] / scored, 6)
        summary["mean_reward"] = round(
            sum(ev["mean_reward"] * _scored(ev) for ev in evals if ev["mean_reward"] is not None) / scored, 6
        )
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
    """pass@1 rows by (benchmark, agent, model), summed over the given jobs."""
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
                    "n_completed": 0,
                    "n_errored": 0,
                    "n_cancelled": 0,
                    "n_pass": 0,
                }
            if summary["name"] not in row["jobs"]:
                row["jobs"].append(summary["name"])
            row["n_completed"] += ev["n_completed"]
            row["n_errored"] += ev["n_errored"]
            row["n_cancelled"] += ev["n_cancelled"]
            row["n_pass"] += ev["n_pass"]
    table = []
    for key in sorted(rows, key=lambda k: tuple(part or "" for part in k)):
        row = rows[key]
        scored = _scored(row)
        row["pass_at_1"] = round(row["n_pass"] / scored, 6) if scored else None
        table.append(row)
    return table


def summarize(jobs_dir, patterns=None):
    """Summaries of the selected jobs plus the cross-job pass@1 table."""
    names, unmatched = select_jobs(jobs_dir, patterns)
    jobs = [summarize_job(os.path.join(jobs_dir, name), name) for name in names]
    for name in unmatched:
        jobs.append(summarize_job(os.path.join(jobs_dir, name), name))
    return {"jobs": jobs, "pass_at_1": pass_at_1_table(jobs)}


# --- reports -----------------------------------------------------------------------------

CSV_COLUMNS = (
    "job", "status", "benchmark", "agent", "model", "n_completed", "n_errored", "n_pass",
    "pass_at_1", "mean_reward", "exceptions", "job_n_total", "job_n_completed", "job_n_running",
    "job_n_pending", "started_at", "finished_at", "n_input_tokens", "n_cache_tokens",
    "n_output_tokens", "cost_usd", "error",
)


def _format_exceptions(exceptions):
    return "; ".join("%s=%d" % (name, count) for name, count in sorted(exceptions.items()))


def _csv_text(value):
    text = "" if value is None else str(value)
    # Spreadsheet formula injection guard: job and exception names come from disk.
    if text[:1] in ("=", "+", "-", "@") and not _looks_numeric(text):
        return "'" + text
    return text


def _looks_numeric(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


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
                    "exceptions": _format_exceptions(ev["exceptions"]),
                })
            writer.writerow([_csv_text(row.get(column)) for column in CSV_COLUMNS])
    return out.getvalue()


def _md_cell(value):
    if value is None:
        return ""
    if isinstance(value, float):
        return "%.3f" % value
    return str(value).replace("|", "\\|").replace("\n", " ")


def _md_table(headers, rows):
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(_md_cell(cell) for cell in row) + " |")
    return lines


def render_markdown(result, generated_at):
    lines = ["# Harbor job summary", "", "Generated %s." % generated_at, "", "## pass@1 by benchmark and agent", ""]
    table = result["pass_at_1"]
    if table:
        lines += _md_table(
            ["benchmark", "agent", "model", "pass@1", "passed", "completed", "errored", "jobs"],
            [[r["benchmark"], r["agent"], r["model"], r["pass_at_1"], r["n_pass"], r["n_completed"],
              r["n_errored"], ", ".join(r["jobs"])] for r in table],
        )
    else:
        lines.append("No completed trials.")
    lines += ["", "## Jobs", ""]
    lines += _md_table(
        ["job", "status", "benchmarks", "agents", "models", "total", "completed", "errored", "running",
         "pending", "passed", "pass@1", "started", "finished", "exceptions", "cost (USD)"],
        [[j["name"], j["status"], ", ".join(j["benchmarks"]), ", ".join(j["agents"]), ", ".join(j["models"]),
          j["n_total"], j["n_completed"], j["n_errored"], j["n_running"], j["n_pending"], j["n_pass"],
          j["pass_at_1"], j["started_at"], j["finished_at"], _format_exceptions(j["exceptions"]), j["cost_usd"]]
         for j in result["jobs"]],
    )
    broken = [j for j in result["jobs"] if j["error"]]
    if broken:
        lines += ["", "## Problems", ""]
        lines += ["- `%s`: %s" % (j["name"], j["error"]) for j in broken]
    return "\n".join(lines) + "\n"


REPORT_FORMATS = ("json", "csv", "md")


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
        tmp = "%s.tmp.%d" % (path, os.getpid())
        with open(tmp, "w", encoding="utf-8", newline="") as handle:
            handle.write(rendered[fmt])
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    return paths, True
