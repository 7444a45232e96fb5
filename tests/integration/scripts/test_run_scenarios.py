"""tests/run_scenarios.py: lanes take scenarios in queue order, logs are printed whole, failures are reported."""

import os
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
SCRIPT = os.path.join(ROOT, "tests", "run_scenarios.py")
# Per scenario: two lines a second apart, failing for the scenario named `broken`.
COMMAND = "sh -c 'echo \"line 1 of $0\"; sleep 1; echo \"line 2 of $0\"; [ \"$0\" != broken ]' {}"


def run(tmp_path, lanes, *scenarios):
    return subprocess.run([sys.executable, SCRIPT, "--lanes", str(lanes), "--log-dir", str(tmp_path / "logs"),
                           "--command", COMMAND] + list(scenarios), capture_output=True, text=True, timeout=60, check=False)


def test_two_lanes_run_everything_and_name_the_failure(tmp_path):
    proc = run(tmp_path, 2, "one", "broken", "three")
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    # Each scenario's log is printed whole, its two lines together, right before its verdict.
    for scenario in ("one", "broken", "three"):
        first = lines.index("line 1 of %s" % scenario)
        assert lines[first + 1] == "line 2 of %s" % scenario
        assert lines[first + 2].startswith("=== scenario %s " % scenario)
    assert any(line.startswith("=== scenario broken FAILED after") for line in lines)
    assert lines[-1] == "=== failed scenarios: broken"
    assert sorted(os.listdir(tmp_path / "logs")) == ["broken.log", "one.log", "three.log"]


def test_all_passing_exits_zero(tmp_path):
    proc = run(tmp_path, 3, "one", "two")
    assert proc.returncode == 0, proc.stdout
    assert "=== scenario one passed in" in proc.stdout and "=== scenario two passed in" in proc.stdout
