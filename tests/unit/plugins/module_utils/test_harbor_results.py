"""harbor_results on real Harbor 0.25 and 0.26 job directories (tests/fixtures/harbor/jobs; v026-* are 0.26's).

The fixture jobs were produced by real Harbor runs (see tests/fixtures/harbor/README.md):
the tasks are built so that the oracle passes hello-pass and fails hello-fail, nop fails
both, broken-verifier and broken-env error, and sleepy runs long enough to be interrupted.
Damaged variants are made here from copies of those real files.
"""

import csv
import datetime
import glob
import io
import json
import os
import re
import shutil

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".."))
from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _harbor_results as hr  # noqa: E402

FIXTURE_JOBS = os.path.join(ROOT, "tests", "fixtures", "harbor", "jobs")


@pytest.fixture
def jobs_dir(tmp_path):
    """A writable copy of the real fixture jobs."""
    target = tmp_path / "jobs"
    shutil.copytree(FIXTURE_JOBS, target, symlinks=True)
    return str(target)


def trial_dirs(job_path):
    return sorted(d for d in glob.glob(os.path.join(job_path, "*")) if os.path.isdir(d))


def load(path):
    with open(path) as handle:
        return json.load(handle)


def save(path, data):
    with open(path, "w") as handle:
        json.dump(data, handle, indent=4)


def by_name(result):
    return {job["name"]: job for job in result["jobs"]}


# --- single jobs ---------------------------------------------------------------------------

def test_pass_fail_job_from_job_result():
    job = hr.summarize_job(os.path.join(FIXTURE_JOBS, "pass-fail"))
    assert job["status"] == "finished"
    assert job["source"] == "job_result"
    assert job["error"] is None
    assert (job["n_total"], job["n_completed"], job["n_errored"], job["n_running"], job["n_pending"]) == (2, 2, 0, 0, 0)
    assert job["n_pass"] == 1
    assert job["pass_at_1"] == 0.5
    assert job["mean_reward"] == 0.5
    assert job["benchmarks"] == ["hello"]
    assert job["agents"] == ["oracle"]
    assert job["models"] == []
    assert job["exceptions"] == {}
    assert job["n_input_tokens"] is None and job["cost_usd"] is None
    raw = load(os.path.join(FIXTURE_JOBS, "pass-fail", "result.json"))
    assert job["started_at"] == raw["started_at"]
    assert job["finished_at"] == raw["finished_at"]
    # Harbor's own mean metric agrees with our mean reward.
    assert raw["stats"]["evals"]["oracle__hello"]["metrics"][0]["mean"] == job["evals"][0]["mean_reward"]


def test_errored_trials_are_counted_as_failures_with_their_exception_types():
    job = hr.summarize_job(os.path.join(FIXTURE_JOBS, "errored"))
    assert job["status"] == "finished"
    assert job["n_total"] == 3 and job["n_completed"] == 3 and job["n_errored"] == 2
    assert job["exceptions"] == {"RewardFileNotFoundError": 1, "RuntimeError": 1}
    assert job["benchmarks"] == ["broken", "hello"]
    evals = {ev["benchmark"]: ev for ev in job["evals"]}
    assert evals["broken"]["n_completed"] == 2
    assert evals["broken"]["n_errored"] == 2
    assert evals["broken"]["pass_at_1"] == 0.0
    assert evals["hello"]["pass_at_1"] == 1.0
    assert job["pass_at_1"] == pytest.approx(1 / 3, abs=1e-6)
    # The same exception types as each trial's own result.json.
    trial_types = sorted(
        load(os.path.join(d, "result.json"))["exception_info"]["exception_type"]
        for d in trial_dirs(os.path.join(FIXTURE_JOBS, "errored"))
        if load(os.path.join(d, "result.json"))["exception_info"]
    )
    assert sorted(job["exceptions"]) == trial_types


def test_two_agents_get_one_eval_each():
    job = hr.summarize_job(os.path.join(FIXTURE_JOBS, "two-agents"))
    assert job["agents"] == ["nop", "oracle"]
    evals = {ev["agent"]: ev for ev in job["evals"]}
    assert evals["oracle"]["pass_at_1"] == 0.5
    assert evals["nop"]["pass_at_1"] == 0.0
    assert evals["nop"]["key"] == "nop__hello"
    assert job["n_completed"] == 4 and job["n_pass"] == 1


def test_model_with_a_slash_is_split_out_of_the_eval_key():
    job = hr.summarize_job(os.path.join(FIXTURE_JOBS, "nop-with-model"))
    assert job["evals"][0]["key"] == "nop__acme/fake-model-1__hello"
    assert (job["evals"][0]["agent"], job["evals"][0]["model"], job["evals"][0]["benchmark"]) == ("nop", "acme/fake-model-1", "hello")
    assert job["models"] == ["acme/fake-model-1"]


