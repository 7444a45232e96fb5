"""bench/run.py: PLAY RECAP parsing and the Markdown report built from results.json.
Its pure tests: tests/unit/bench/test_bench_report.py."""
from test_bench_report import harbor_summary  # harbor_summary is a fixture  # noqa: F401  # pylint: disable=unused-import


def test_harbor_benchmark_cross_checks_every_summary(harbor_summary, tmp_path):
    rows = harbor_summary.run_benchmark([40], repeat=1, workdir=str(tmp_path))
    assert [row["finished"] for row in rows] == [True, False]
    for row in rows:
        for impl in ("module_utils", "details", "seed"):
            assert row[impl + "_seconds"] > 0 and row[impl + "_peak_bytes"] > 0
        assert row["module_utils_vs_seed"] == row["module_utils_seconds"] / row["seed_seconds"]
