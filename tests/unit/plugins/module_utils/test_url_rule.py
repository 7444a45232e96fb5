"""The one URL rule and the one Docker-endpoint rule (module_utils/_validation.py) and the test plugins roles use.
Its tests that start a process: tests/integration/plays/test_url_rule_play.py."""
import pytest

from ansible_collections.aisbench.agent_runtime.plugins.module_utils._validation import (
    docker_host_problem,
    http_url_problem,
    registry_host_problem,
    url_problem,
)
PIP_SCHEMES = ("http", "https", "file")

URLS = [
    # value, http(s) problem, problem as a pip index (http/https/file, credentials allowed)
    ("https://mirror.example", None, None),
    ("http://127.0.0.1:5000/", None, None),
    ("https://mirror.example/proxy/", None, None),
    ("https://[2001:db8::1]:8443/v2/", None, None),
    ("https://user:token@pypi.example/simple", "must not carry user:password@ credentials", None),
    ("file:///srv/wheels", "is not an http:// or https:// URL", None),
    ("file://wheels", "is not an http:// or https:// URL", "needs an absolute path (file:///...)"),
    ("mirror.example:5000", "is not an http:// or https:// URL", "is not an http://, https:// or file:// URL"),
    ("ftp://mirror.example", "is not an http:// or https:// URL", "is not an http://, https:// or file:// URL"),
    ("https://mirror.example:99999", "has a port outside 1-65535", "has a port outside 1-65535"),
    ("https://mirror.example:0", "has a port outside 1-65535", "has a port outside 1-65535"),
    ("https://mirror.example/?a=1", "must not have a query or fragment", "must not have a query or fragment"),
    ("https://pypi.example/simple#x", "must not have a query or fragment", "must not have a query or fragment"),
    ("https://mirror.example\n", "is not an http:// or https:// URL", "is not an http://, https:// or file:// URL"),
    ("https://mirror example", "is not an http:// or https:// URL", "is not an http://, https:// or file:// URL"),
    ("https://-mirror.example", "has no valid host", "has no valid host"),
    ("https://[not-v6]/", "has no valid host", "has no valid host"),
    ("https:///path", "has no valid host", "has no valid host"),
    ("https://@pypi.example/", "must not carry user:password@ credentials", "has malformed credentials"),
    ("", "is empty or not a string", "is empty or not a string"),
]


@pytest.mark.parametrize("value, http_problem, pip_problem", URLS)
def test_url_problem(value, http_problem, pip_problem):
    assert http_url_problem(value) == http_problem
    assert url_problem(value) == http_problem
    assert url_problem(value, PIP_SCHEMES, credentials=True) == pip_problem


def test_url_problem_refuses_non_strings():
    assert url_problem(None) == "is empty or not a string"
    assert url_problem(["https://mirror.example"]) == "is empty or not a string"


DOCKER_HOSTS = [
    ("unix:///var/run/docker.sock", None, None),
    ("tcp://10.0.0.5:2376", None, None),
    ("tcp://engine", None, None),
    ("tcp://[::1]:2375", None, None),
    ("ssh://root@gpu-01", None, "is not unix:///path or tcp://host[:port]"),
    ("ssh://gpu-01:2222", None, "is not unix:///path or tcp://host[:port]"),
    ("unix://relative.sock", "needs an absolute socket path (unix:///...)", "needs an absolute socket path (unix:///...)"),
    ("tcp://engine:2376/v1", "must be host[:port] without a path", "must be host[:port] without a path"),
    ("tcp://user@engine", "must not carry user@", "must not carry user@"),
    ("tcp://:2375", "has no valid host", "has no valid host"),
    ("tcp://engine:70000", "has a port outside 1-65535", "has a port outside 1-65535"),
    ("https://engine:2376", "is not unix:///path, tcp://host[:port] or ssh://[user@]host[:port]",
     "is not unix:///path or tcp://host[:port]"),
    ("unix:///var/run/docker.sock\n", "is not unix:///path, tcp://host[:port] or ssh://[user@]host[:port]",
     "is not unix:///path or tcp://host[:port]"),
]


@pytest.mark.parametrize("value, any_problem, local_problem", DOCKER_HOSTS)
def test_docker_host_problem(value, any_problem, local_problem):
    assert docker_host_problem(value) == any_problem
    assert docker_host_problem(value, ("unix", "tcp")) == local_problem


@pytest.mark.parametrize("value, problem", [
    ("registry.example:5000", None),
    ("10.0.0.1", None),
    ("https://registry.example", "is not host[:port] (no scheme, no path)"),
    ("registry.example:5000/team", "is not host[:port] (no scheme, no path)"),
    ("10.0.0.0/8", "is not host[:port] (no scheme, no path)"),
    ("registry.example:70000", "has a port outside 1-65535"),
])
def test_registry_host_problem(value, problem):
    assert registry_host_problem(value) == problem
