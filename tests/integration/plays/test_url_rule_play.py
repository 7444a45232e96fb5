"""The one URL rule and the one Docker-endpoint rule (module_utils/_validation.py) and the test plugins roles use.
Its pure tests: tests/unit/plugins/module_utils/test_url_rule.py."""
import json
import os
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))

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


def test_test_plugins_give_the_same_answers_in_a_real_play(tmp_path):
    """Roles' asserts call the test plugins by their FQCN: run them through ansible itself and compare."""
    values = {"urls": [row[0] for row in URLS if row[0]], "hosts": [row[0] for row in DOCKER_HOSTS]}
    (tmp_path / "values.json").write_text(json.dumps(values))
    expression = (
        "{{ {'http': urls | select('aisbench.agent_runtime.url') | list,"
        " 'pip': urls | select('aisbench.agent_runtime.url', schemes=['http', 'https', 'file'], credentials=true) | list,"
        " 'any': hosts | select('aisbench.agent_runtime.docker_host') | list,"
        " 'local': hosts | select('aisbench.agent_runtime.docker_host', schemes=['unix', 'tcp']) | list} | to_json }}"
    )
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".cache", "collections"),
               ANSIBLE_STDOUT_CALLBACK="json", ANSIBLE_LOAD_CALLBACK_PLUGINS="1", ANSIBLE_HOME=str(tmp_path / "home"))
    ansible = os.path.join(os.path.dirname(sys.executable), "ansible")
    run = subprocess.run(
        [ansible, "localhost", "-c", "local", "-i", "localhost,", "-m", "ansible.builtin.debug",
         "-a", "msg=" + json.dumps(expression), "-e", "@" + str(tmp_path / "values.json")],
        env=env, capture_output=True, text=True, check=True, timeout=120)
    answer = json.loads(run.stdout)["plays"][0]["tasks"][0]["hosts"]["localhost"]["msg"]
    answer = json.loads(answer) if isinstance(answer, str) else answer
    assert answer["http"] == [row[0] for row in URLS if row[0] and row[1] is None]
    assert answer["pip"] == [row[0] for row in URLS if row[0] and row[2] is None]
    assert answer["any"] == [row[0] for row in DOCKER_HOSTS if row[1] is None]
    assert answer["local"] == [row[0] for row in DOCKER_HOSTS if row[2] is None]
