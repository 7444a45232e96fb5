"""bench/run.py: PLAY RECAP parsing and the Markdown report built from results.json.
Its tests that start a process: tests/integration/scripts/test_bench_report_harbor_summary.py."""
import importlib.util
import os

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_run", os.path.join(ROOT, "bench", "run.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RECAP_OUTPUT = """
TASK [aisbench.agent_runtime.docker_engine : Template daemon.json] *************
ok: [aisbench-bench-fleet-01]

PLAY RECAP *********************************************************************
aisbench-bench-fleet-01    : ok=41   changed=0    unreachable=0    failed=0    skipped=17   rescued=0    ignored=0
aisbench-bench-fleet-02    : ok=40   changed=2    unreachable=0    failed=1    skipped=17   rescued=0    ignored=0
"""


def test_parse_recap_reads_every_host(bench):
    hosts = bench.parse_recap(RECAP_OUTPUT)
    assert hosts == {
        "aisbench-bench-fleet-01": {"ok": 41, "changed": 0, "unreachable": 0, "failed": 0, "skipped": 17},
        "aisbench-bench-fleet-02": {"ok": 40, "changed": 2, "unreachable": 0, "failed": 1, "skipped": 17},
    }


def test_parse_recap_ignores_lines_before_the_recap(bench):
    assert bench.parse_recap("ok: [host] => ok=1 changed=0 unreachable=0 failed=0 skipped=0\n") == {}


def _run(seconds, changed=0, hosts=1, load=1.5):
    snapshot = {"loadavg_1m": load, "other_containers": 3}
    return {"seconds": seconds, "changed": changed, "hosts": hosts, "load_before": snapshot, "load_after": snapshot,
            "slowest_tasks": [{"task": "docker_engine : Template daemon.json", "seconds": seconds / 4}],
            "role_seconds": {"docker_engine": seconds / 4, "play (facts, set-up)": 1.0}}


def _results():
    return {
        "machine": {"cpus": 2, "cpu_model": "Test CPU", "memory_gib": 24.0, "os": "Debian GNU/Linux 12 (bookworm)",
                    "kernel": "6.1.0", "docker": "20.10.24", "ansible": "ansible [core 2.19.14]", "python": "3.11.2"},
        "single": {"ssh": {"first": _run(300.0, changed=40), "reruns": [_run(24.0), _run(20.0)],
                           "facts": [_run(5.0), _run(4.0)], "rerun_seconds": 20.0, "facts_seconds": 4.0, "ratio": 5.0,
                           "changed": 0, "tags": "", "skip_tags": "", "connection": "ssh",
                           "subset": {"reruns": [_run(9.0), _run(8.0)], "facts": [_run(5.0), _run(4.0)],
                                      "rerun_seconds": 8.0, "facts_seconds": 4.0, "ratio": 2.0, "changed": 0,
                                      "args": ["--skip-tags", "runtime_container,baked_images"]},
                           "no_pipelining": {"reruns": [_run(30.0)], "facts": [_run(6.0)], "rerun_seconds": 30.0,
                                             "facts_seconds": 6.0, "ratio": 5.0, "changed": 0},
                           "measured_at": "2026-12-03 00:30 UTC", "command": "python bench/run.py --skip-fleet"},
                   "docker": {"first": _run(200.0, changed=40), "reruns": [_run(12.0)], "facts": [_run(3.0)],
                              "rerun_seconds": 12.0, "facts_seconds": 3.0, "ratio": 4.0, "changed": 0, "tags": "",
                              "skip_tags": "", "connection": "docker",
                              "measured_at": "2026-12-03 00:40 UTC", "command": "python bench/run.py --skip-fleet"}},
        "fleet": {"first": _run(200.0, changed=300, hosts=10), "tags": "preflight,host", "forks": 10, "connection": "ssh",
                  "measured_at": "2026-12-03 01:00 UTC", "command": "python bench/run.py --hosts 1,10",
                  "rows": [
                      {"hosts": 1, "reruns": [_run(10.0)], "facts": [_run(2.0)], "rerun_seconds": 10.0,
                       "facts_seconds": 2.0, "ratio": 5.0, "changed": 0, "per_host_seconds": 10.0},
                      {"hosts": 10, "reruns": [dict(_run(40.0, hosts=10, load=6.0), tasks_ok=150, tasks_skipped=50,
                                                    cpu_seconds={"controller": 10.0, "targets": 20.0})],
                       "facts": [_run(8.0, hosts=10)],
                       "rerun_seconds": 40.0, "facts_seconds": 8.0, "ratio": 5.0, "changed": 0,
                       "per_host_seconds": 4.0}]},
        "harbor": [{"trials": 1000, "finished": True, "module_utils_seconds": 0.0008, "seed_seconds": 0.0004,
                    "details_seconds": 0.06, "module_utils_peak_bytes": 2**20, "seed_peak_bytes": 2**19,
                    "details_peak_bytes": 2**21, "module_utils_vs_seed": 2.0, "playbook_ping_seconds": 1.0,
                    "playbook_module_utils_seconds": 1.1, "playbook_details_seconds": 1.2}],
        "harbor_repeat": 3, "harbor_measured_at": "2026-12-03 00:10 UTC", "harbor_command": "python bench/run.py",
    }


