"""env_file: the one env-file rule (module_utils/_env_file.py), the env_file filter and the runtime container's
api_key.env, which the role renders through that filter.

Its tests that start a process: tests/integration/plays/test_env_file_play.py.
"""
from pathlib import Path

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.aisbench.agent_runtime.plugins.filter.env_file import FilterModule, env_file, env_file_bad_keys, env_file_names
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._env_file import (
    EnvFileError,
    checked_env_file,
    env_problems,
    render_env_file,
)

ROLE = Path(__file__).resolve().parents[4] / "roles/runtime_container"
ROUND_TRIP = {"OPENAI_API_KEY": "sk-it's a \\ back\\\\slash", "B": "plain", "C": " spaced # not a comment ",
              "D": "$HOME stays", "E": "", "F": 'dq"uote', "G": "=eq=", "H": "ünïcode", "I": 12345}


def api_key_task():
    tasks = yaml.safe_load((ROLE / "tasks/apply.yml").read_text())
    (task,) = [t for t in tasks if t.get("name") == "Write the API-key file from runtime_container_api_keys"]
    return task


def api_key_header():
    """The header the role writes and hashes (vars/main.yml: one definition for the write and its digest)."""
    return yaml.safe_load((ROLE / "vars/main.yml").read_text())["_runtime_container_api_key_header"]


def test_both_styles_and_their_refusals():
    env = {"OPENAI_API_KEY": "sk-a'b\\c ${X} #d", "EMPTY": ""}
    assert env_problems(env, "docker") == []
    assert render_env_file(env, "docker") == "EMPTY=\nOPENAI_API_KEY=sk-a'b\\c ${X} #d\n"
    assert env_problems(env, "dotenv") == ["env value of OPENAI_API_KEY contains '${', which Harbor's env-file loader would expand"]
    assert render_env_file({"K": "a'b\\c #d"}, "dotenv") == "K='a\\'b\\\\c #d'\n"
    assert env_problems({"BAD KEY": "x", "K": "a\nb"}, "docker") == [
        "env key 'BAD KEY' is not a valid variable name", "env value of K contains a line break or NUL"]
    assert render_env_file({}, "docker") == ""
    assert render_env_file({"N": None}, "dotenv") == "N=''\n"
    with pytest.raises(EnvFileError, match="style must be one of docker, dotenv, got 'ini'"):
        render_env_file({"K": "v"}, "ini")


def test_header_lines_are_comments():
    assert render_env_file({"B": "2", "A": "1"}, "dotenv", header=["one", "two"]) == "# one\n# two\nA='1'\nB='2'\n"
    assert render_env_file({}, "dotenv", header=["only"]) == "# only\n"
    with pytest.raises(EnvFileError, match="header lines may not contain a line break"):
        render_env_file({}, "dotenv", header=["one\nA=injected"])


def test_checked_env_file_names_keys_never_values():
    secret = "sk-secret\nEVIL=1"
    with pytest.raises(EnvFileError) as caught:
        checked_env_file({"OPENAI_API_KEY": secret, "2BAD": "x"}, "dotenv")
    assert str(caught.value) == "env key '2BAD' is not a valid variable name; env value of OPENAI_API_KEY contains a line break or NUL"
    assert "sk-secret" not in str(caught.value)
    with pytest.raises(EnvFileError, match="needs a mapping of names to values, got list"):
        checked_env_file(["K=v"], "dotenv")
    assert checked_env_file(None, "docker") == ""


@pytest.mark.parametrize("value, problem", [
    ("a\nb", "contains a line break or NUL"),
    ("a\rb", "contains a line break or NUL"),
    ("a\0b", "contains a line break or NUL"),
    ("pre${HOME}post", "contains '${'"),
])
def test_filter_refuses_what_cannot_be_written(value, problem):
    with pytest.raises(AnsibleFilterError, match=r"^env_file: env value of K " + problem.replace("$", r"\$")):
        env_file({"K": value})


