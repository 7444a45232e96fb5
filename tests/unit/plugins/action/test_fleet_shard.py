"""Shard mode: the plan (fleet_shard, fleet_shard_plan), the merge and the fleet report of a shard night.

The jobs are real Harbor 0.25.0 runs kept in tests/fixtures/harbor/jobs (README.md there, "shard-*"): the matrix
matrices/shard.yaml (hello-pass, hello-fail, broken-verifier x oracle, nop x 2 attempts) once on one host
(shard-single), split over 2 hosts (shard2-*), over 3 hosts (shard3-*), and host-c's part rerun on host-a after a
rebalance (shard3-r1-host-a). The plans here are made again from the fixture tasks by the same code, so the test
also proves the plan is deterministic: it names exactly the recorded jobs and cuts the same task lists.
"""

import importlib.util
import itertools
import json
import os
import random

import pytest
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible_collections.aisbench.agent_runtime.plugins.action import fleet_shard_plan as plan_action
from ansible_collections.aisbench.agent_runtime.plugins.plugin_utils import _fleet_report as fr
from ansible_collections.aisbench.agent_runtime.plugins.plugin_utils import _fleet_shard as fs
from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _harbor_results as hr

from test_fleet_report import run_module

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".."))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "harbor")
FIXTURE_JOBS = os.path.join(FIXTURES, "jobs")
NIGHT = "2026-12-03"
SCORED = ("n_completed", "n_pass", "n_errored", "n_cancelled", "pass_at_1", "mean_reward")


