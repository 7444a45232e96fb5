"""Benchmark the Harbor job summary (plugins/module_utils/harbor_results.py).

Generates synthetic Harbor job directories of 1k, 10k and 100k trials, shaped like the real
runs under tests/fixtures/harbor/jobs (every trial's result.json and config.json are copies
of a real trial's files with names, rewards, exceptions and token counters filled in; the
job-level config.json, lock.json and result.json follow Harbor 0.25's layout), then measures
wall time and peak Python memory (tracemalloc) of:

- module_utils: harbor_results.summarize_job, as harbor_job_info runs it;
- naive: a straightforward summarize script that json.loads every trial's result.json.

Each measurement runs in a fresh interpreter (time and memory in separate runs, since
tracemalloc slows Python down). The page cache is warm (the files were just written), as on
a host that has just finished a job. Prints a Markdown table.

    python3 bench/harbor_summary.py [--sizes 1000 10000 100000] [--workdir DIR] [--output FILE]
"""

import argparse
import copy
import glob
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "harbor", "jobs")
sys.path.insert(0, os.path.join(ROOT, "plugins", "module_utils"))

AGENTS = [("oracle", None), ("openhands", "openai/gpt-4o-mini")]
DATASETS = ["swebench-verified", "terminal-bench"]
EXCEPTIONS = ["AgentTimeoutError", "RewardFileNotFoundError", "RuntimeError"]
SUFFIX_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _load(path):
    with open(path) as handle:
        return json.load(handle)


def templates():
    trial_dir = sorted(glob.glob(os.path.join(FIXTURES, "pass-fail", "hello-pass__*")))[0]
    errored_dir = sorted(glob.glob(os.path.join(FIXTURES, "errored", "broken-verifier__*")))[0]
    return {
        "trial_result": _load(os.path.join(trial_dir, "result.json")),
        "trial_config": _load(os.path.join(trial_dir, "config.json")),
        "exception_info": _load(os.path.join(errored_dir, "result.json"))["exception_info"],
        "job_config": _load(os.path.join(FIXTURES, "two-agents", "config.json")),
        "job_lock": _load(os.path.join(FIXTURES, "pass-fail", "lock.json")),
        "job_result": _load(os.path.join(FIXTURES, "pass-fail", "result.json")),
    }


def _write(path, data):
    with open(path, "w") as handle:
        json.dump(data, handle, indent=4)


