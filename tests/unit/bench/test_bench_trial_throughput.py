"""bench/trial_throughput.py: the job config, the checks, the summaries and the rendered section, from real results
(tests/fixtures/harbor/throughput_trials: a job of the bench's own run at concurrency 4, three of its trials, and the
trace of its warm-up job)."""

import copy
import datetime
import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))
import trial_throughput  # noqa: E402

FIXTURES = ROOT / "tests/fixtures/harbor/throughput_trials"
TRIALS = ("hello-pass.json", "hello-fail.json", "big.json")


def load(name):
    return json.loads((FIXTURES / name).read_text())


def rows():
    return [dict(trial_throughput.trial_row(load(name)), trial=load(name)["trial_name"]) for name in TRIALS]


def job(trials=3):
    """The real job result, counting only the trials copied here."""
    return dict(load("job-c4.json"), n_total_trials=trials)


def test_attempts_cover_the_trials_over_the_three_tasks():
    assert [trial_throughput.attempts_for(n) for n in (1, 3, 8, 32, 33)] == [1, 1, 3, 11, 11]
    with pytest.raises(ValueError, match="at least one trial"):
        trial_throughput.attempts_for(0)


def test_job_config_sets_harbor_026s_concurrency_key():
    config = trial_throughput.job_config("j", 8, 11)
    assert config["n_concurrent_trials"] == 8 and config["n_attempts"] == 11 and "orchestrator" not in config
    assert config["agents"] == [{"name": "oracle"}] and config["datasets"] == [{"path": "/opt/swebench/tasks"}]


def test_tasks_are_the_sample_tasks_and_the_big_one(tmp_path):
    trial_throughput.prepare_tasks(str(tmp_path))
    assert sorted(path.name for path in tmp_path.iterdir()) == ["hello-fail", "hello-pass", "throughput-big"]
    assert 'name = "aisbench-bench/throughput-big"' in (tmp_path / "throughput-big" / "task.toml").read_text()
    assert (tmp_path / "throughput-big" / "environment" / "Dockerfile").read_text().endswith(
        "FROM %s\n" % trial_throughput.BIG_IMAGE)
    assert "FROM swebench/sample-hello-fail-base:latest" in (
        tmp_path / "hello-fail" / "environment" / "Dockerfile").read_text()


def test_trial_rows_come_from_harbors_timestamps():
    by_task = {row["task"]: row for row in rows()}
    assert sorted(by_task) == ["big", "hello-fail", "hello-pass"]
    assert {task: row["outcome"] for task, row in by_task.items()} == trial_throughput.EXPECTED
    for row in by_task.values():
        assert row["overhead"] == pytest.approx(row["total"] - row["agent_execution"] - row["verifier"])
        assert 0 < row["overhead"] < row["total"]


def test_job_seconds_is_finished_minus_started():
    assert trial_throughput.job_seconds(load("job-c4.json")) == pytest.approx(11.561913)
    assert trial_throughput.job_seconds(dict(load("job-c4.json"), finished_at=None)) is None


def test_check_level_accepts_the_real_job_and_names_what_is_wrong():
    assert trial_throughput.check_level(job(), rows(), 3) == []
    problems = trial_throughput.check_level(load("job-c4.json"), rows(), 9)
    assert problems == ["3 of 9 trials have a result.json"]
    flipped = rows()
    flipped[0] = dict(flipped[0], outcome="reward 0.0")
    errored = dict(rows()[2], outcome="RuntimeError")
    problems = trial_throughput.check_level(dict(job(), finished_at=None), flipped[:2] + [errored], 4)
    assert problems[0] == "the job planned 3 trials, not 4" and "3 of 4 trials have a result.json" in problems
    assert "the job has no finished_at" in problems
    assert "%s: reward 0.0, expected reward 1.0" % load("hello-pass.json")["trial_name"] in problems
    assert "%s: RuntimeError, expected reward 1.0" % load("big.json")["trial_name"] in problems


def test_cpu_split_leaves_the_engine_what_the_others_do_not_account_for():
    split = trial_throughput.cpu_split({"container": 100.0, "tasks": 10.0, "machine": 1000.0},
                                       {"container": 160.0, "tasks": 14.0, "machine": 1200.0},
                                       {"self": 5.0, "children": 30.0})
    assert split == {"total": 60.0, "task_containers": 4.0, "harbor": 5.0, "clis": 30.0, "machine": 200.0,
                     "engine": 21.0}
    unread = trial_throughput.cpu_split({"container": None, "tasks": 0.0, "machine": None},
                                        {"container": None, "tasks": 0.0, "machine": None}, None)
    assert unread["total"] is None and unread["engine"] is None


