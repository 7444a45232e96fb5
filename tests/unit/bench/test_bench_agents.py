"""bench/agents.py reads Harbor's phase times from real trial results (recorded in tests/fixtures/harbor/agent_trials:
the real mini-swe-agent and Qwen Code on their baked toolchains, and a trial without its toolchain)."""

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))
import agents  # noqa: E402

FIXTURES = ROOT / "tests/fixtures/harbor/agent_trials"


def load(name):
    return json.loads((FIXTURES / name).read_text())


def test_phase_times_of_a_baked_trial():
    row = agents.trial_times(load("qwen-coder-baked.json"))
    assert row["agent"] == "qwen-coder" and row["outcome"] == "reward 1.0"
    assert 0 < row["agent_setup"] < row["total"]
    assert abs(sum(row[phase] for phase in agents.PHASES) - row["total"]) < row["total"]


def test_a_trial_that_failed_in_setup_has_no_execution_time():
    row = agents.trial_times(load("mini-swe-agent-missing-toolchain.json"))
    assert row["outcome"] == "BakedToolchainError"
    assert row["agent_execution"] is None and row["verifier"] is None and row["agent_setup"] is not None


def test_summary_is_the_median_per_agent(tmp_path):
    for index, name in enumerate(["mini-swe-agent-baked.json", "qwen-coder-baked.json", "mini-swe-agent-missing-toolchain.json"]):
        trial = tmp_path / ("trial-%d" % index)
        trial.mkdir()
        (trial / "result.json").write_text((FIXTURES / name).read_text())
    summary = agents.summarize(agents.job_trials(str(tmp_path)))
    assert sorted(summary) == ["mini-swe-agent", "qwen-coder"]
    assert summary["mini-swe-agent"]["trials"] == 2
    assert summary["mini-swe-agent"]["outcomes"] == ["BakedToolchainError", "reward 1.0"]
    assert summary["qwen-coder"]["agent_execution"] == round(agents.trial_times(load("qwen-coder-baked.json"))["agent_execution"], 1)
    assert os.path.isfile(FIXTURES / "mini-swe-agent-baked.json")