def test_render_markdown_tables_come_from_the_results(bench):
    text = bench.render_markdown(_results())
    assert "2 cores (Test CPU), 24.0 GiB RAM, Debian GNU/Linux 12 (bookworm)" in text
    assert "Docker 20.10.24 host engine" in text
    assert "| SSH + sudo | first run (provisioning) | 300.0 s | 40 | 75.0x |" in text
    assert "| SSH + sudo | idempotent rerun, whole site.yml | 20.0 s | 0 | **5.0x** |" in text
    # The subset earlier benchmarks measured, next to the whole play and against the same facts plays.
    assert "| SSH + sudo | idempotent rerun, subset (`--skip-tags runtime_container,baked_images`) | 8.0 s | 0 | 2.0x |" in text
    assert "| SSH + sudo, pipelining off | idempotent rerun | 30.0 s | 0 | 5.0x |" in text
    assert "| docker exec + sudo | idempotent rerun, whole site.yml | 12.0 s | 0 | **4.0x** |" in text
    assert "subset (`" not in text.split("| docker exec + sudo | first run")[1].split("\n\n")[0]
    assert "SSH + sudo: whole reruns 24.0 s, 20.0 s (changed: 0, 0); subset reruns 9.0 s, 8.0 s (changed: 0, 0;" in text
    assert "| role | SSH + sudo | docker exec + sudo |\n|---|---:|---:|\n| docker_engine | 5.0 s | 3.0 s |" in text
    assert "site.yml without a tag filter on a fresh target per connection, as users run it: every role." in text
    assert "## Fleet scaling (site.yml rerun on 1, 10 targets, SSH + sudo)" in text
    # 10 CPU seconds over 200 task runs (150 ok + 50 skipped across the 10 hosts).
    assert "| 10 | 40.0 s | 4.00x | 4.0 s | 0 | 8.0 s | 5.0x | 10.0 s | 0.050 s | 20.0 s |" in text
    assert "1-min load average 1.5–6.0, 3 other containers running" in text
    assert "| 1000 | finished | 0.4 ms | 0.8 ms | 2.0x | 60.0 ms | 0.50 MiB | 1.00 MiB | 2.00 MiB |" in text
    assert "| 1000 | finished | 1.00 s | 1.10 s | 1.20 s |" in text
    assert "Measured 2026-12-03 01:00 UTC with `python bench/run.py --hosts 1,10`." in text


def test_render_markdown_leaves_out_parts_never_measured(bench):
    results = _results()
    del results["fleet"], results["harbor"]
    text = bench.render_markdown(results)
    assert "## Idempotent rerun" in text
    assert "Fleet scaling" not in text
    assert "## harbor_job_info" not in text


def test_parse_args_sorts_fleet_sizes(bench):
    args = bench.parse_args(["--hosts", "10,1,5,5", "--harbor-sizes", "1000"])
    assert args.hosts == [1, 5, 10]
    assert args.connections == ["ssh", "docker"]
    assert args.harbor_sizes == [1000]
    assert args.skip_tags == "" and args.subset_skip_tags == "runtime_container,baked_images"


def test_render_markdown_names_the_slowest_tasks(bench):
    text = bench.render_markdown(_results())
    assert "Slowest tasks of the best rerun, SSH + sudo (profile_tasks): docker_engine : Template daemon.json 5.0 s." in text
    assert "Slowest tasks of the 10-target rerun" in text