@pytest.mark.parametrize("argv, kind", [
    ("info --format {{.OSType}}", "docker info"),
    ("compose --project-name p --project-directory /x -f /a.yaml -f /b.json up --detach --wait", "compose up"),
    ("compose -p p exec -u root main bash -c true", "compose exec"),
    ("compose --project-name p cp /src/. main:/solution", "compose cp"),
    ("", "docker"),
])
def test_command_kind(argv, kind):
    assert trial_throughput.command_kind(argv) == kind


def test_trace_of_the_real_warmup():
    trace = trial_throughput.summarize_trace((FIXTURES / "warmup.trace").read_text(), 3)
    commands = trace["commands"]
    # Per trial (docker.py): one build, inspect and up; two downs; the job's preflight `docker info` on top of one
    # per trial; and 7 execs and 7 copies for the oracle and the verifier.
    assert {kind: commands[kind]["per_trial"] for kind in ("compose build", "docker inspect", "compose up",
                                                           "compose down", "compose exec", "compose cp")} == {
        "compose build": 1, "docker inspect": 1, "compose up": 1, "compose down": 2, "compose exec": 7,
        "compose cp": 7}
    assert commands["docker info"]["per_trial"] == pytest.approx(4 / 3, abs=0.01)
    assert trace["compose_runs_per_trial"] == 18.0 and trace["runs_per_trial"] == pytest.approx(20.3, abs=0.05)
    assert all(0 < entry["median"] <= entry["max"] for entry in commands.values())


def test_build_wait_joins_the_trace_with_the_trials_results():
    text = (FIXTURES / "warmup.trace").read_text()
    builds = {}
    for line in text.splitlines():
        fields = line.split("\t", 3)
        start, argv = fields[0], fields[3]
        if trial_throughput.command_kind(argv) == "compose build":
            builds[argv.split("--project-name ")[1].split()[0]] = float(start)
    assert sorted(builds) == ["hello-fail__ahlhdtj__env", "hello-pass__byrqs4y__env", "throughput-big__n8khvvk__env"]

    def result(name, before):
        moment = datetime.datetime.fromtimestamp(builds[name.lower() + "__env"] - before, datetime.timezone.utc)
        return {"trial_name": name, "environment_setup": {"started_at": moment.isoformat().replace("+00:00", "Z")}}

    results = [result("hello-pass__BYrQs4y", 0.25), result("hello-fail__AhLHdtj", 1.5),
               result("throughput-big__n8kHvVk", 4.0), {"trial_name": "never-started__x"}]
    assert trial_throughput.build_waits(text, results) == pytest.approx([0.25, 1.5, 4.0], abs=1e-5)
    trace = trial_throughput.summarize_trace(text, 3, results)
    assert trace["build_wait"] == {"median": 1.5, "max": 4.0, "trials": 3}
    assert trial_throughput.summarize_trace(text, 3)["build_wait"] is None


def _level(concurrency, scale, trace=None):
    """A level from the real rows, its phases and the job's wall time stretched by `scale`."""
    stretched = []
    for row in rows():
        stretched.append({key: (value * scale if isinstance(value, float) else value) for key, value in row.items()})
    cpu = {"total": 6.0, "task_containers": 0.5, "harbor": 0.4, "clis": 3.0, "engine": 2.1, "machine": 20.0}
    level = trial_throughput.summarize_level(concurrency, job(), stretched, cpu, [3.0, 5.5], trace)
    level["job_seconds"] = round(level["job_seconds"] * (1 if scale == 1 else 0.5), 1)
    level["trials_per_minute"] = round(3 * 60.0 / level["job_seconds"], 1)
    level["machine_busy"] = 0.97
    return level


def section():
    trace = dict(trial_throughput.summarize_trace((FIXTURES / "warmup.trace").read_text(), 3),
                 build_wait={"median": 3.5, "max": 9.25, "trials": 3})
    levels = [_level(1, 1), _level(8, 3)]
    probe = {"wall_ms": 100, "cli_cpu_ms": 50, "container_cpu_ms": 90}
    probes = {name: dict(probe) for name in trial_throughput.PROBES}
    probes["compose_exec_direct"]["cli_cpu_ms"] = 20
    variant = dict(_level(8, 3), setting="GOGC unset (Go's default, 100)")
    variant["cpu_per_trial"] = dict(variant["cpu_per_trial"], total=1.8, clis=0.8)
    return {"image": trial_throughput.IMAGE, "trials_per_level": 3, "attempts": 1, "big_mb": 256, "big_layers": 8,
            "cores": 2, "wall_seconds": 600.0,
            "setup": {"big_build_seconds": 9.0, "big_image_size": "0.47 GB", "engine_start_seconds": 1.7,
                      "load_seconds": {"sample": 4.0, "big": 6.0}},
            "warmup": _level(1, 1, trace), "levels": levels, "traced": _level(8, 3, trace), "probes": probes,
            "probe_repeat": 15,
            "side_by_side": {"env": ["GOGC unset (Go's default, 100)"], "role_env": ["GOGC=400"],
                             "jobs": [dict(levels[-1], setting="default"), variant,
                                      variant, dict(levels[-1], setting="default")],
                             "memory": {"default": {"dockerd": 150, "containerd": 50},
                                        "GOGC unset (Go's default, 100)": {"dockerd": 200, "containerd": 60}}}}


