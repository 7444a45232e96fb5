"""The model gateway's launcher (roles/runtime_image/files/aisbench-model-gateway): what it writes and refuses.

The proxy itself is LiteLLM's and runs in the agents Molecule scenario (the canary hunt); here the launcher's own
rules: the config holds no secret, the key file is read as the runtime container writes it, a short token is refused.

Its pure tests: tests/unit/roles/test_model_gateway_launcher.py.
"""
import json
import subprocess
import time

import pytest

from test_model_gateway_launcher import gateway, run_start  # gateway is a fixture  # noqa: F401  # pylint: disable=unused-import


@pytest.fixture
def running(gateway, tmp_path):
    """A gateway of night-1 as the state directory records it (a live process standing in for the proxy)."""
    process = subprocess.Popen(["sleep", "60"])
    state = tmp_path / "state"
    state.mkdir()
    (state / "pid").write_text("%d\n" % process.pid)
    (state / "gateway.json").write_text(json.dumps({"night": "night-1", "instance": "abc", "started": time.time()}))
    yield process
    process.kill()
    process.wait()


def test_start_refuses_while_another_nights_gateway_is_in_use(gateway, monkeypatch, tmp_path, running, capsys):
    (tmp_path / "api_key.env").write_text("OPENAI_API_KEY='sk-x'\n")
    with pytest.raises(SystemExit) as exc:
        run_start(gateway, monkeypatch, tmp_path)
    assert str(exc.value).startswith("the model gateway of night night-1 (pid %d, started 0 s ago) is in use by a Harbor "
                                     "job in this container" % running.pid)
    assert running.poll() is None  # left alone, with its token
    # The night that was refused stops nothing at its end: its stop names no gateway of its own.
    gateway.main(["stop", "--instance", "another"])
    assert capsys.readouterr().out.strip() == "not running (the gateway of night night-1 runs: left alone)"
    assert running.poll() is None


def test_start_replaces_an_unused_gateway_and_reports_why_its_own_did_not_start(gateway, monkeypatch, tmp_path, running):
    # Started long ago and no Harbor job runs here (this test's machine has none): a leftover, stopped. The new gateway
    # cannot start here (no LiteLLM in the test's Python): the reason comes from its log, not "unknown error".
    (tmp_path / "state" / "gateway.json").write_text(json.dumps({"night": "night-1", "instance": "abc", "started": 0}))
    (tmp_path / "api_key.env").write_text("OPENAI_API_KEY='sk-x'\n")
    # Harbor jobs of other tests may run on this machine (its /proc shows every container's processes).
    monkeypatch.setattr(gateway, "harbor_jobs_running", lambda: False)
    with pytest.raises(SystemExit) as exc:
        run_start(gateway, monkeypatch, tmp_path)
    running.wait(timeout=10)
    assert str(exc.value).startswith("the model gateway exited at its start (rc=1): ")
    assert "ModuleNotFoundError: No module named 'litellm'" in str(exc.value)
    assert "t" * 48 not in (tmp_path / "gateway.log").read_text()