def _load_recorder():
    spec = importlib.util.spec_from_file_location("shard_plans", os.path.join(FIXTURES, "shard_plans.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RECORDER = _load_recorder()


def fixture_plans():
    return RECORDER.plans(FIXTURES)


def host_trials(plan, lost=()):
    """{host: {job: [trial record]}} as harbor_job_info (trials: true) reports the fixture jobs of the plan."""
    result = {}
    for assignment in plan["assignments"]:
        if assignment["host"] in lost:
            continue
        summary = hr.summarize_job(os.path.join(FIXTURE_JOBS, assignment["job"]), trials=True)
        assert summary["error"] is None, summary["error"]
        result.setdefault(assignment["host"], {})[assignment["job"]] = json.loads(json.dumps(summary["trials"]))
    for jobs in result.values():
        for records in jobs.values():
            for record in records:
                record["key"] = tuple(record["key"])
    return result


def scored(evals):
    return dict(((ev["benchmark"], ev["agent"], ev["model"]), dict((f, ev[f]) for f in SCORED)) for ev in evals)


def single_host():
    summary = hr.summarize_job(os.path.join(FIXTURE_JOBS, "shard-single"), details=True)
    assert summary["error"] is None and summary["n_completed"] == 12
    return scored(summary["evals"])


# --- the plan ------------------------------------------------------------------------------

def test_plans_name_and_cut_exactly_the_recorded_jobs():
    for name, plan in fixture_plans().items():
        for host in plan["hosts"]:
            for job in fs.host_jobs(plan, host):
                with open(os.path.join(FIXTURE_JOBS, job["name"], "config.json")) as handle:
                    recorded = json.load(handle)
                cut = [(os.path.basename(d["path"]), d["task_names"]) for d in job["config"]["datasets"]]
                ran = [(os.path.basename(d["path"]), d["task_names"]) for d in recorded["datasets"]]
                assert cut == ran, (name, job["name"])
                assert [a["name"] for a in recorded["agents"]] == ["oracle", "nop"]
                assert recorded["n_attempts"] == 2


def random_listing(rng):
    datasets = []
    for index in range(rng.randint(1, 3)):
        tasks = sorted(set("t%d-%s" % (rng.randint(0, 40), rng.choice("abc*?[")) for _draw in range(rng.randint(1, 12))))
        datasets.append({"benchmark": "bench%d" % index, "path": "/data/bench%d" % index, "tasks": tasks})
    agents = [{"agent": name, "model": rng.choice([None, "m1", "m2"])}
              for name in rng.sample(["oracle", "nop", "aider", "codex"], rng.randint(1, 3))]
    matrix = {"agents": [{"name": a["agent"], "model_name": a["model"]} for a in agents],
              "datasets": [{"path": d["path"]} for d in datasets]}
    return {"matrix": matrix, "datasets": datasets, "agents": agents, "n_attempts": rng.randint(1, 3)}


def covered_units(plan):
    units = {}
    for assignment in plan["assignments"]:
        if assignment["state"] == fs.ACTIVE:
            for unit, count in fs.assignment_units(assignment).items():
                units[unit] = units.get(unit, 0) + count
    return units


def test_property_every_unit_once_deterministic_and_balanced():
    rng = random.Random(17)
    for _draw in range(300):
        listing = random_listing(rng)
        hosts = ["h%d" % i for i in range(rng.randint(1, 6))]
        durations = {}
        if rng.random() < 0.5:
            for dataset in listing["datasets"]:
                for task in dataset["tasks"]:
                    for agent in listing["agents"]:
                        if rng.random() < 0.7:
                            durations[(dataset["benchmark"], task, agent["agent"], agent["model"])] = rng.uniform(1, 900)
        plan = fs.new_plan(NIGHT, "nightly", listing, hosts, durations)
        assert covered_units(plan) == fs.plan_units(plan)
        shuffled = list(hosts)
        rng.shuffle(shuffled)
        assert fs.render_plan(fs.new_plan(NIGHT, "nightly", listing, shuffled, durations)) == fs.render_plan(plan)
        assert plan["balanced_by"] == ("duration" if durations else "count")
        # Greedy heaviest-first: no host is loaded more than one task above the lightest.
        weights, _how, _n = fs.unit_weights(plan, durations)
        loads = dict((host, 0.0) for host in hosts)
        heaviest = 0.0
        for assignment in plan["assignments"]:
            loads[assignment["host"]] += assignment["weight"]
        for (dataset_index, task), group in itertools.groupby(sorted(weights), key=lambda u: (u[0], u[1])):
            heaviest = max(heaviest, sum(weights[u] for u in group) * plan["n_attempts"])
        assert max(loads.values()) - min(loads.values()) <= heaviest + 0.01  # weights are kept to 3 decimals
        names = [a["job"] for a in plan["assignments"]]
        assert len(names) == len(set(names))
        # The cut config of each job selects exactly its tasks (task_names are fnmatch patterns in Harbor).
        for host in hosts:
            for job in fs.host_jobs(plan, host):
                for entry in job["config"]["datasets"]:
                    dataset = next(d for d in plan["datasets"] if d["path"] == entry["path"])
                    import fnmatch
                    chosen = [t for t in dataset["tasks"] if any(fnmatch.fnmatchcase(t, p) for p in entry["task_names"])]
                    assert chosen == sorted(t for i, t in sum((a["tasks"] for a in plan["assignments"]
                                                               if a["job"] == job["name"]), [])
                                            if plan["datasets"][i]["path"] == entry["path"])


def test_property_rectangles_rebuild_any_unit_counts():
    rng = random.Random(5)
    for _draw in range(300):
        units = dict(((rng.randint(0, 2), "t%d" % rng.randint(0, 9), rng.randint(0, 3)), rng.randint(0, 4))
                     for _draw in range(rng.randint(1, 30)))
        rebuilt = {}
        for shape in fs.rectangles(units):
            for dataset_index, task in shape["tasks"]:
                for agent in shape["agents"]:
                    key = (dataset_index, task, agent)
                    rebuilt[key] = rebuilt.get(key, 0) + shape["n_attempts"]
        assert rebuilt == dict((k, v) for k, v in units.items() if v > 0)


def test_measured_durations_steer_the_split():
    listing = RECORDER.listing(FIXTURES)
    by_count = fs.new_plan(NIGHT, "nightly", listing, ["host-a", "host-b"])
    parts = dict((a["host"], [t for _i, t in a["tasks"]]) for a in by_count["assignments"])
    assert by_count["balanced_by"] == "count" and parts == {"host-a": ["hello-fail", "broken-verifier"], "host-b": ["hello-pass"]}
    slow = dict(((benchmark, task, agent, None), 600.0 if task == "hello-fail" else 10.0)
                for benchmark, task in (("hello", "hello-fail"), ("hello", "hello-pass"), ("broken", "broken-verifier"))
                for agent in ("oracle", "nop"))
    plan = fs.new_plan(NIGHT, "nightly", listing, ["host-a", "host-b"], slow)
    assert plan["balanced_by"] == "duration" and plan["n_measured_units"] == 6
    # hello-fail alone weighs more than the other two tasks together: it runs alone.
    parts = dict((a["host"], [t for _i, t in a["tasks"]]) for a in plan["assignments"])
    assert parts == {"host-a": ["hello-fail"], "host-b": ["hello-pass", "broken-verifier"]}


# --- the merge equals one host running the whole matrix --------------------------------------

@pytest.mark.parametrize("name", ["2-hosts", "3-hosts", "rebalanced"])
def test_merged_pass_at_1_equals_the_single_host_run(name):
    plan = fixture_plans()[name]
    merged = fs.merge(plan, host_trials(plan))
    assert merged["n_missing"] == 0 and merged["missing"] == [] and merged["warnings"] == []
    assert merged["n_units"] == merged["n_counted"] == 12
    assert scored(merged["evals"]) == single_host()
    hosts = dict(((p["benchmark"], p["task"], p["agent"]), p["hosts"]) for p in merged["provenance"])
    for assignment in plan["assignments"]:
        if assignment["state"] == fs.ACTIVE:
            for dataset_index, task in assignment["tasks"]:
                benchmark = plan["datasets"][dataset_index]["benchmark"]
                assert hosts[(benchmark, task, "oracle")] == [assignment["host"]]


@pytest.mark.parametrize("lost", ["host-a", "host-b", "host-c"])
def test_a_lost_host_is_missing_units_never_a_smaller_denominator(lost):
    plan = fixture_plans()["3-hosts"]
    merged = fs.merge(plan, host_trials(plan, lost=[lost]))
    single = single_host()
    lost_tasks = [task for a in plan["assignments"] if a["host"] == lost for _i, task in a["tasks"]]
    assert merged["n_missing"] == 4 * len(lost_tasks)
    assert sorted(set(m["task"] for m in merged["missing"])) == sorted(lost_tasks)
    assert all(m["host"] == lost for m in merged["missing"])
    for key, numbers in scored(merged["evals"]).items():
        assert numbers["n_completed"] == single[key]["n_completed"]
        assert numbers["n_pass"] <= single[key]["n_pass"]
    ev = dict(((e["benchmark"], e["agent"]), e) for e in merged["evals"])
    if lost == "host-b":  # hello-pass: the oracle's two passes are missing
        assert ev[("hello", "oracle")]["pass_at_1"] == 0.0
        assert ev[("hello", "oracle")]["exceptions"] == {fs.MISSING_EXCEPTION: 2}


def test_rebalance_keeps_what_the_lost_host_finished_and_moves_the_rest():
    plan = fixture_plans()["3-hosts"]
    trials = host_trials(plan)
    finished = sorted(trials["host-c"]["shard3-host-c"], key=lambda r: r["finished_at"])[:3]
    trials["host-c"]["shard3-host-c"] = finished
    moved = fs.rebalance(plan, ["host-a", "host-b"], trials)
    assert moved == [{"host": "host-c", "job": "shard3-host-c", "n_units": 1, "n_kept": 3}]
    new = [a for a in plan["assignments"] if a["round"] == 1]
    assert len(new) == 1 and new[0]["host"] == "host-a" and new[0]["job"] == "shard3-r1-host-a"
    assert sum(fs.assignment_units(new[0]).values()) == 1
    assert fs.rebalance(plan, ["host-a", "host-b"], trials) == []  # nothing left to move: the plan stays
    # The lost host's later trials do not count; before the new job ran, its unit is missing (on host-a).
    trials["host-c"]["shard3-host-c"] = host_trials(fixture_plans()["3-hosts"])["host-c"]["shard3-host-c"]
    merged = fs.merge(plan, trials)
    assert merged["n_missing"] == 1 and merged["missing"][0]["host"] == "host-a"
    assert merged["n_counted"] == 11


def test_trials_outside_a_jobs_part_are_not_counted():
    plan = fixture_plans()["2-hosts"]
    trials = host_trials(plan)
    # host-b's job also holds host-a's trials (a job directory copied by hand): each unit still counts once.
    trials["host-b"]["shard2-host-b"] = trials["host-b"]["shard2-host-b"] + trials["host-a"]["shard2-host-a"]
    merged = fs.merge(plan, trials)
    assert scored(merged["evals"]) == single_host()
    assert merged["warnings"] == ["job shard2-host-b on host-b has 8 trial(s) outside its part of the matrix; not counted"]


# --- the plan action and the fleet report of a shard night -----------------------------------

def run_plan(args, check=False):
    validated = ArgumentSpecValidator(plan_action.ARGUMENT_SPEC).validate(args)
    assert not validated.error_messages, validated.error_messages
    return plan_action.run_plan(validated.validated_parameters, check_mode=check)


def put_host_summary(report_dir, host, jobs):
    host_dir = os.path.join(report_dir, NIGHT, fr.HOSTS_SUBDIR, host)
    os.makedirs(host_dir, exist_ok=True)
    path = hr.write_reports(hr.summarize(FIXTURE_JOBS, jobs, trials=True), host_dir, ["json"], "n")["json"]
    os.replace(path, os.path.join(host_dir, fr.SUMMARY_FILE))


def test_shard_night_plan_report_rerun_and_rebalance(tmp_path):
    report_dir = str(tmp_path)
    listing = RECORDER.listing(FIXTURES)
    listings = {"host-a": listing, "host-b": listing, "host-c": listing}
    args = {"report_dir": report_dir, "night": NIGHT, "job_base": "shard3", "listings": listings}
    assert run_plan(args, check=True)["changed"] is True
    assert not os.path.exists(os.path.join(report_dir, NIGHT))
    first = run_plan(args)
    assert first["changed"] and first["created"] and first["balanced_by"] == "count" and first["n_units"] == 12
    assert dict((h, [j["name"] for j in jobs]) for h, jobs in first["jobs"].items()) == {
        "host-a": ["shard3-host-a"], "host-b": ["shard3-host-b"], "host-c": ["shard3-host-c"]}
    again = run_plan(args)
    assert again["changed"] is False and again["created"] is False and again["jobs"] == first["jobs"]

    # host-c died before its summary was fetched: its 4 units are missing, pass@1 keeps them in the denominator.
    put_host_summary(report_dir, "host-a", ["shard3-host-a"])
    put_host_summary(report_dir, "host-b", ["shard3-host-b"])
    rc, report = run_module(None, {"report_dir": report_dir, "night": NIGHT, "expected_hosts": ["host-a", "host-b", "host-c"],
                                   "dropped_hosts": ["host-c"]})
    assert rc == 0, report
    assert report["mode"] == "shard" and report["shard"]["n_missing"] == 4
    assert [(m["host"], m["task"], m["n"]) for m in report["shard"]["missing"]] == [
        ("host-c", "broken-verifier", 2), ("host-c", "broken-verifier", 2)]
    single = single_host()
    for row in report["fleet"]:
        key = (row["benchmark"], row["agent"], row["model"])
        assert row["n_completed"] == single[key]["n_completed"]
    with open(os.path.join(report_dir, NIGHT, "fleet-report.md")) as handle:
        markdown = handle.read()
    assert "## Shards" in markdown and "MissingUnit" in markdown

    # Rerun with rebalance while host-c stays away: its part moves to host-a as a round-1 job.
    moved = run_plan(dict(args, listings={"host-a": listing, "host-b": listing}, rebalance=True))
    assert moved["changed"] and [m["job"] for m in moved["moved"]] == ["shard3-host-c"]
    assert [j["name"] for j in moved["jobs"]["host-a"]] == ["shard3-host-a", "shard3-r1-host-a"]
    assert moved["jobs"]["host-c"] == []
    put_host_summary(report_dir, "host-a", ["shard3-host-a", "shard3-r1-host-a"])
    rc, report = run_module(None, {"report_dir": report_dir, "night": NIGHT, "expected_hosts": ["host-a", "host-b", "host-c"],
                                   "dropped_hosts": ["host-c"]})
    assert rc == 0, report
    assert report["shard"]["n_missing"] == 0 and report["shard"]["rounds"] == 2
    assert scored([dict(r, mean_reward=single[(r["benchmark"], r["agent"], r["model"])]["mean_reward"])
                   for r in report["fleet"]]) == single
    provenance = dict(((p["task"], p["agent"]), p["hosts"]) for p in report["shard"]["provenance"])
    assert provenance[("broken-verifier", "oracle")] == ["host-a"]
    assert provenance[("hello-pass", "nop")] == ["host-b"]
    rc, again = run_module(None, {"report_dir": report_dir, "night": NIGHT, "expected_hosts": ["host-a", "host-b", "host-c"],
                                  "dropped_hosts": ["host-c"]})
    assert rc == 0 and again["changed"] is False


def test_a_later_night_balances_by_the_measured_durations(tmp_path):
    report_dir = str(tmp_path)
    listing = RECORDER.listing(FIXTURES)
    args = {"report_dir": report_dir, "night": NIGHT, "job_base": "shard2", "listings": {"host-a": listing, "host-b": listing}}
    run_plan(args)
    put_host_summary(report_dir, "host-a", ["shard2-host-a"])
    put_host_summary(report_dir, "host-b", ["shard2-host-b"])
    rc, report = run_module(None, {"report_dir": report_dir, "night": NIGHT})
    assert rc == 0 and report["shard"]["n_missing"] == 0
    later = run_plan(dict(args, night="2026-12-04", job_base="nightly-2026-12-04"))
    assert later["balanced_by"] == "duration"
    assert run_plan(dict(args, night="2026-12-05", job_base="n", balance="count"))["balanced_by"] == "count"


@pytest.mark.parametrize("change, message", [
    (lambda a: a.update(listings={}), "no host listed the matrix's tasks"),
    (lambda a: a.update(night="../x"), "night '../x' refused"),
    (lambda a: a.update(job_base="a/b"), "job_base 'a/b' refused"),
    (lambda a: a["listings"]["host-a"].update(n_attempts=0), "n_attempts must be at least 1"),
    (lambda a: a["listings"]["host-a"].update(datasets="hello"), "datasets is missing or not a list"),
    (lambda a: a["listings"]["host-a"].update(agents=[]), "no agents"),
    (lambda a: a["listings"].update({"host-a": ["not", "a", "listing"]}), "not a harbor_matrix_units result"),
])
def test_bad_plan_input_is_refused_and_writes_nothing(tmp_path, change, message):
    args = {"report_dir": str(tmp_path), "night": NIGHT, "job_base": "shard", "listings": {"host-a": RECORDER.listing(FIXTURES)}}
    change(args)
    with pytest.raises(fs.ShardError, match=message.replace("(", r"\(").replace("?", r"\?")):
        run_plan(args)
    assert os.listdir(str(tmp_path)) == []


def test_hosts_agree_on_a_matrix_harbor_printed_at_another_second(tmp_path):
    # Harbor's --print-config fills job_name with the time it ran (JobConfig's default); its equality ignores it.
    listing = RECORDER.listing(FIXTURES)
    first, second = (json.loads(json.dumps(listing)) for _copy in range(2))
    first["matrix"]["job_name"], second["matrix"]["job_name"] = "2026-12-05__07-55-12", "2026-12-05__07-55-13"
    second["matrix"]["debug"] = True
    result = run_plan({"report_dir": str(tmp_path), "night": NIGHT, "job_base": "shard",
                       "listings": {"host-a": first, "host-b": second}})
    assert result["host_problems"] == {} and result["jobs"]["host-b"]
    second["matrix"]["n_concurrent_trials"] = 7
    assert fs.listing_differences(second, first) == ["matrix.n_concurrent_trials"]


def test_a_host_with_other_tasks_gets_no_part_and_a_changed_matrix_is_refused(tmp_path):
    listing = RECORDER.listing(FIXTURES)
    other = json.loads(json.dumps(listing))
    other["datasets"][0]["tasks"] = ["hello-pass"]
    args = {"report_dir": str(tmp_path), "night": NIGHT, "job_base": "shard",
            "listings": {"host-a": listing, "host-b": listing, "host-c": other}}
    result = run_plan(args)
    assert "its matrix or task list differs" in result["host_problems"]["host-c"]
    # The message names where (the first differing keys).
    assert "differs in datasets[0].tasks" in result["host_problems"]["host-c"]
    assert result["jobs"]["host-c"] == []
    with pytest.raises(fs.ShardError, match="was planned for another matrix or task list"):
        run_plan(dict(args, listings={"host-a": other}))


def test_a_damaged_plan_file_fails_the_report_with_a_clear_error(tmp_path):
    night_dir = tmp_path / NIGHT
    (night_dir / "hosts").mkdir(parents=True)
    (night_dir / fs.PLAN_FILE).write_text('{"format": 1, "assignments": "x"}')
    rc, result = run_module(None, {"report_dir": str(tmp_path), "night": NIGHT})
    assert rc == 1 and "shard plan cannot be used" in result["msg"] and "not a shard plan" in result["msg"]
    assert sorted(os.listdir(str(night_dir))) == ["hosts", fs.PLAN_FILE]


def test_the_action_plugin_plans_like_run_plan_and_honours_check_mode(tmp_path):
    """The ActionModule itself (plugin_utils' CollectionAction): check mode writes nothing, a real run the plan."""
    from types import SimpleNamespace

    from ansible.playbook.play_context import PlayContext
    from ansible.playbook.task import Task

    listing = RECORDER.listing(FIXTURES)
    args = {"report_dir": str(tmp_path), "night": NIGHT, "job_base": "shard2",
            "listings": {"host-a": listing, "host-b": listing}}

    def run(check_mode):
        task = Task()
        task.args = dict(args)
        context = PlayContext()
        context.check_mode = check_mode
        plugin = plan_action.ActionModule(task, SimpleNamespace(_shell=SimpleNamespace(tmpdir=None)), context,
                                          None, None, None)
        return plugin.run(task_vars={})

    checked = run(True)
    assert checked["changed"] is True and checked["created"] is True and not os.path.exists(checked["plan_file"])
    done = run(False)
    assert done["changed"] is True and os.path.isfile(done["plan_file"])
    assert done["jobs"] == checked["jobs"] == run_plan(args)["jobs"]
    assert run(False)["changed"] is False