def test_running_snapshot_counts_the_trial_without_result_as_running():
    job = hr.summarize_job(os.path.join(FIXTURE_JOBS, "running"))
    assert job["status"] == "unfinished"
    assert job["source"] == "job_result+trial_results"
    assert job["finished_at"] is None
    assert (job["n_total"], job["n_completed"], job["n_running"], job["n_pending"]) == (3, 0, 1, 2)
    assert job["pass_at_1"] is None
    # No results yet: benchmarks and agents come from config.json.
    assert job["benchmarks"] == ["slow", "hello"]
    assert job["agents"] == ["oracle"]


def test_interrupted_job_counts_the_cancelled_trial_as_harbor_does():
    job = hr.summarize_job(os.path.join(FIXTURE_JOBS, "interrupted"))
    assert job["status"] == "unfinished"
    assert job["n_completed"] == 1 and job["n_cancelled"] == 1 and job["n_errored"] == 1
    assert job["n_pending"] == 2
    assert job["exceptions"] == {"CancelledError": 1}
    # Harbor's live Mean counts the cancelled trial (no rewards) as 0: metrics [{"mean": 0.0}].
    raw = load(os.path.join(FIXTURE_JOBS, "interrupted", "result.json"))
    assert raw["stats"]["evals"]["oracle__slow"]["metrics"] == [{"mean": 0.0}]
    assert job["pass_at_1"] == 0.0 and job["mean_reward"] == 0.0


def test_resumed_job_is_finished_with_the_rerun_trial():
    job = hr.summarize_job(os.path.join(FIXTURE_JOBS, "resumed"))
    assert job["status"] == "finished"
    assert job["n_total"] == 3 and job["n_completed"] == 3 and job["n_cancelled"] == 0
    assert job["n_pass"] == 2
    assert sorted(job["benchmarks"]) == ["hello", "slow"]


@pytest.mark.parametrize("name", ["pass-fail", "errored", "two-agents", "nop-with-model", "resumed"])
def test_trial_scan_agrees_with_the_job_result(jobs_dir, name):
    """Summarizing from the trial files alone gives the same numbers as the job-level file."""
    from_job = hr.summarize_job(os.path.join(jobs_dir, name))
    os.unlink(os.path.join(jobs_dir, name, "result.json"))
    from_trials = hr.summarize_job(os.path.join(jobs_dir, name))
    assert from_trials["source"] == "trial_results"
    assert from_trials["status"] == "error"
    assert "result.json is missing" in from_trials["error"]
    for field in ("n_completed", "n_errored", "n_pass", "pass_at_1", "mean_reward", "exceptions", "n_total"):
        assert from_trials[field] == from_job[field], field
    # Only Harbor's recorded metrics (from the job-level file) differ.
    strip = [{k: v for k, v in ev.items() if k != "harbor_metrics"} for ev in from_job["evals"]]
    assert [{k: v for k, v in ev.items() if k != "harbor_metrics"} for ev in from_trials["evals"]] == strip


def test_unfinished_job_reads_trials_the_job_result_does_not_list_yet(jobs_dir):
    """A trial that ended after Harbor's last job-level write is read from its own file."""
    path = os.path.join(jobs_dir, "pass-fail")
    raw = load(os.path.join(path, "result.json"))
    raw["finished_at"] = None
    buckets = raw["stats"]["evals"]["oracle__hello"]["reward_stats"]["reward"]
    late = buckets.pop("1.0")
    save(os.path.join(path, "result.json"), raw)
    job = hr.summarize_job(path)
    assert job["status"] == "unfinished"
    assert late and job["n_completed"] == 2 and job["n_pass"] == 1


def test_trials_removed_by_a_resume_are_not_counted(jobs_dir):
    path = os.path.join(jobs_dir, "pass-fail")
    raw = load(os.path.join(path, "result.json"))
    raw["finished_at"] = None
    save(os.path.join(path, "result.json"), raw)
    shutil.rmtree([d for d in trial_dirs(path) if "hello-pass" in d][0])
    job = hr.summarize_job(path)
    assert job["n_completed"] == 1 and job["n_pass"] == 0 and job["n_pending"] == 1


def test_token_and_cost_totals_add_up(jobs_dir):
    """Oracle and nop report no usage; give the real trial files some and summarize again."""
    path = os.path.join(jobs_dir, "nop-with-model")
    os.unlink(os.path.join(path, "result.json"))
    usage = [(1000, 100, 50, 0.25), (3000, 0, 70, 0.5)]
    for trial, (n_in, n_cache, n_out, cost) in zip(trial_dirs(path), usage):
        result = load(os.path.join(trial, "result.json"))
        result["agent_result"].update(n_input_tokens=n_in, n_cache_tokens=n_cache, n_output_tokens=n_out, cost_usd=cost)
        save(os.path.join(trial, "result.json"), result)
    job = hr.summarize_job(path)
    assert (job["n_input_tokens"], job["n_cache_tokens"], job["n_output_tokens"]) == (4000, 100, 120)
    assert job["cost_usd"] == pytest.approx(0.75)


def test_job_level_token_totals_are_used_for_finished_jobs(jobs_dir):
    path = os.path.join(jobs_dir, "pass-fail")
    raw = load(os.path.join(path, "result.json"))
    raw["stats"].update(n_input_tokens=12, n_cache_tokens=0, n_output_tokens=3, cost_usd=0.01)
    save(os.path.join(path, "result.json"), raw)
    job = hr.summarize_job(path)
    assert (job["n_input_tokens"], job["n_cache_tokens"], job["n_output_tokens"], job["cost_usd"]) == (12, 0, 3, 0.01)


