"""bench/trial_overhead.py: the big image's Dockerfile, the big task, and the overhead read from real trial results
(tests/fixtures/harbor/overhead_trials: oracle trials of the bench's own run, sample task on overlay2, big image on
vfs)."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))
import agents  # noqa: E402
import trial_overhead  # noqa: E402

FIXTURES = ROOT / "tests/fixtures/harbor/overhead_trials"


def load(name):
    return json.loads((FIXTURES / name).read_text())


def test_big_image_spreads_the_data_over_its_layers():
    dockerfile = trial_overhead.big_image_dockerfile(1000, 3)
    lines = dockerfile.splitlines()
    assert lines[0] == "FROM " + trial_overhead.SAMPLE_IMAGE
    assert len(lines) == 4 and all(line.startswith("RUN ") for line in lines[1:])
    assert ["334M", "333M", "333M"] == [line.split("head -c ")[1].split()[0] for line in lines[1:]]
    assert len({line.split("> ")[1] for line in lines[1:]}) == 3  # one file per layer


@pytest.mark.parametrize("total_mb, layers", [(10, 0), (2, 3)])
def test_big_image_refuses_a_layer_without_data(total_mb, layers):
    with pytest.raises(ValueError, match="at least one layer"):
        trial_overhead.big_image_dockerfile(total_mb, layers)


def test_sample_base_is_the_baked_images_template():
    dockerfile = trial_overhead.sample_base_dockerfile()
    assert "FROM local/debian:12-minbase\n" in dockerfile
    assert "WORKDIR /testbed" in dockerfile and 'org.aisbench.case="hello-pass"' in dockerfile


def test_big_task_is_the_sample_task_under_its_own_name(tmp_path):
    trial_overhead.prepare_tasks(str(tmp_path))
    sample = (tmp_path / "hello-pass" / "task.toml").read_text()
    big = (tmp_path / "overhead-big" / "task.toml").read_text()
    assert 'name = "aisbench-bench/overhead-big"' in big and 'name = "aisbench-sample/hello-pass"' in sample
    assert "build_timeout_sec = 900.0" in big
    assert (tmp_path / "overhead-big" / "environment" / "Dockerfile").read_text().endswith(
        "FROM %s\n" % trial_overhead.BIG_IMAGE)
    assert (tmp_path / "overhead-big" / "tests" / "test.sh").read_text() == (
        tmp_path / "hello-pass" / "tests" / "test.sh").read_text()
    with pytest.raises(ValueError, match="does not name"):
        trial_overhead.big_task_toml(big)


def test_overhead_is_the_total_but_agent_and_verifier():
    result = load("sample-overlay2.json")
    row = trial_overhead.overhead_times(result)
    assert row["task"] == "sample" and row["outcome"] == "reward 1.0" and row["agent"] == "oracle"
    assert row == dict(row, **agents.trial_times(result))  # the phases are agents.trial_times'
    assert row["overhead"] == pytest.approx(row["total"] - row["agent_execution"] - row["verifier"])
    assert row["overhead"] == pytest.approx(row["environment_setup"] + row["agent_setup"] + row["remainder"])
    assert 0 < row["remainder"] < row["total"]


def test_a_trial_without_an_end_has_no_overhead():
    result = load("big-vfs.json")
    result["finished_at"] = None
    row = trial_overhead.overhead_times(result)
    assert row["task"] == "big" and row["total"] is None
    assert row["overhead"] is None and row["remainder"] is None


def test_summary_is_the_median_per_task_and_driver():
    rows = [dict(trial_overhead.overhead_times(load(name)), driver=driver)
            for name, driver in (("sample-overlay2.json", "overlay2"), ("sample-overlay2.json", "vfs"),
                                 ("big-vfs.json", "vfs"))]
    slower = dict(rows[0], overhead=rows[0]["overhead"] + 10.0)
    summary = trial_overhead.summarize(rows + [slower, dict(slower, overhead=slower["overhead"] + 10.0)])
    assert sorted(summary) == ["big", "sample"] and sorted(summary["sample"]) == ["overlay2", "vfs"]
    overlay2 = summary["sample"]["overlay2"]
    assert overlay2["trials"] == 3 and overlay2["outcomes"] == ["reward 1.0"]
    assert overlay2["overhead"] == round(rows[0]["overhead"] + 10.0, 2)  # the median of x, x+10, x+20
    assert overlay2["overhead_max"] == round(rows[0]["overhead"] + 20.0, 2)
    assert summary["big"]["vfs"]["environment_setup"] == round(rows[2]["environment_setup"], 2)


def _section():
    rows = [dict(trial_overhead.overhead_times(load(name)), driver=driver)
            for name, driver in (("sample-overlay2.json", "overlay2"), ("sample-overlay2.json", "vfs"),
                                 ("big-vfs.json", "vfs"), ("big-vfs.json", "overlay2"))]
    probe = {key: 0.5 for key in trial_overhead.PROBES}
    engine = {"start_seconds": 3.0, "load_seconds": {"sample": 5.0, "big": 30.0}, "data_root_size": "1.2GB"}
    return {"image": "aisbench/agent-runtime:9.9.9", "rounds": 1, "big_mb": 64,
            "job_wall_seconds": {"vfs": [{"wall": 80.0, "outside_trials": 30.0}],
                                 "overlay2": [{"wall": 70.0, "outside_trials": 20.0}]},
            "big_layers": 4, "probe_repeat": 1, "wall_seconds": 300.0,
            "setup": {"big_build_seconds": 6.0, "big_image_size": "0.27 GB", "engines": {"vfs": engine, "overlay2": engine}},
            "summary": trial_overhead.summarize(rows), "trials": rows,
            "probes": {"vfs": {"sample": probe, "big": probe}, "overlay2": {"sample": probe, "big": probe}}}


def test_render_has_a_row_per_task_and_driver_and_the_findings():
    text = "\n".join(trial_overhead.render(_section(), "Measured now."))
    assert text.startswith("## Per-trial overhead")
    assert "two runtime containers (`aisbench/agent-runtime:9.9.9`," in text
    for task in ("sample", "big"):
        for driver in trial_overhead.DRIVERS:
            assert "| %s | %s | 1 |" % (task, driver) in text
    assert "| vfs | 3.0 s | 5.0 s | 30.0 s | 1.2GB |" in text
    assert "Where the seconds go (overlay2, sample task)" in text and "Measured now." in text
    assert "took 75.0 s wall time (median), 25.0 s of it outside" in text


def test_job_wall_keeps_what_the_trials_do_not_cover():
    rows = [trial_overhead.overhead_times(load(name)) for name in ("sample-overlay2.json", "big-vfs.json")]
    job = trial_overhead.job_wall(100.0, rows)
    assert job == {"wall": 100.0, "outside_trials": round(100.0 - rows[0]["total"] - rows[1]["total"], 1)}


def test_the_report_has_the_section_and_run_py_the_options():
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "bench" / "run.py")
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)
    snapshot = {"loadavg_1m": 12.5, "other_containers": 4}
    machine = {"cpus": 2, "cpu_model": "Test CPU", "memory_gib": 24.0, "os": "Debian", "kernel": "6.1.0",
               "docker": "20.10.24", "ansible": "ansible [core 2.19.14]", "python": "3.11.2"}
    section = dict(_section(), measured_at="2026-12-03 20:00 UTC", command="python bench/run.py --skip-fleet",
                   load=[snapshot, snapshot])
    text = run.render_markdown({"machine": machine, "trial_overhead": section})
    assert "## Per-trial overhead" in text and "1-min load average 12.5, 4 other containers" in text
    args = run.parse_args(["--skip-trial-overhead", "--overhead-rounds", "4", "--overhead-big-mb", "2048",
                           "--overhead-big-layers", "30"])
    assert args.skip_trial_overhead and (args.overhead_rounds, args.overhead_big_mb, args.overhead_big_layers) == (4, 2048, 30)
