"""`make bench`, part "agents": per-trial phase times of real agents, baked toolchain vs Harbor's own install.

Runs bench/agents.yml (the real mini-swe-agent and Qwen Code on the sample task hello-pass, offline, with the
scripted model endpoint) and reads every trial's result.json: Harbor's own phase timestamps are the numbers.
"""

import datetime
import glob
import json
import os
import statistics
import subprocess
import time

from docker_cli import docker

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PHASES = ("environment_setup", "agent_setup", "agent_execution", "verifier")
CONTAINERS = ("aisbench-bench-model-endpoint", "aisbench-bench-agents-runtime")


def _seconds(phase):
    if not phase or not phase.get("started_at") or not phase.get("finished_at"):
        return None

    def parse(text):
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))

    return (parse(phase["finished_at"]) - parse(phase["started_at"])).total_seconds()


def trial_times(result):
    """Phase seconds of one trial result (None for a phase that did not run), its total and outcome."""
    row = {phase: _seconds(result.get(phase)) for phase in PHASES}
    row["total"] = _seconds(result)
    exception = result.get("exception_info") or {}
    rewards = (result.get("verifier_result") or {}).get("rewards") or {}
    row["outcome"] = exception.get("exception_type") or "reward %s" % rewards.get("reward")
    row["agent"] = (result.get("agent_info") or {}).get("name")
    return row


def phase_summary(trials, keys, digits=1, with_max=False):
    """The trials' count, their outcomes and the median of each key (and its max, `with_max`) over the trials."""
    entry = {"trials": len(trials), "outcomes": sorted({trial["outcome"] for trial in trials})}
    for key in keys:
        values = [trial[key] for trial in trials if trial[key] is not None]
        entry[key] = round(statistics.median(values), digits) if values else None
        if with_max:
            entry[key + "_max"] = round(max(values), digits) if values else None
    return entry


def summarize(rows):
    """Per agent: the median of each phase over its trials, and the outcomes."""
    by_agent = {}
    for row in rows:
        by_agent.setdefault(row["agent"], []).append(row)
    return {agent: phase_summary(trials, PHASES + ("total",)) for agent, trials in sorted(by_agent.items())}


def trial_results(job_dir):
    """Every trial result.json of a job directory, parsed, in path order."""
    results = []
    for path in sorted(glob.glob(os.path.join(job_dir, "*", "result.json"))):
        with open(path) as handle:
            results.append(json.load(handle))
    return results


def job_trials(job_dir):
    return [trial_times(result) for result in trial_results(job_dir)]


def run_benchmark(workdir, attempts, log):
    run_id = time.strftime("%Y%m%d-%H%M%S")
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"))
    argv = [os.path.join(os.path.dirname(os.sys.executable), "ansible-playbook"), os.path.join(ROOT, "bench", "agents.yml"),
            "-e", json.dumps({"bench_agents_dir": workdir, "bench_run_id": run_id, "bench_attempts": attempts})]
    log("agents: %s" % " ".join(argv))
    started = time.time()
    try:
        proc = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    finally:
        docker("rm", "-f", *CONTAINERS, check=False)
    if proc.returncode != 0:
        raise SystemExit("bench/agents.yml failed:\n%s" % proc.stdout[-4000:])
    jobs = os.path.join(workdir, "root", "jobs")
    return {
        "baked": summarize(job_trials(os.path.join(jobs, "bench-baked-" + run_id))),
        "stock": summarize(job_trials(os.path.join(jobs, "bench-stock-" + run_id))),
        "attempts": attempts,
        "wall_seconds": round(time.time() - started, 1),
    }