# --- damaged files -------------------------------------------------------------------------

@pytest.mark.parametrize("content,message", [
    (b"", "result.json is empty"),
    (b'{"id": "6f03", "started_at": "2026-12-02T18:38:21"', "result.json is not valid JSON"),
    (b"[1, 2]", "result.json is not an object"),
    (b"\xff\xfe garbage", "result.json is not valid JSON"),
])
def test_corrupt_job_result_is_reported_and_trials_still_counted(jobs_dir, content, message):
    path = os.path.join(jobs_dir, "pass-fail")
    with open(os.path.join(path, "result.json"), "wb") as handle:
        handle.write(content)
    job = hr.summarize_job(path)
    assert job["status"] == "error"
    assert message in job["error"]
    assert job["n_completed"] == 2 and job["n_pass"] == 1


def test_missing_config_is_reported_but_the_result_is_used(jobs_dir):
    path = os.path.join(jobs_dir, "two-agents")
    os.unlink(os.path.join(path, "config.json"))
    job = hr.summarize_job(path)
    assert job["status"] == "finished"
    assert job["error"] == "config.json is missing"
    assert job["pass_at_1"] == 0.25


def test_corrupt_trial_result_in_a_running_job_is_listed(jobs_dir):
    path = os.path.join(jobs_dir, "interrupted")
    trial = trial_dirs(path)[0]
    os.unlink(os.path.join(path, "result.json"))
    with open(os.path.join(trial, "result.json"), "w") as handle:
        handle.write('{"trial_name": "cut')
    job = hr.summarize_job(path)
    assert job["trial_errors"] == [{"trial": os.path.basename(trial), "error": "result.json is not valid JSON"}]
    assert job["n_completed"] == 0
    assert job["n_total"] == 3  # from lock.json


def test_job_directory_not_found(tmp_path):
    job = hr.summarize_job(str(tmp_path / "nope"))
    assert job["status"] == "error" and job["error"] == "job directory not found"


def test_unreadable_job_result(jobs_dir):
    if os.geteuid() == 0:
        # root reads anything: make result.json a directory instead.
        path = os.path.join(jobs_dir, "pass-fail", "result.json")
        os.unlink(path)
        os.mkdir(path)
    else:
        os.chmod(os.path.join(jobs_dir, "pass-fail", "result.json"), 0)
    job = hr.summarize_job(os.path.join(jobs_dir, "pass-fail"))
    assert job["status"] == "error"
    assert "cannot read result.json" in job["error"]


# --- selection and odd names ---------------------------------------------------------------

ODD_NAMES = ["with space", "ünïcode-名前", "brackets[1]", "-leading-dash", "star*name", "quote'\"name"]


@pytest.fixture
def odd_jobs_dir(jobs_dir):
    for name in ODD_NAMES:
        shutil.copytree(os.path.join(jobs_dir, "pass-fail"), os.path.join(jobs_dir, name))
    os.makedirs(os.path.join(jobs_dir, ".harbor_job", "pass-fail"))
    os.makedirs(os.path.join(jobs_dir, "not-a-job", "empty"))
    with open(os.path.join(jobs_dir, "stray-file.json"), "w") as handle:
        handle.write("{}")
    return jobs_dir


def test_all_lists_job_directories_only(odd_jobs_dir):
    names = hr.list_jobs(odd_jobs_dir)
    assert ".harbor_job" not in names and "not-a-job" not in names and "stray-file.json" not in names
    assert set(ODD_NAMES) <= set(names)
    result = hr.summarize(odd_jobs_dir, ["all"])
    jobs = by_name(result)
    for name in ODD_NAMES:
        assert jobs[name]["status"] == "finished" and jobs[name]["pass_at_1"] == 0.5


def test_exact_names_win_over_glob_reading(odd_jobs_dir):
    assert hr.select_jobs(odd_jobs_dir, ["brackets[1]"]) == (["brackets[1]"], [])
    assert hr.select_jobs(odd_jobs_dir, ["star*name"]) == (["star*name"], [])
    assert hr.select_jobs(odd_jobs_dir, ["-leading-dash", "with space"]) == (["-leading-dash", "with space"], [])


def test_globs_latest_and_unmatched_names(odd_jobs_dir):
    selected, unmatched = hr.select_jobs(odd_jobs_dir, ["*-agents", "pass-*", "missing-job", "nothing-*"])
    assert selected == ["two-agents", "pass-fail"]
    assert unmatched == ["missing-job"]
    # latest: the job whose result.json records the latest start.
    starts = {}
    for name in hr.list_jobs(odd_jobs_dir):
        try:
            starts[name] = load(os.path.join(odd_jobs_dir, name, "result.json"))["started_at"]
        except (OSError, ValueError):
            pass
    newest = max(starts.values())
    latest, _unused = hr.select_jobs(odd_jobs_dir, ["latest"])
    assert len(latest) == 1 and starts[latest[0]] == newest