def test_summarize_level_counts_outcomes_cpu_and_rate():
    level = trial_throughput.summarize_level(4, job(), rows(), {"total": 6.0, "clis": 3.0, "machine": 9.0})
    assert level["trials"] == 3 and level["job_seconds"] == 11.6
    assert level["trials_per_minute"] == round(3 * 60 / 11.561913, 1)
    assert level["outcomes"] == {"big": ["reward 1.0"], "hello-fail": ["reward 0.0"], "hello-pass": ["reward 1.0"]}
    assert level["cpu_per_trial"] == {"total": 2.0, "clis": 1.0}  # the machine's is not per trial
    assert level["summary"]["overhead_max"] == round(max(row["overhead"] for row in rows()), 2)
    assert level["total_mean"] == round(sum(row["total"] for row in rows()) / 3, 2)


def test_render_has_the_tables_and_the_computed_findings():
    text = "\n".join(trial_throughput.render(section(), "Measured now."))
    assert text.startswith("## Trial throughput")
    assert "**3 oracle trials** (1 attempts × 3 tasks)" in text
    table = [line for line in text.splitlines() if line.startswith("| 8 | 3 |")]
    assert len(table) == 1 and "| 2.00 s | big reward 1.0, hello-fail reward 0.0, hello-pass reward 1.0 |" in table[0]
    assert "| `compose exec` | 7 |" in text and "| `compose cp` | 7 |" in text
    assert "From concurrency 1 to 8" in text and "Each trial costs 2.00 s of CPU at concurrency 8" in text
    assert "The most trials per minute came at" not in text  # the highest concurrency was the fastest here
    assert "2 cores at that cost allow 60.0 trials/min" in text
    assert "the docker / compose CLIs 1.00 s, the engine (dockerd, containerd, shims) 0.70 s" in text
    assert "cost 30 ms on each of a trial's 18 compose runs, 0.54 s per trial (27% of the 2.00 s" in text
    assert "takes 3.50 s median, 9.25 s max, at concurrency 8 (3.50 s at concurrency 1)" in text
    assert "### Side by side: the runtime container's Go GC target, the role's default (`GOGC=400`) against `GOGC unset" in text
    assert "CPU per trial 2.00 s with the role's default (`GOGC=400`), 1.80 s with `GOGC unset (Go's default, 100)` (-10%" in text
    assert "`GOGC unset (Go's default, 100)`: dockerd 200 MiB, containerd 60 MiB" in text
    assert "Whole part: 600 s. Measured now." in text


def test_render_without_trace_probes_or_variant():
    bare = copy.deepcopy(section())
    for key in ("traced", "probes", "side_by_side"):
        bare[key] = None
    bare["warmup"]["trace"] = None
    text = "\n".join(trial_throughput.render(bare, "Measured now."))
    assert "Side by side" not in text and "Probes in the runtime container" not in text
    assert "docker CLI run of the traced jobs" not in text and "From concurrency 1 to 8" in text
    bare["levels"][-1]["trials_per_minute"] = 10.0
    text = "\n".join(trial_throughput.render(bare, "Measured now."))
    assert "The most trials per minute came at concurrency 1 (%.1f)" % bare["levels"][0]["trials_per_minute"] in text


def test_run_py_renders_the_section_and_has_the_options():
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "bench" / "run.py")
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)
    snapshot = {"loadavg_1m": 7.5, "other_containers": 2}
    machine = {"cpus": 2, "cpu_model": "Test CPU", "memory_gib": 24.0, "os": "Debian", "kernel": "6.1.0",
               "docker": "20.10.24", "ansible": "ansible [core 2.19.14]", "python": "3.11.2"}
    part = dict(section(), measured_at="2026-12-05 14:00 UTC", command="python bench/run.py --skip-fleet",
                load=[snapshot, snapshot])
    text = run.render_markdown({"machine": machine, "trial_throughput": part})
    assert "## Trial throughput" in text and "1-min load average 7.5, 2 other containers" in text
    args = run.parse_args(["--skip-trial-throughput", "--throughput-concurrency", "32,1,8", "--throughput-trials",
                           "48", "--skip-throughput-variant"])
    assert args.skip_trial_throughput and args.skip_throughput_variant
    assert args.throughput_concurrency == [1, 8, 32] and args.throughput_trials == 48
    assert run.parse_args([]).throughput_concurrency == [1, 8, 32]
    with pytest.raises(SystemExit):
        run.parse_args(["--throughput-concurrency", "0,4"])
