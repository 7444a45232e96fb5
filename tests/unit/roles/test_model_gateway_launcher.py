"""The model gateway's launcher (roles/runtime_image/files/aisbench-model-gateway): what it writes and refuses.

The proxy itself is LiteLLM's and runs in the agents Molecule scenario (the canary hunt); here the launcher's own
rules: the config holds no secret, the key file is read as the runtime container writes it, a short token is refused.

Its tests that start a process: tests/integration/scripts/test_model_gateway_launcher_start.py.
"""
import importlib.machinery
import importlib.util
import io
import json
import sys
from pathlib import Path

import pytest
import yaml
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._env_file import render_env_file

ROOT = Path(__file__).resolve().parents[3]
LAUNCHER = ROOT / "roles/runtime_image/files/aisbench-model-gateway"


def key_file_text(keys):
    """api_key.env as the runtime_container role writes it: the collection's env-file rule (dotenv) with the header
    of the role's own task (roles/runtime_container/tasks/apply.yml, its header from vars/main.yml)."""
    tasks = yaml.safe_load((ROOT / "roles/runtime_container/tasks/apply.yml").read_text())
    task = next(task for task in tasks if task.get("name") == "Write the API-key file from runtime_container_api_keys")
    assert "env_file('dotenv', header=_runtime_container_api_key_header)" in task["ansible.builtin.copy"]["content"]
    header = yaml.safe_load((ROOT / "roles/runtime_container/vars/main.yml").read_text())["_runtime_container_api_key_header"]
    return render_env_file(keys, "dotenv", header=header)


@pytest.fixture
def gateway(tmp_path, monkeypatch):
    monkeypatch.setenv("AIS_BENCH_MODEL_GATEWAY_DIR", str(tmp_path / "state"))
    loader = importlib.machinery.SourceFileLoader("aisbench_model_gateway", str(LAUNCHER))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


def test_config_names_secrets_by_environment_only(gateway):
    config = json.loads(gateway.config_text("http://10.0.0.5:8000/v1", "openai"))
    params = config["model_list"][0]["litellm_params"]
    assert config["model_list"][0]["model_name"] == "*"
    assert params == {"model": "openai/*", "api_base": "http://10.0.0.5:8000/v1",
                      "api_key": "os.environ/AISBENCH_GATEWAY_UPSTREAM_KEY"}
    assert config["general_settings"]["master_key"] == "os.environ/AISBENCH_GATEWAY_TOKEN"


def test_reads_the_key_file_the_runtime_container_writes(gateway, tmp_path):
    key_file = tmp_path / "api_key.env"
    key_file.write_text(key_file_text({"OTHER": "x", "OPENAI_API_KEY": "a\\b'c \"d\" #e $f"}))
    assert key_file.read_text().startswith("# Managed by Ansible")
    assert gateway.read_env_file_value(str(key_file), "OPENAI_API_KEY") == "a\\b'c \"d\" #e $f"
    assert gateway.read_env_file_value(str(key_file), "OTHER") == "x"
    assert gateway.read_env_file_value(str(key_file), "MISSING") == ""


@pytest.mark.parametrize("token, keys, message", [
    ("short", {"OPENAI_API_KEY": "sk-1"}, "shorter than 16"),
    ("t" * 20, {"OTHER": "sk-1"}, "no OPENAI_API_KEY"),
])
def test_serve_refuses_a_short_token_or_a_missing_key(gateway, tmp_path, token, keys, message):
    (tmp_path / "token").write_text(token + "\n")
    (tmp_path / "api_key.env").write_text(key_file_text(keys))
    with pytest.raises(SystemExit) as exc:
        gateway.main(["serve", "--listen", "127.0.0.1", "--upstream", "http://127.0.0.1:1/v1",
                      "--key-file", str(tmp_path / "api_key.env"), "--token-file", str(tmp_path / "token")])
    assert message in str(exc.value)
    assert not (tmp_path / "state" / "pid").exists()


def test_usage_sums_the_requests_the_gateway_logged(gateway, tmp_path, capsys):
    state = tmp_path / "state"
    state.mkdir()
    (state / "usage.jsonl").write_text(
        json.dumps({"ok": True, "prompt_tokens": 20, "completion_tokens": 5, "cost": 0.5}) + "\n"
        + json.dumps({"ok": False, "prompt_tokens": 0, "completion_tokens": 0, "cost": 0}) + "\n")
    gateway.main(["usage"])
    assert json.loads(capsys.readouterr().out) == {"requests": 2, "failed_requests": 1, "prompt_tokens": 20,
                                                   "completion_tokens": 5, "cost_usd": 0.5}


def test_stop_without_a_gateway(gateway, capsys):
    gateway.main(["stop"])
    assert capsys.readouterr().out.strip() == "not running"


def test_wait_gives_up_when_no_gateway_starts(gateway, monkeypatch):
    clock = iter(range(0, 1000, 5))
    monkeypatch.setattr(gateway.time, "monotonic", lambda: next(clock))
    monkeypatch.setattr(gateway.time, "sleep", lambda seconds: None)
    with pytest.raises(SystemExit) as exc:
        gateway.main(["wait", "--timeout", "120", "--log", "/x/model-gateway.log"])
    assert str(exc.value) == ("the model gateway is not running; the end of its log /x/model-gateway.log: "
                              "(no log at /x/model-gateway.log)")


def start_args(tmp_path, night="night-2"):
    return ["start", "--night", night, "--listen", "127.0.0.1", "--upstream", "http://127.0.0.1:1/v1",
            "--key-file", str(tmp_path / "api_key.env"), "--log", str(tmp_path / "gateway.log"), "--stop-timeout", "10"]


def run_start(gateway, monkeypatch, tmp_path, token="t" * 48, night="night-2"):
    monkeypatch.setattr(sys, "stdin", io.StringIO(token + "\n"))
    gateway.main(start_args(tmp_path, night))


def test_start_names_the_keys_the_key_file_has_when_the_key_name_is_not_there(gateway, monkeypatch, tmp_path):
    (tmp_path / "api_key.env").write_text("# Managed by Ansible\nANTHROPIC_API_KEY='sk-x'\n")
    with pytest.raises(SystemExit) as exc:
        run_start(gateway, monkeypatch, tmp_path)
    assert str(exc.value) == "no OPENAI_API_KEY in %s (its keys: ANTHROPIC_API_KEY)" % (tmp_path / "api_key.env")
    assert not (tmp_path / "state" / "pid").exists()


def test_check_says_what_start_would_refuse_and_never_prints_a_value(gateway, tmp_path, capsys):
    key_file = tmp_path / "api_key.env"
    key_file.write_text("# Managed by Ansible\nANTHROPIC_API_KEY='sk-x'\n")
    with pytest.raises(SystemExit) as exc:
        gateway.main(["check", "--key-file", str(key_file)])
    assert str(exc.value) == "no OPENAI_API_KEY in %s (its keys: ANTHROPIC_API_KEY)" % key_file
    gateway.main(["check", "--key-file", str(key_file), "--key-name", "ANTHROPIC_API_KEY"])
    printed = capsys.readouterr().out
    assert json.loads(printed) == {"key_file": str(key_file), "key_name": "ANTHROPIC_API_KEY"}
    assert "sk-x" not in printed
    with pytest.raises(SystemExit) as exc:
        gateway.main(["check", "--key-file", str(tmp_path / "missing.env")])
    assert str(exc.value).startswith("cannot read the key file %s: " % (tmp_path / "missing.env"))