def test_unmatched_name_is_reported_as_a_job_with_an_error(jobs_dir):
    result = hr.summarize(jobs_dir, ["pass-fail", "missing-job"])
    jobs = by_name(result)
    assert jobs["missing-job"]["error"] == "job directory not found"
    assert jobs["pass-fail"]["error"] is None


def test_latest_of_an_empty_directory(tmp_path):
    assert hr.select_jobs(str(tmp_path), ["latest"]) == ([], [])
    assert hr.summarize(str(tmp_path), ["all"]) == {"jobs": [], "pass_at_1": []}


# --- pass@1 table and reports --------------------------------------------------------------

def test_pass_at_1_table_sums_over_jobs():
    result = hr.summarize(FIXTURE_JOBS, ["pass-fail", "two-agents", "errored", "nop-with-model"])
    rows = {(r["benchmark"], r["agent"], r["model"]): r for r in result["pass_at_1"]}
    oracle = rows[("hello", "oracle", None)]
    assert sorted(oracle["jobs"]) == ["errored", "pass-fail", "two-agents"]
    # pass-fail 1/2, two-agents 1/2, errored 1/1.
    assert (oracle["n_pass"], oracle["n_completed"]) == (3, 5)
    assert oracle["pass_at_1"] == 0.6
    assert rows[("hello", "nop", None)]["pass_at_1"] == 0.0
    assert rows[("hello", "nop", "acme/fake-model-1")]["jobs"] == ["nop-with-model"]
    assert rows[("broken", "oracle", None)]["n_errored"] == 2