def generate_job(jobs_dir, name, n_trials, finished, tpl, seed=7):
    """Write one synthetic job of n_trials; unfinished jobs have 5% of trials still running."""
    rng = random.Random(seed)
    job_dir = os.path.join(jobs_dir, name)
    os.makedirs(job_dir)
    config = copy.deepcopy(tpl["job_config"])
    config.update(job_name=name, jobs_dir=jobs_dir)
    config["agents"] = [dict({"name": a}, **({"model_name": m} if m else {})) for a, m in AGENTS]
    config["datasets"] = [{"path": "/opt/swebench/tasks/%s" % d} for d in DATASETS]
    _write(os.path.join(job_dir, "config.json"), config)

    lock = copy.deepcopy(tpl["job_lock"])
    lock_trial = lock["trials"][0]
    lock["trials"] = []
    evals = {}
    stats = {"n_completed_trials": 0, "n_errored_trials": 0, "n_running_trials": 0, "n_pending_trials": 0,
             "n_cancelled_trials": 0, "n_retries": 0}
    tokens = {"n_input_tokens": 0, "n_cache_tokens": 0, "n_output_tokens": 0, "cost_usd": 0.0}
    n_running = n_trials // 20 if not finished else 0
    for index in range(n_trials):
        agent, model = AGENTS[index % len(AGENTS)]
        dataset = DATASETS[(index // len(AGENTS)) % len(DATASETS)]
        task = "task-%05d" % (index // (len(AGENTS) * len(DATASETS)))
        trial = "%s__%s" % (task, "".join(rng.choice(SUFFIX_CHARS) for _unused in range(7)))
        trial_dir = os.path.join(job_dir, trial)
        os.makedirs(trial_dir)
        trial_config = copy.deepcopy(tpl["trial_config"])
        trial_config.update(trial_name=trial, trials_dir=job_dir)
        trial_config["task"] = {"path": "/opt/swebench/tasks/%s/%s" % (dataset, task), "source": dataset}
        _write(os.path.join(trial_dir, "config.json"), trial_config)
        entry = copy.deepcopy(lock_trial)
        entry["task"].update(name=task, path=trial_config["task"]["path"], source=dataset)
        entry["agent"]["name"] = agent
        lock["trials"].append(entry)
        if index >= n_trials - n_running:
            continue  # running: Harbor writes the trial's result.json when it ends

        result = copy.deepcopy(tpl["trial_result"])
        result.update(trial_name=trial, task_name="bench/%s" % task, source=dataset,
                      trial_uri="file://%s" % trial_dir, task_id={"path": trial_config["task"]["path"]})
        result["config"].update(trial_name=trial, trials_dir=job_dir)
        result["config"]["agent"]["name"] = agent
        result["config"]["agent"]["model_name"] = model
        result["agent_info"] = {"name": agent, "version": "1.0.0",
                                "model_info": {"name": model, "provider": None} if model else None}
        roll = rng.random()
        exception = None
        reward = None
        if roll < 0.08:
            exception = copy.deepcopy(tpl["exception_info"])
            exception["exception_type"] = EXCEPTIONS[index % len(EXCEPTIONS)]
        else:
            reward = 1.0 if roll < 0.55 else 0.0
        result["exception_info"] = exception
        result["verifier_result"] = {"rewards": {"reward": reward}} if reward is not None else None
        if model:
            usage = {"n_input_tokens": rng.randint(10000, 90000), "n_cache_tokens": rng.randint(0, 5000),
                     "n_output_tokens": rng.randint(500, 9000), "cost_usd": round(rng.random() / 5, 6)}
            result["agent_result"].update(usage)
            for field, value in usage.items():
                tokens[field] += value
        _write(os.path.join(trial_dir, "result.json"), result)

        key = "%s__%s__%s" % (agent, model, dataset) if model else "%s__%s" % (agent, dataset)
        ev = evals.setdefault(key, {"n_trials": 0, "n_errors": 0, "metrics": [], "pass_at_k": {},
                                    "reward_stats": {}, "exception_stats": {}})
        stats["n_completed_trials"] += 1
        if reward is not None:
            ev["n_trials"] += 1
            ev["reward_stats"].setdefault("reward", {}).setdefault(str(reward), []).append(trial)
        if exception is not None:
            ev["n_errors"] += 1
            stats["n_errored_trials"] += 1
            ev["exception_stats"].setdefault(exception["exception_type"], []).append(trial)

    _write(os.path.join(job_dir, "lock.json"), lock)
    job_result = copy.deepcopy(tpl["job_result"])
    stats["n_running_trials"] = n_running
    stats["n_pending_trials"] = 0
    stats["evals"] = evals
    stats.update(tokens)
    job_result.update(n_total_trials=n_trials, stats=stats,
                      finished_at=job_result["finished_at"] if finished else None)
    _write(os.path.join(job_dir, "result.json"), job_result)
    return job_dir


def naive_summary(job_dir):
    """What a first summarize script does: load every trial's result.json and count."""
    rows = {}
    tokens = {"n_input_tokens": 0, "n_cache_tokens": 0, "n_output_tokens": 0, "cost_usd": 0.0}
    for name in sorted(os.listdir(job_dir)):
        path = os.path.join(job_dir, name, "result.json")
        if not os.path.isfile(path):
            continue
        with open(path) as handle:
            result = json.load(handle)
        agent = result["agent_info"]["name"]
        model = (result["agent_info"].get("model_info") or {}).get("name")
        row = rows.setdefault((result.get("source"), agent, model), {"n": 0, "pass": 0, "errors": {}})
        row["n"] += 1
        rewards = (result.get("verifier_result") or {}).get("rewards") or {}
        if rewards.get("reward") == 1.0:
            row["pass"] += 1
        if result.get("exception_info"):
            exc = result["exception_info"]["exception_type"]
            row["errors"][exc] = row["errors"].get(exc, 0) + 1
        for field in tokens:
            value = (result.get("agent_result") or {}).get(field)
            if value is not None:
                tokens[field] += value
    return {"rows": {"|".join(map(str, k)): dict(v, pass_at_1=v["pass"] / v["n"]) for k, v in rows.items()}, "tokens": tokens}


def measure(impl, job_dir, memory):
    if impl == "module_utils":
        # Imported before the clock starts, as in a module run.
        import harbor_results  # pylint: disable=import-outside-toplevel

        func = harbor_results.summarize_job
    else:
        func = naive_summary
    if memory:
        tracemalloc.start()
        func(job_dir)
        _current, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return {"peak_bytes": peak}
    start = time.perf_counter()
    func(job_dir)
    return {"seconds": time.perf_counter() - start}


def check_same_numbers(job_dir):
    """Both implementations must count the same trials, passes and errors."""
    import harbor_results  # pylint: disable=import-outside-toplevel

    ours = {"|".join(map(str, (ev["benchmark"], ev["agent"], ev["model"]))): (ev["n_completed"], ev["n_pass"], ev["exceptions"])
            for ev in harbor_results.summarize_job(job_dir)["evals"]}
    naive = {key: (row["n"], row["pass"], row["errors"]) for key, row in naive_summary(job_dir)["rows"].items()}
    if ours != naive:
        raise SystemExit("the two summaries disagree on %s:\n%s\n%s" % (job_dir, ours, naive))


def run_child(impl, job_dir, memory):
    argv = [sys.executable, os.path.abspath(__file__), "--child", impl, job_dir] + (["--memory"] if memory else [])
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def best_time(impl, job_dir, repeat):
    return min(run_child(impl, job_dir, False)["seconds"] for _unused in range(repeat))


def run_benchmark(sizes, repeat=3, workdir=None, log=None):
    """Measure both implementations on synthetic jobs of each size; returns one dict per job."""
    own_workdir = workdir is None
    workdir = workdir or tempfile.mkdtemp(prefix="harbor-summary-bench-", dir="/var/tmp")
    os.makedirs(workdir, exist_ok=True)
    tpl = templates()
    rows = []
    try:
        for size in sizes:
            for finished in (True, False):
                name = "bench-%d-%s" % (size, "finished" if finished else "running")
                started = time.perf_counter()
                job_dir = generate_job(workdir, name, size, finished, tpl)
                generated = time.perf_counter() - started
                check_same_numbers(job_dir)
                row = {
                    "trials": size,
                    "finished": finished,
                    "module_utils_seconds": best_time("module_utils", job_dir, repeat),
                    "naive_seconds": best_time("naive", job_dir, repeat),
                    "module_utils_peak_bytes": run_child("module_utils", job_dir, True)["peak_bytes"],
                    "naive_peak_bytes": run_child("naive", job_dir, True)["peak_bytes"],
                    "generate_seconds": generated,
                }
                row["speedup"] = row["naive_seconds"] / row["module_utils_seconds"]
                rows.append(row)
                if log:
                    log("harbor_job_info %d trials (%s): %.1f ms vs naive %.1f ms (generated in %.1f s)" % (
                        size, name.rsplit("-", 1)[1], row["module_utils_seconds"] * 1000,
                        row["naive_seconds"] * 1000, generated))
                shutil.rmtree(job_dir)
    finally:
        if own_workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    return rows


def markdown_table(rows):
    lines = [
        "| trials | job | harbor_job_info time | harbor_job_info peak | naive time | naive peak | speed-up |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append("| %d | %s | %.1f ms | %.2f MiB | %.1f ms | %.2f MiB | %.1fx |" % (
            row["trials"], "finished" if row["finished"] else "running (5% of trials unfinished)",
            row["module_utils_seconds"] * 1000, row["module_utils_peak_bytes"] / 2**20,
            row["naive_seconds"] * 1000, row["naive_peak_bytes"] / 2**20, row["speedup"]))
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--workdir", help="where to generate the job trees (default: a temporary directory, removed)")
    parser.add_argument("--repeat", type=int, default=3, help="time runs per case (the best is kept)")
    parser.add_argument("--output", help="also write the Markdown table to this file")
    parser.add_argument("--child", nargs=2, metavar=("IMPL", "JOB_DIR"), help=argparse.SUPPRESS)
    parser.add_argument("--memory", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child:
        print(json.dumps(measure(args.child[0], args.child[1], args.memory)))
        return 0

    rows = run_benchmark(args.sizes, args.repeat, args.workdir, log=lambda line: print(line, file=sys.stderr))
    table = markdown_table(rows)
    print(table, end="")
    if args.output:
        with open(args.output, "w") as handle:
            handle.write(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
