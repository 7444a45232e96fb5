"""Checks that once let a trailing line break through: Python's ``$`` also matches before a final newline."""

import pytest

from ansible.errors import AnsibleFilterError
from ansible_collections.aisbench.agent_runtime.plugins.filter.deb_files import _DEB_NAME
from ansible_collections.aisbench.agent_runtime.plugins.filter.docker_daemon import docker_daemon_config
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._env_file import env_problems
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._harbor_runner import job_name_problem
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._validation import http_url_problem, registry_problem
from ansible_collections.aisbench.agent_runtime.plugins.modules.harbor_job_summary import TIMESTAMP_PATTERN


@pytest.mark.parametrize("good", ["nightly", "nightly-2026-12-02"])
def test_job_names(good):
    assert job_name_problem(good) is None
    assert job_name_problem(good + "\n") is not None


def test_env_keys():
    assert env_problems({"OPENAI_API_KEY": "x"}, "docker") == []
    assert env_problems({"OPENAI_API_KEY\n": "x"}, "docker") == ["env key 'OPENAI_API_KEY\\n' is not a valid variable name"]


@pytest.mark.parametrize("url", ["https://mirror.example:5000", "http://10.0.0.1/v2/"])
def test_urls(url):
    assert http_url_problem(url) is None
    assert http_url_problem(url + "\n") == "is not an http:// or https:// URL"


def test_registries():
    assert registry_problem("mirror.example:5000") is None
    assert registry_problem("mirror.example:5000\n") == "is not host[:port] (no scheme, no path)"


def test_daemon_config_refuses_a_mirror_and_a_log_size_with_a_line_break():
    assert docker_daemon_config({"registry_mirrors": ["https://mirror.example"]})["registry-mirrors"] == ["https://mirror.example"]
    with pytest.raises(AnsibleFilterError, match="docker_engine_registry_mirrors: 'https://mirror.example\\\\n' is not"):
        docker_daemon_config({"registry_mirrors": ["https://mirror.example\n"]})
    with pytest.raises(AnsibleFilterError, match="docker_engine_log_max_size"):
        docker_daemon_config({"log_driver": "json-file", "log_max_size": "10m\n"})


def test_deb_names_and_timestamps():
    assert _DEB_NAME.match("docker.io_26.1.5+dfsg1-9+b9_amd64.deb")
    assert not _DEB_NAME.match("docker.io_26.1.5+dfsg1-9+b9_amd64.deb\n")
    assert TIMESTAMP_PATTERN.match("20261202-060000")
    assert not TIMESTAMP_PATTERN.match("20261202-060000\n")