def test_write_reports(tmp_path, odd_jobs_dir):
    result = hr.summarize(odd_jobs_dir, ["all"])
    paths = hr.write_reports(result, str(tmp_path), timestamp="20261202-060000")
    assert paths == {fmt: str(tmp_path / ("summary-20261202-060000." + fmt)) for fmt in ("json", "csv", "md")}
    data = load(paths["json"])
    assert data["pass_at_1"] == result["pass_at_1"] and len(data["jobs"]) == len(result["jobs"])
    with open(paths["csv"], newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == list(hr.CSV_COLUMNS)
    # One row per job and eval (two-agents and errored have two each).
    assert len(rows) == sum(max(len(j["evals"]), 1) for j in result["jobs"])
    dash = [r for r in rows if r["job"].endswith("-leading-dash")]
    assert dash and dash[0]["job"] == "'-leading-dash"  # no spreadsheet formula
    markdown = open(paths["md"]).read()
    assert "| hello | oracle |  | 0.5" in markdown
    assert "brackets[1]" in markdown
    assert oct(os.stat(paths["md"]).st_mode & 0o777) == "0o644"


def test_reports_guard_and_escape_hostile_job_names(jobs_dir):
    """The CSV and Markdown cells follow report_cells (tab-led formula guarded; backslash, backtick, pipe escaped)."""
    name = "\t=tab`tick\\back|pipe"
    shutil.copytree(os.path.join(jobs_dir, "pass-fail"), os.path.join(jobs_dir, name), symlinks=True)
    result = hr.summarize(jobs_dir, [name])
    rows = list(csv.DictReader(io.StringIO(hr.render_csv(result))))
    assert [row["job"] for row in rows] == ["'" + name]
    markdown = hr.render_markdown(result, "now")
    assert "| \t=tab\\`tick\\\\back\\|pipe | finished |" in markdown
    for block in markdown.split("\n\n"):
        lines = [line for line in block.splitlines() if line.startswith("|")]
        if lines:
            assert len({len(line.replace("\\\\", "").replace("\\|", "").split("|")) for line in lines}) == 1, block


def test_markdown_lists_problems(jobs_dir):
    with open(os.path.join(jobs_dir, "pass-fail", "result.json"), "w") as handle:
        handle.write("{")
    text = hr.render_markdown(hr.summarize(jobs_dir, ["all"]), "now")
    assert "## Problems" in text and "`pass-fail`: result.json is not valid JSON" in text


@pytest.mark.parametrize("key,expected", [
    ("oracle__hello", ("oracle", None, "hello")),
    ("nop__acme/fake-model-1__hello", ("nop", "acme/fake-model-1", "hello")),
    ("agent__weird__model__set", ("agent", "weird__model", "set")),
    ("lonely", ("lonely", None, "adhoc")),
])
def test_split_eval_key(key, expected):
    assert hr.split_eval_key(key) == expected


# --- Harbor's own numbers are the oracle ----------------------------------------------------

ALL_FIXTURE_JOBS = sorted(name for name in os.listdir(FIXTURE_JOBS) if hr.is_job_dir(os.path.join(FIXTURE_JOBS, name)))


def harbor_named_trials(recorded):
    """Every trial a job-level eval names (in any reward bucket or exception list)."""
    named = set()
    for buckets in recorded["reward_stats"].values():
        for trials in buckets.values():
            named.update(trials)
    for trials in recorded["exception_stats"].values():
        named.update(trials)
    return named


def step_only_errors(path, eval_key):
    """Trials of an eval with an exception on a step but none of their own: Harbor 0.25's job-level stats do not count
    them (JobStats.increment reads exception_info only), 0.26's do (recorded_exceptions), and so do we."""
    found = {}
    for trial in trial_dirs(path):
        try:
            result = load(os.path.join(trial, "result.json"))
        except FileNotFoundError:
            continue
        record = hr.trial_record(result, os.path.basename(trial))
        if "__".join(part for part in record["key"] if part) != eval_key or result.get("exception_info"):
            continue
        for step in result.get("step_results") or []:
            if step.get("exception_info"):
                found.setdefault(step["exception_info"]["exception_type"], set()).add(record["trial"])
    return found


@pytest.mark.parametrize("details", [False, True], ids=["job-level", "details"])
@pytest.mark.parametrize("name", ALL_FIXTURE_JOBS)
def test_numbers_equal_what_harbor_recorded(name, details):
    """Property test over every real fixture job: our counts and rewards are Harbor's (result.json)."""
    path = os.path.join(FIXTURE_JOBS, name)
    raw = load(os.path.join(path, "result.json"))
    stats = raw["stats"]
    job = hr.summarize_job(path, details=details)
    evals = {ev["key"]: ev for ev in job["evals"]}
    checked = 0
    for key, recorded in stats["evals"].items():
        ev = evals[key]
        assert ev["n_completed"] >= len(harbor_named_trials(recorded)), key
        assert ev["n_rewarded"] == recorded["n_trials"], key          # AgentDatasetStats.n_trials
        # Harbor 0.25 does not count the steps' exceptions in its job-level stats; read from the trials, we do.
        unseen = step_only_errors(path, key) if details and not hr.rewards_validated(raw) else {}
        assert ev["n_errored"] == recorded["n_errors"] + len(set().union(*unseen.values())), key  # AgentDatasetStats.n_errors
        expected = {t: len(v) for t, v in recorded["exception_stats"].items() if v}
        for exc_type, trials in unseen.items():
            expected[exc_type] = expected.get(exc_type, 0) + len(trials)
        assert ev["exceptions"] == expected, key
        assert ev["n_cancelled"] == len(recorded["exception_stats"].get("CancelledError", [])), key
        for reward_key, buckets in recorded["reward_stats"].items():
            assert ev["rewards"][reward_key]["n_pass"] == sum(
                len(trials) for value, trials in buckets.items() if float(value) >= 1), (key, reward_key)
        assert ev["harbor_metrics"] == recorded["metrics"]
        if not recorded["metrics"]:
            continue  # Harbor has not computed this eval's metric yet (e.g. right after a resume)
        # The fixture configs set no metrics, so Harbor's only metric is its default Mean.
        (mean,) = recorded["metrics"]
        if set(mean) == {"mean"}:
            assert ev["mean_reward"] == pytest.approx(mean["mean"], abs=1e-6), key
            assert len(ev["rewards"]) <= 1
        else:
            assert set(mean) == set(ev["rewards"]), key
            for reward_key, value in mean.items():
                assert ev["rewards"][reward_key]["mean"] == pytest.approx(value, abs=1e-6), (key, reward_key)
            assert ev["mean_reward"] == pytest.approx(mean[ev["primary_key"]], abs=1e-6), key
        if ev["binary_rewards"]:
            assert ev["pass_at_1"] == pytest.approx(ev["mean_reward"], abs=1e-6), key
        checked += 1
    assert checked or not stats["evals"] or name == "running"
    if raw["finished_at"]:
        assert set(evals) == set(stats["evals"])
        assert job["n_completed"] == stats["n_completed_trials"]
        unseen = set()
        if details and not hr.rewards_validated(raw):
            for key in stats["evals"]:
                unseen.update(*step_only_errors(path, key).values())
        assert job["n_errored"] == stats["n_errored_trials"] + len(unseen)
        assert job["n_cancelled"] == stats["n_cancelled_trials"]
        for field in hr.TOKEN_FIELDS:
            assert job[field] == stats[field], field
    if details:
        for ev in job["evals"]:
            assert sum(task["n_trials"] for task in ev["tasks"]) == ev["n_completed"]
            assert sum(task["n_pass"] for task in ev["tasks"]) == ev["n_pass"]


def test_the_fixture_jobs_cover_what_results_must_survive():
    """Multi-key rewards without a reward key, missing rewards, errors, cancellations, tokens, running jobs."""
    seen = set()
    for name in ALL_FIXTURE_JOBS:
        raw = load(os.path.join(FIXTURE_JOBS, name, "result.json"))
        for recorded in raw["stats"]["evals"].values():
            keys = set(recorded["reward_stats"])
            if len(keys) > 1 and "reward" not in keys:
                seen.add("multi-key without reward")
            if len(keys) > 1 and "reward" in keys:
                seen.add("reward beside other keys")
            for exc_type in recorded["exception_stats"]:
                seen.add("RewardFileNotFoundError" if exc_type == "RewardFileNotFoundError" else exc_type)
        if raw["stats"]["cost_usd"]:
            seen.add("cost")
        seen.add("finished" if raw["finished_at"] else "unfinished")
        if raw["finished_at"] and raw["stats"]["n_cancelled_trials"]:
            seen.add("finished with a cancelled trial")
    assert {"multi-key without reward", "reward beside other keys", "RewardFileNotFoundError", "RuntimeError",
            "CancelledError", "AgentTimeoutError", "cost", "finished", "unfinished",
            "finished with a cancelled trial"} <= seen


def test_multi_key_job_reads_the_same_running_and_finished():
    """The issue's case: several keys, no reward key; pass@1 is Harbor's accuracy mean at both moments."""
    running = hr.summarize_job(os.path.join(FIXTURE_JOBS, "multi-key-running"))
    finished = hr.summarize_job(os.path.join(FIXTURE_JOBS, "multi-key"))
    for job, expected in ((running, 2 / 3), (finished, 0.6)):
        ev = {e["benchmark"]: e for e in job["evals"]}["multikey"]
        assert ev["primary_key"] == "accuracy" and "first of 2 keys" in ev["primary_key_reason"]
        assert ev["pass_at_1"] == pytest.approx(expected, abs=1e-6)
    ev = {e["benchmark"]: e for e in finished["evals"]}["multikey"]
    # The trial without a reward file and the one that wrote only accuracy are counted (0 where a key is missing).
    assert ev["n_completed"] == 5 and ev["n_rewarded"] == 4 and ev["exceptions"] == {"RewardFileNotFoundError": 1}
    assert ev["rewards"]["style"]["mean"] == 0.5
    rewardplus = {e["benchmark"]: e for e in finished["evals"]}["rewardplus"]
    assert rewardplus["primary_key"] == "reward" and rewardplus["binary_rewards"] is True
    assert rewardplus["rewards"]["n_tests"]["mean"] == 1.5


def test_a_configured_reward_key_wins():
    job = hr.summarize_job(os.path.join(FIXTURE_JOBS, "multi-key"), reward_key="style")
    ev = {e["benchmark"]: e for e in job["evals"]}
    assert ev["multikey"]["primary_key"] == "style" and ev["multikey"]["primary_key_reason"] == "configured (reward_key)"
    assert ev["multikey"]["mean_reward"] == 0.5 and ev["multikey"]["pass_at_1"] == 0.4
    # An eval without that key keeps the default rule.
    assert ev["rewardplus"]["primary_key"] == "reward"


def test_choose_primary_key_rules():
    assert hr.choose_primary_key([]) == (None, "no trial recorded a reward")
    assert hr.choose_primary_key(["score"])[0] == "score"
    assert hr.choose_primary_key(["b", "reward", "a"])[0] == "reward"
    assert hr.choose_primary_key(["style", "accuracy"])[0] == "accuracy"
    assert hr.choose_primary_key(["style", "accuracy"], "style")[0] == "style"
    assert hr.choose_primary_key(["reward"], "missing")[0] == "reward"


def test_score_trials_follows_harbors_mean():
    # No rewards at all (every trial errored): Harbor's Mean is {"mean": 0}.
    scored = hr.score_trials([(None, ["RuntimeError"], None), (None, ["CancelledError"], None)])
    assert (scored["n_completed"], scored["n_errored"], scored["n_cancelled"], scored["pass_at_1"], scored["mean_reward"]) == (2, 2, 1, 0.0, 0.0)
    # An errored trial that was graded keeps its reward; an empty rewards dict counts 0.
    scored = hr.score_trials([({"reward": 1.0}, ["AgentTimeoutError"], None), ({}, [], None), ({"reward": 0.0}, [], None)])
    assert (scored["n_pass"], scored["n_rewarded"], scored["pass_at_1"]) == (1, 3, pytest.approx(1 / 3, abs=1e-6))
    assert hr.score_trials([])["pass_at_1"] is None


def test_harbor_026_scores_only_the_trials_whose_reward_is_valid():
    # Harbor 0.26 (job.py final_rewards, JobStats.update_trial): a trial whose reward is not valid is in no mean, a
    # valid one with an exception that keeps its reward (AgentTimeoutError) is; a trial raising two types counts once.
    scored = hr.score_trials([({"reward": 1.0}, ["AgentTimeoutError"], True), ({"reward": 1.0}, ["ApiError"], False),
                              (None, ["CancelledError", "RewardFileNotFoundError"], False), ({"reward": 0.0}, [], True)])
    assert (scored["n_completed"], scored["n_scored"], scored["n_reward_invalid"], scored["n_pass"]) == (4, 2, 2, 1)
    assert (scored["pass_at_1"], scored["mean_reward"], scored["n_errored"], scored["n_cancelled"]) == (0.5, 0.5, 3, 1)
    assert scored["exceptions"] == {"AgentTimeoutError": 1, "ApiError": 1, "CancelledError": 1, "RewardFileNotFoundError": 1}
    # Nothing valid: no pass@1, as Harbor writes no metric.
    assert hr.score_trials([(None, ["CancelledError"], False)])["pass_at_1"] is None


def test_details_give_tasks_tokens_cost_and_durations():
    job = hr.summarize_job(os.path.join(FIXTURE_JOBS, "metered"), details=True)
    evals = {(e["agent"], e["benchmark"]): e for e in job["evals"]}
    metered = evals[("metered", "hello")]
    assert metered["model"] == "acme/metered-1"
    assert (metered["n_input_tokens"], metered["n_cache_tokens"], metered["n_output_tokens"]) == (2400, 400, 600)
    assert metered["cost_usd"] == pytest.approx(0.0084) and metered["n_cost_reported"] == 2
    assert evals[("oracle", "hello")]["cost_usd"] is None and evals[("oracle", "hello")]["n_cost_reported"] == 0
    # The per-eval sums add up to Harbor's job totals.
    raw = load(os.path.join(FIXTURE_JOBS, "metered", "result.json"))["stats"]
    assert sum(e["n_input_tokens"] or 0 for e in job["evals"]) == raw["n_input_tokens"]
    assert sum(e["cost_usd"] or 0 for e in job["evals"]) == pytest.approx(raw["cost_usd"])
    tasks = {t["task"]: t for t in evals[("oracle", "hello")]["tasks"]}
    assert tasks["hello-pass"]["n_pass"] == 1 and tasks["hello-fail"]["n_fail"] == 1
    timeout = evals[("oracle", "timeouts")]["tasks"][0]
    # Graded after an AgentTimeoutError with reward 1: it passes, and the exception is kept.
    assert timeout["n_pass"] == 1 and timeout["exceptions"] == {"AgentTimeoutError": 1}
    # Phase durations are the differences of the trial's own timestamps.
    trial = load(os.path.join(FIXTURE_JOBS, "metered", timeout["trials"][0], "result.json"))
    durations = evals[("oracle", "timeouts")]["durations"]
    assert durations["agent_execution"]["n"] == 1
    assert 2.9 < durations["agent_execution"]["total_sec"] < 4  # the task's agent timeout is 3 s
    assert trial["exception_info"]["exception_type"] == "AgentTimeoutError"
    errored = hr.summarize_job(os.path.join(FIXTURE_JOBS, "errored"), details=True)
    broken = {e["benchmark"]: e for e in errored["evals"]}["broken"]
    assert {t["task"]: t["n_error"] for t in broken["tasks"]} == {"broken-env": 1, "broken-verifier": 1}


def test_progress_of_a_running_job(jobs_dir):
    path = os.path.join(jobs_dir, "multi-key-running")
    job = hr.summarize_job(path)
    config_mtime = os.stat(os.path.join(path, "config.json")).st_mtime
    for trial in trial_dirs(path):
        if os.path.exists(os.path.join(trial, "result.json")):
            os.utime(os.path.join(trial, "result.json"), (config_mtime + 60, config_mtime + 60))
    progress = hr.job_progress(path, job, now=config_mtime + 120)
    # 3 of 7 done in 120 s: 4 left at 40 s each.
    assert (progress["n_completed"], progress["n_total"], progress["n_errored"], progress["eta_sec"]) == (3, 7, 1, 160)
    assert progress["line"].startswith("job multi-key-running: 3/7 trials done, 1 errored (RewardFileNotFoundError=1), 2 running")
    assert progress["line"].endswith("elapsed 2m00s, ETA 2m40s")
    # Right after a resume no trial has ended in this run yet: no rate, no ETA.
    os.utime(os.path.join(path, "config.json"), (config_mtime + 100, config_mtime + 100))
    fresh = hr.job_progress(path, job, now=config_mtime + 120)
    assert fresh["eta_sec"] is None and fresh["line"].endswith("ETA unknown (no trial ended yet)")


def test_import_path_agents_are_named_by_their_trials(jobs_dir):
    """harbor_job maps named agents to import_path classes (baked toolchains): the config then names no agent, and
    the job must not be listed under Harbor's default agent, oracle."""
    job_path = os.path.join(jobs_dir, "nop-with-model")
    config_path = os.path.join(job_path, "config.json")
    with open(config_path) as handle:
        config = json.load(handle)
    config["agents"] = [{"import_path": "aisbench_harbor.agents:MiniSweAgent", "model_name": "openai/scripted"}]
    with open(config_path, "w") as handle:
        json.dump(config, handle)
    job = hr.summarize_job(job_path)
    assert "oracle" not in job["agents"]
    assert job["agents"] == sorted(set(job["agents"])) and job["agents"]  # only the trials' own agent names
    assert "openai/scripted" in job["models"]


DIVISION_BY_COMPLETED = re.compile(r'/ *(n_completed|completed|\w+\["n_completed"\]) *[,)]')


def test_per_completed_is_the_one_pass_at_1_division():
    assert hr.per_completed(2, 3) == 0.666667
    assert hr.per_completed(0, 4) == 0.0
    assert hr.per_completed(0, 0) is None and hr.per_completed(5.0, None) is None
    assert hr.score_trials([({"reward": 1.0}, [], None), ({"reward": 0.0}, ["CancelledError"], None),
                            (None, ["AgentTimeoutError"], None)], None)["pass_at_1"] == hr.per_completed(1, 3)
    # The fleet report and the pass@1 table divide through it too: no other "/ n_completed" in module_utils or
    # plugin_utils (the fleet report's home on the controller).
    for package in ("module_utils", "plugin_utils"):
        directory = os.path.join(ROOT, "plugins", package)
        for name in sorted(os.listdir(directory)):
            if name.endswith(".py"):
                with open(os.path.join(directory, name), encoding="utf-8") as handle:
                    lines = [line for line in handle if DIVISION_BY_COMPLETED.search(line)]
                assert lines == ([] if name != "_harbor_results.py" else ["    return round(total / n_completed, 6) if n_completed else None\n"]), name


# --- Harbor 0.26: reward_valid; multi-step trials -----------------------------------------------------------

def test_the_same_errored_tasks_score_as_each_harbor_release_records_them():
    # broken-env (RuntimeError, no verifier result), broken-verifier (RewardFileNotFoundError), hello-pass (reward 1).
    old = hr.summarize_job(os.path.join(FIXTURE_JOBS, "errored"), details=True)
    new = hr.summarize_job(os.path.join(FIXTURE_JOBS, "v026-errored"), details=True)
    # 0.25's mean counts every trial (1 of 3); 0.26's only those whose reward is valid (1 of 1; broken has none).
    assert (old["pass_at_1"], old["n_scored"], old["n_completed"]) == (0.333333, 3, 3)
    assert (new["pass_at_1"], new["n_scored"], new["n_reward_invalid"], new["n_completed"]) == (1.0, 1, 2, 3)
    broken = {ev["benchmark"]: ev for ev in new["evals"]}["broken"]
    assert (broken["pass_at_1"], broken["n_errored"], broken["harbor_metrics"]) == (None, 2, [])
    assert {task["task"]: task["n_error"] for task in broken["tasks"]} == {"broken-env": 1, "broken-verifier": 1}
    assert all(record["reward_valid"] is False for record in hr.summarize_job(
        os.path.join(FIXTURE_JOBS, "v026-errored"), trials=True)["trials"] if record["task"].startswith("broken"))


def raw_step_seconds(step, phase):
    timing = step.get(phase) or {}
    start, end = (timing.get("started_at"), timing.get("finished_at"))
    if not start or not end:
        return None

    def parse(text):
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))

    return (parse(end) - parse(start)).total_seconds()


