"""Benchmark the Harbor job summary (plugins/module_utils/_harbor_results.py).

Generates synthetic Harbor job directories of 1k, 10k and 100k trials, shaped like the real
runs under tests/fixtures/harbor/jobs (every trial's result.json and config.json are copies
of a real trial's files with names, rewards, exceptions and token counters filled in; the
job-level config.json, lock.json and result.json follow Harbor 0.25's layout), then measures
wall time and peak Python memory (tracemalloc) of:

- module_utils: harbor_results.summarize_job with details=False (harbor_job_info `details: false`);
- details: the same with details=True (harbor_job_info's default: every trial's result.json is read);
- seed: a faithful re-implementation of the seed's summarize algorithm, which reads only the job-level
  result.json and config.json (pass@1 from stats.evals' reward buckets).

Each measurement runs in a fresh interpreter (time and memory in separate runs, since
tracemalloc slows Python down). The page cache is warm (the files were just written), as on
a host that has just finished a job. With --playbook, the whole module is also timed through
ansible-playbook (local connection) next to a one-ping play. Prints a Markdown table.

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
sys.path.insert(0, os.path.join(ROOT, ".cache", "collections"))  # make collection: this checkout as the collection

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


def seed_summary(job_dir):
    """The seed's summarize algorithm: the job-level result.json and config.json, nothing per trial.

    Per stats.evals key: the trials in the reward buckets (and in exception_stats) are the
    completed ones, those with reward 1.0 pass; config.json names the agents and datasets.
    """
    with open(os.path.join(job_dir, "config.json")) as handle:
        config = json.load(handle)
    with open(os.path.join(job_dir, "result.json")) as handle:
        result = json.load(handle)
    rows = {}
    for key, ev in (result.get("stats") or {}).get("evals", {}).items():
        parts = key.split("__")
        agent, model, dataset = parts[0], "__".join(parts[1:-1]) or None, parts[-1]
        completed, passed = set(), 0
        for value, trials in (ev.get("reward_stats") or {}).get("reward", {}).items():
            completed.update(trials)
            if float(value) >= 1.0:
                passed += len(trials)
        errors = {}
        for exc, trials in (ev.get("exception_stats") or {}).items():
            completed.update(trials)
            errors[exc] = len(trials)
        rows["|".join(map(str, (dataset, agent, model)))] = {
            "n": len(completed), "pass": passed, "errors": errors,
            "pass_at_1": passed / len(completed) if completed else None}
    labels = {"agents": [a.get("name") for a in config.get("agents") or []],
              "datasets": [d.get("name") or os.path.basename(d.get("path", "")) for d in config.get("datasets") or []]}
    return {"rows": rows, "labels": labels, "finished": bool(result.get("finished_at"))}


def naive_summary(job_dir):
    """Every trial's result.json, counted: the cross-check of the synthetic job-level stats (not timed)."""
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
    if impl in ("module_utils", "details"):
        # Imported before the clock starts, as in a module run.
        from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _harbor_results as harbor_results  # pylint: disable=import-outside-toplevel

        details = impl == "details"

        def func(path):
            return harbor_results.summarize_job(path, details=details)
    else:
        func = seed_summary
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
    """Every implementation (and every trial's result.json) must count the same trials, passes and errors."""
    from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _harbor_results as harbor_results  # pylint: disable=import-outside-toplevel

    counted = {}
    for details in (False, True):
        counted["details" if details else "module_utils"] = {
            "|".join(map(str, (ev["benchmark"], ev["agent"], ev["model"]))): (ev["n_completed"], ev["n_pass"], ev["exceptions"])
            for ev in harbor_results.summarize_job(job_dir, details=details)["evals"]}
    counted["seed"] = {key: (row["n"], row["pass"], row["errors"]) for key, row in seed_summary(job_dir)["rows"].items()}
    counted["trial files"] = {key: (row["n"], row["pass"], row["errors"])
                              for key, row in naive_summary(job_dir)["rows"].items()}
    if any(numbers != counted["trial files"] for numbers in counted.values()):
        raise SystemExit("the summaries disagree on %s:\n%s" % (job_dir, json.dumps(counted, indent=1, default=str)))


def run_child(impl, job_dir, memory):
    argv = [sys.executable, os.path.abspath(__file__), "--child", impl, job_dir] + (["--memory"] if memory else [])
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def best_time(impl, job_dir, repeat):
    return min(run_child(impl, job_dir, False)["seconds"] for _unused in range(repeat))


PLAYBOOK = """- name: harbor_job_info through ansible-playbook
  hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: Summarize the job ({{ bench_mode }})
      when: bench_mode != 'ping'
      aisbench.agent_runtime.harbor_job_info:
        jobs_dir: "{{ bench_jobs_dir }}"
        jobs: ["{{ bench_job }}"]
        details: "{{ bench_mode == 'details' }}"
    - name: Answer (the baseline play)
      when: bench_mode == 'ping'
      ansible.builtin.ping:
"""
PLAYBOOK_MODES = ("ping", "module_utils", "details")