PROFILE_OUTPUT = """
PLAY RECAP *********************************************************************
aisbench-bench-single      : ok=50   changed=0    unreachable=0    failed=0    skipped=30   rescued=0    ignored=0

Thursday 03 December 2026  00:27:30 +0000 (0:00:00.120)       0:00:20.655 *****
===============================================================================
aisbench.agent_runtime.runtime_image : Load the image from the archive (validated first)  1234.56s
aisbench.agent_runtime.docker_engine : Install the offline packages (validated first) - 104.20s
aisbench.agent_runtime.docker_engine : Template daemon.json -- 15.76s
aisbench.agent_runtime.preflight : Run the preflight checks ------------- 3.21s
Gathering Facts --------------------------------------------------------- 1.52s
aisbench.agent_runtime.docker_engine : Wait for the engine to answer ---- 0.98s
"""


def test_parse_profile_keeps_the_order_and_the_limit(bench):
    assert bench.parse_profile(PROFILE_OUTPUT, limit=5) == [
        # a long name leaves no dash before a four-digit time, one before three digits, two before two
        {"task": "aisbench.agent_runtime.runtime_image : Load the image from the archive (validated first)",
         "seconds": 1234.56},
        {"task": "aisbench.agent_runtime.docker_engine : Install the offline packages (validated first)", "seconds": 104.2},
        {"task": "aisbench.agent_runtime.docker_engine : Template daemon.json", "seconds": 15.76},
        {"task": "aisbench.agent_runtime.preflight : Run the preflight checks", "seconds": 3.21},
        {"task": "Gathering Facts", "seconds": 1.52},
    ]


def test_role_seconds_sums_the_tasks_of_each_role(bench):
    assert bench.role_seconds(bench.parse_profile(PROFILE_OUTPUT, limit=None)) == {
        "runtime_image": 1234.56, "docker_engine": 120.94, "preflight": 3.21, "play (facts, set-up)": 1.52}


def test_parse_args_refuses_an_unknown_connection(bench):
    with pytest.raises(SystemExit):
        bench.parse_args(["--connections", "ssh,telnet"])


def test_parse_profile_reads_only_the_summary(bench):
    # A task's own output before the summary can end like a profile line.
    assert bench.parse_profile("ok: [host] => msg: took -- 12.00s\n") == []


@pytest.fixture(scope="module")
def harbor_summary():
    spec = importlib.util.spec_from_file_location("bench_harbor_summary", os.path.join(ROOT, "bench", "harbor_summary.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("job", ["pass-fail", "two-agents", "errored"])
def test_seed_summary_counts_what_harbor_job_info_counts_on_real_jobs(harbor_summary, job):
    from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _harbor_results as harbor_results

    job_dir = os.path.join(ROOT, "tests", "fixtures", "harbor", "jobs", job)
    ours = {"|".join(map(str, (ev["benchmark"], ev["agent"], ev["model"]))): (ev["n_completed"], ev["n_pass"], ev["exceptions"])
            for ev in harbor_results.summarize_job(job_dir)["evals"]}
    seed = {key: (row["n"], row["pass"], row["errors"]) for key, row in harbor_summary.seed_summary(job_dir)["rows"].items()}
    assert seed == ours
    assert sum(row[0] for row in seed.values()) > 0


def test_the_toolchains_part_renders_pulled_against_baked(bench):
    def run(seconds, baked):
        return {"seconds": seconds, "baked_images_seconds": baked, "slowest_tasks": [],
                "load_before": None, "load_after": None, "command": "ansible-playbook x"}
    section = {"agent": "mini-swe-agent", "pull_vs_bake": 0.62,
               "runs": {"build": run(240.0, 200.0), "pull": run(200.0, 30.0), "bake": run(320.0, 150.0)},
               "measured_at": "2026-12-05T05:00:00Z", "command": "python bench/run.py"}
    text = bench.render_markdown(dict(_results(), toolchains=section))
    assert "## Toolchains once per fleet: first provisioning, toolchain pulled vs baked" in text
    assert "| `site.yml`, toolchain pulled (`baked_images_agent_source: pull`) | fresh fleet host | 200 s | 30 s |" in text
    assert "First provisioning with the toolchain pulled: 0.62x the time of baking it." in text


def test_shard_rows_without_a_scored_trial_render(bench):
    """Harbor 0.26 scores no trial of a benchmark whose trials all errored: pass@1 is None, and the section renders."""
    row = {"targets": 1, "jobs": [{"job": "nightly-1", "units": 2}], "wall_seconds": 50.0, "units": 2, "missing": 0,
           "rows": {"broken/oracle/-": {"pass_at_1": None}, "hello/oracle/-": {"pass_at_1": 0.5}}}
    text = "\n".join(bench.shard_bench.render({"attempts": 1, "rows": [row], "merged_equal": True}, "Measured."))
    assert "broken/oracle/- n/a (none scored), hello/oracle/- 0.500" in text