@pytest.mark.parametrize("name", ["v025-multi-step", "v026-multi-step"])
def test_multi_step_trials_are_timed_and_their_step_exceptions_counted_as_harbor_recorded_them(name):
    path = os.path.join(FIXTURE_JOBS, name)
    job = hr.summarize_job(path, trials=True)
    records = {record["trial"]: record for record in job["trials"]}
    expected_steps = {}
    for trial in trial_dirs(path):
        raw = load(os.path.join(trial, "result.json"))
        record = records[os.path.basename(trial)]
        # A multi-step trial has no trial-level agent or verifier timing: they are in its steps.
        assert raw["agent_execution"] is None and raw["verifier"] is None and raw["step_results"]
        for phase in ("agent_execution", "verifier"):
            seconds = [raw_step_seconds(step, phase) for step in raw["step_results"]]
            assert record["durations"][phase] == pytest.approx(sum(s for s in seconds if s is not None), abs=1e-3)
        assert record["exceptions"] == [step["exception_info"]["exception_type"] for step in raw["step_results"]
                                        if step["exception_info"]]
        assert [step["step"] for step in record["steps"]] == [step["step_name"] for step in raw["step_results"]]
        for step in raw["step_results"]:
            totals = expected_steps.setdefault((record["key"], record["task"], step["step_name"]), [0, 0.0, 0])
            totals[0] += 1
            totals[1] += raw_step_seconds(step, "agent_execution") or 0.0
            totals[2] += 1 if step["exception_info"] else 0
    got = {}
    for ev in job["evals"]:
        key = (ev["agent"], ev["model"], ev["benchmark"])
        for step in ev["steps"]:
            agent_seconds = step["durations"]["agent_execution"]["total_sec"]
            got[(key, step["task"], step["step"])] = [step["n_trials"], agent_seconds, step["n_errored"]]
        # The eval's agent time is the sum of its trials' steps.
        assert ev["durations"]["agent_execution"]["total_sec"] == pytest.approx(
            sum(step["durations"]["agent_execution"]["total_sec"] for step in ev["steps"]), abs=1e-2)
    assert set(got) == set(expected_steps)
    for key, (n_trials, seconds, errored) in expected_steps.items():
        assert got[key][0] == n_trials and got[key][2] == errored and got[key][1] == pytest.approx(seconds, abs=1e-2), key
    # The broken step stopped its trial: the step after it never ran, in either release.
    assert sorted(step["step"] for ev in job["evals"] for step in ev["steps"] if step["task"] == "ms-broken-step") == [
        "broken", "broken", "write", "write"]
    assert job["exceptions"] == {"RewardFileNotFoundError": 2}
    text = hr.render_markdown(hr.summarize(FIXTURE_JOBS, [name], details=True), "now")
    assert "## Steps of multi-step trials" in text and "| ms-broken-step | broken | 1 |" in text