def playbook_seconds(job_dir, mode, workdir):
    """Wall time of one ansible-playbook run of PLAYBOOK on localhost (the whole module, as users run it)."""
    path = os.path.join(workdir, "harbor-summary-play.yml")
    with open(path, "w") as handle:
        handle.write(PLAYBOOK)
    bindir = os.path.dirname(sys.executable)
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"),
               ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".cache", "collections"),
               ANSIBLE_HOME=os.path.join(ROOT, ".cache", "ansible-home"), PATH=bindir + os.pathsep + os.environ["PATH"])
    argv = [os.path.join(bindir, "ansible-playbook"), "-i", "localhost,", path,
            "-e", "ansible_python_interpreter=%s" % sys.executable,
            "-e", "bench_mode=%s bench_jobs_dir=%s bench_job=%s" % (mode, os.path.dirname(job_dir), os.path.basename(job_dir))]
    started = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, text=True, env=env, cwd=ROOT)
    return time.perf_counter() - started


def run_benchmark(sizes, repeat=3, workdir=None, log=None, playbook=False):
    """Measure every implementation on synthetic jobs of each size; returns one dict per job."""
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
                row = {"trials": size, "finished": finished, "generate_seconds": generated}
                for impl in ("module_utils", "details", "seed"):
                    row[impl + "_seconds"] = best_time(impl, job_dir, repeat)
                    row[impl + "_peak_bytes"] = run_child(impl, job_dir, True)["peak_bytes"]
                # > 1: the seed's algorithm is faster than harbor_job_info's summary.
                row["module_utils_vs_seed"] = row["module_utils_seconds"] / row["seed_seconds"]
                if playbook:
                    for mode in PLAYBOOK_MODES:
                        row["playbook_%s_seconds" % mode] = min(playbook_seconds(job_dir, mode, workdir)
                                                                for _unused in range(repeat))
                rows.append(row)
                if log:
                    log("harbor_job_info %d trials (%s): %.1f ms (details %.1f ms) vs seed %.1f ms%s" % (
                        size, name.rsplit("-", 1)[1], row["module_utils_seconds"] * 1000,
                        row["details_seconds"] * 1000, row["seed_seconds"] * 1000,
                        ("; ansible-playbook %.2f s (details %.2f s, ping play %.2f s)" % (
                            row["playbook_module_utils_seconds"], row["playbook_details_seconds"],
                            row["playbook_ping_seconds"])) if playbook else ""))
                shutil.rmtree(job_dir)
    finally:
        if own_workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    return rows


def _job_label(row):
    return "finished" if row["finished"] else "running (5% of trials unfinished)"


def markdown_table(rows):
    lines = [
        "| trials | job | seed algorithm | `details: false` | `details: false` / seed | `details: true` (default) | peak: seed "
        "| peak: `details: false` | peak: `details: true` |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append("| %d | %s | %.1f ms | %.1f ms | %.1fx | %.1f ms | %.2f MiB | %.2f MiB | %.2f MiB |" % (
            row["trials"], _job_label(row), row["seed_seconds"] * 1000, row["module_utils_seconds"] * 1000,
            row["module_utils_vs_seed"], row["details_seconds"] * 1000, row["seed_peak_bytes"] / 2**20,
            row["module_utils_peak_bytes"] / 2**20, row["details_peak_bytes"] / 2**20))
    if all("playbook_ping_seconds" in row for row in rows):
        lines += [
            "",
            "| trials | job | one-ping play | harbor_job_info `details: false` | harbor_job_info `details: true` |",
            "|---:|---|---:|---:|---:|",
        ]
        for row in rows:
            lines.append("| %d | %s | %.2f s | %.2f s | %.2f s |" % (
                row["trials"], _job_label(row), row["playbook_ping_seconds"], row["playbook_module_utils_seconds"],
                row["playbook_details_seconds"]))
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--workdir", help="where to generate the job trees (default: a temporary directory, removed)")
    parser.add_argument("--repeat", type=int, default=3, help="time runs per case (the best is kept)")
    parser.add_argument("--output", help="also write the Markdown table to this file")
    parser.add_argument("--playbook", action="store_true",
                        help="also time the whole module through ansible-playbook (local connection)")
    parser.add_argument("--child", nargs=2, metavar=("IMPL", "JOB_DIR"), help=argparse.SUPPRESS)
    parser.add_argument("--memory", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child:
        print(json.dumps(measure(args.child[0], args.child[1], args.memory)))
        return 0

    rows = run_benchmark(args.sizes, args.repeat, args.workdir, log=lambda line: print(line, file=sys.stderr),
                         playbook=args.playbook)
    table = markdown_table(rows)
    print(table, end="")
    if args.output:
        with open(args.output, "w") as handle:
            handle.write(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