def test_filter_quotes_dollar_and_backslash_for_dotenv_and_keeps_docker_literal():
    assert FilterModule().filters() == {"env_file": env_file, "env_file_bad_keys": env_file_bad_keys,
                                        "env_file_names": env_file_names}
    assert env_file({"K": "$HOME 'q' \"d\" \\"}) == "K='$HOME \\'q\\' \"d\" \\\\'\n"
    assert env_file({"K": "${X} 'q'"}, "docker") == "K=${X} 'q'\n"
    with pytest.raises(AnsibleFilterError, match="env key 'A-B' is not a valid variable name"):
        env_file({"A-B": "x"}, "docker")


def test_bad_keys_name_what_the_rule_refuses_and_never_a_value():
    env = {"OK": "x", "BAD KEY": "y", "K": "a${B}", "A": "l1\nl2", "2X": "z\n", "D": "$HOME"}
    assert env_file_bad_keys(env) == {"bad_names": ["2X", "BAD KEY"], "bad_values": ["A", "K"]}
    assert env_file_bad_keys(env, "docker") == {"bad_names": ["2X", "BAD KEY"], "bad_values": ["A"]}
    assert env_file_bad_keys({}) == env_file_bad_keys(None) == {"bad_names": [], "bad_values": []}
    with pytest.raises(AnsibleFilterError, match="needs a mapping of names to values, got str"):
        env_file_bad_keys("K=v")


def test_dotenv_round_trips_through_harbors_loader(tmp_path):
    """Harbor reads --env-file with python-dotenv: every value must come back unchanged."""
    dotenv = pytest.importorskip("dotenv", reason="python-dotenv (Harbor's env-file loader) is not installed")
    path = tmp_path / "env"
    path.write_text(env_file(ROUND_TRIP, "dotenv", header=["a comment"]), encoding="utf-8")
    assert dict(dotenv.dotenv_values(str(path))) == {key: str(value) for key, value in ROUND_TRIP.items()}


def test_runtime_container_renders_api_key_env_through_the_filter():
    task = api_key_task()
    assert "ansible.builtin.template" not in task
    assert task["ansible.builtin.copy"]["content"] == (
        "{{ runtime_container_api_keys | aisbench.agent_runtime.env_file('dotenv', header=_runtime_container_api_key_header) }}")
    assert task["ansible.builtin.copy"]["mode"] == "0600"
    assert task["no_log"] is True and task["diff"] is False
    assert not (ROLE / "templates/api_key.env.j2").exists()


def test_api_key_env_bytes_are_the_old_templates():
    """The bytes the role's former api_key.env.j2 wrote (checked against ansible.builtin.template when it moved)."""
    header = api_key_header()
    text = env_file({"Z_KEY": "z", "A_KEY": "it's \\ #"}, "dotenv", header=header)
    assert text == (
        "# Managed by Ansible (aisbench.agent_runtime.runtime_container); changes here are overwritten.\n"
        "# API keys for Harbor (harbor job start --env-file): dotenv format, single-quoted values.\n"
        "A_KEY='it\\'s \\\\ #'\n"
        "Z_KEY='z'\n")
    assert env_file({}, "dotenv", header=header).count("\n") == 2


def test_the_names_a_key_file_sets_and_never_its_values():
    # What the runtime_container role writes (the collection's own rule), then a hand-written file.
    text = render_env_file({"OPENAI_API_KEY": "sk-1=2", "ANTHROPIC_API_KEY": "a#b"}, "dotenv", header=["Managed"])
    assert env_file_names(text) == ["ANTHROPIC_API_KEY", "OPENAI_API_KEY"]
    assert env_file_names("# OPENAI_API_KEY=old\n\n  HF_TOKEN = 'x'\nnot a line\n") == ["HF_TOKEN"]
    assert env_file_names("") == [] and env_file_names(None) == []
