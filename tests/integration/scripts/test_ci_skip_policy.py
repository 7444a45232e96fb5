"""The CI skip policy (tests/ci_skip_policy.py) for real: pytest runs a file with two skips, in and out of CI."""
import os
import subprocess
import sys

TESTS = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

SAMPLE = '''
import pytest

def test_runs():
    assert True

def test_needs_chromium():
    pytest.skip("no chromium here")

@pytest.mark.skipif(True, reason="no NVIDIA GPU on this machine")
def test_needs_a_gpu():
    pass
'''


def run_pytest(tmp_path, ci):
    (tmp_path / "test_sample.py").write_text(SAMPLE)
    env = {key: value for key, value in os.environ.items() if key != "CI"}
    if ci is not None:
        env["CI"] = ci
    env["PYTHONPATH"] = TESTS
    # Its own rootdir and no config file: only the policy plugin, not this suite's conftest files.
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "ci_skip_policy", "-c", os.devnull, "--rootdir",
                           str(tmp_path), "-q", "-p", "no:cacheprovider", str(tmp_path / "test_sample.py")],
                          capture_output=True, text=True, env=env, cwd=str(tmp_path), check=False)


def test_in_ci_a_skip_fails_unless_allowed_and_the_allow_list_is_printed(tmp_path):
    run = run_pytest(tmp_path, "true")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "CI=true: this test was skipped (no chromium here)" in run.stdout
    assert "1 passed" in run.stdout and "1 skipped" in run.stdout and "test_needs_chromium" in run.stdout
    assert "CI skip policy (CI=true): a skip fails unless on the allow-list: no NVIDIA GPU (" in run.stdout
    assert "allowed skips in this run: 1\n  test_sample.py::test_needs_a_gpu: no NVIDIA GPU on this machine" in run.stdout


def test_outside_ci_skips_stay_skips(tmp_path):
    for ci in (None, "", "false"):
        run = run_pytest(tmp_path, ci)
        assert run.returncode == 0, run.stdout + run.stderr
        assert "1 passed, 2 skipped" in run.stdout
        assert "CI skip policy not enforced (CI is not true): 2 skipped" in run.stdout
