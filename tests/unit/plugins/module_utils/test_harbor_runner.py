"""harbor_runner: names, matrix filtering, commands, process matching, module files.
Its tests that start a process: tests/integration/scripts/test_harbor_runner_processes.py."""
import json
import os
import stat

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".."))
from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _harbor_runner as hrun  # noqa: E402

FIXTURES = os.path.join(ROOT, "tests", "fixtures", "harbor")
MATRIX = os.path.join(FIXTURES, "matrices", "errored.yaml")


@pytest.mark.parametrize("name", ["nightly-20261202-060000", "a", "job_1.2", "A-b_c.d", "0", "x" * 128])
def test_safe_job_names(name):
    assert hrun.job_name_problem(name) is None


@pytest.mark.parametrize("name,why", [
    ("", "empty"),
    ("../etc", ".."),
    ("a..b", ".."),
    ("a/b", "one token"),
    ("with space", "one token"),
    ("-rf", "one token"),
    (".hidden", "one token"),
    ("tab\tname", "one token"),
    ("new\nline", "one token"),
    ("x" * 129, "longer than 128"),
    ("semi;colon", "one token"),
    ("ünïcode", "one token"),
    (None, "empty"),
])
def test_unsafe_job_names(name, why):
    assert why in hrun.job_name_problem(name)


def test_default_job_name():
    assert hrun.default_job_name("nightly", now=0) == "nightly-19700101-000000"
    assert hrun.job_name_problem(hrun.default_job_name("job")) is None


def test_filter_matrix_on_a_real_matrix():
    with open(MATRIX) as handle:
        config = hrun.parse_config_text(handle.read(), MATRIX)
    original = json.dumps(config, sort_keys=True)
    filtered = hrun.filter_matrix(config, datasets=["hello"])
    assert [d["path"].rsplit("/", 1)[-1] for d in filtered["datasets"]] == ["hello"]
    assert filtered["datasets"][0]["task_names"] == ["hello-pass"]
    assert json.dumps(config, sort_keys=True) == original  # the input is not modified
    assert len(hrun.filter_matrix(config, datasets=["tasks/"])["datasets"]) == 2  # substring


def test_filter_matrix_agents_exact_match_and_default_oracle():
    config = {"agents": [{"name": "oracle"}, {"name": "nop"}, {"name": "openhands", "model_name": "m"}],
              "datasets": [{"name": "terminal-bench", "version": "2.0"}]}
    assert hrun.filter_matrix(config, agents=["nop"])["agents"] == [{"name": "nop"}]
    with pytest.raises(hrun.HarborJobError, match="no agent matches the agents filter \\['open'\\]"):
        hrun.filter_matrix(config, agents=["open"])  # exact, not substring
    assert hrun.filter_matrix(config, datasets=["terminal"])["datasets"] == config["datasets"]  # by name
    # No agents key: Harbor runs its oracle agent.
    assert hrun.filter_matrix({"datasets": config["datasets"]}, agents=["oracle"])["agents"] == [{"name": "oracle"}]


def test_filter_matrix_errors():
    with pytest.raises(hrun.HarborJobError, match="no dataset matches the datasets filter \\['nope'\\]; the config has: /a/hello"):
        hrun.filter_matrix({"datasets": [{"path": "/a/hello"}]}, datasets=["nope"])
    with pytest.raises(hrun.HarborJobError, match="needs a config with a 'datasets' list"):
        hrun.filter_matrix({"tasks": [{"path": "/a/t"}]}, datasets=["t"])
    with pytest.raises(hrun.HarborJobError, match="must be a mapping"):
        hrun.filter_matrix(["not", "a", "dict"])


def test_parse_config_text_json_and_yaml():
    assert hrun.parse_config_text('{"agents": [{"name": "nop"}]}', "x.json") == {"agents": [{"name": "nop"}]}
    with open(os.path.join(FIXTURES, "matrices", "two-agents.yaml")) as handle:
        assert hrun.parse_config_text(handle.read(), "two-agents.yaml")["agents"] == [{"name": "oracle"}, {"name": "nop"}]
    with pytest.raises(hrun.HarborJobError, match="cannot parse"):
        hrun.parse_config_text("agents: [unclosed", "bad.yaml")


def test_cli_spelling_from_real_help_output():
    with open(os.path.join(FIXTURES, "cli", "harbor-0.25.0-help.txt")) as handle:
        assert hrun.parse_cli_spelling(handle.read()) == "job"


def test_cli_spelling_of_older_releases():
    # Harbor 0.1.x registered its group as "jobs" ("Manage jobs.") next to "run".
    old = "\n".join([
        "│ adapters   Manage adapters.                                │",
        "│ tasks      Manage tasks.                                   │",
        "│ jobs       Manage jobs.                                    │",
        "│ run        Start a job. Alias for `harbor jobs start`.     │",
    ])
    assert hrun.parse_cli_spelling(old) == "jobs"
    assert hrun.parse_cli_spelling("Usage: something else") is None


@pytest.mark.parametrize("version", ["0.25.0", "0.26.0"])
def test_the_probe_of_a_real_harbor_is_read_and_its_release_supported(version):
    # Recorded from the runtime image: docker run ... sh -c HARBOR_PROBE_SHELL sh harbor HARBOR_PROBE.
    with open(os.path.join(FIXTURES, "cli", "harbor-%s-probe.json" % version)) as handle:
        facts = hrun.parse_harbor_probe("some warning on stdout\n" + handle.read())
    assert facts["version"] == version and hrun.harbor_version_problem(version) is None
    assert {"oracle", "nop", "mini-swe-agent", "qwen-coder", "aider", "openhands"} <= set(facts["agents"])
    assert hrun.SUPPORTED_HARBOR_VERSIONS[version] == "job"


@pytest.mark.parametrize("output", ["", "0.26.0", '{"version": "0.26.0"}', "Traceback (most recent call last):"])
def test_output_that_is_not_a_probe_is_not_read(output):
    assert hrun.parse_harbor_probe(output) is None


def test_an_unsupported_release_is_refused_naming_the_supported_ones():
    assert hrun.harbor_version_problem("0.27.0") == (
        "Harbor 0.27.0 is not supported by this collection (supported: 0.25.0, 0.26.0); build the runtime image with "
        "runtime_image_harbor_version set to one of them")
    assert "0.1.5 is not supported" in hrun.harbor_version_problem("0.1.5")


def test_start_and_resume_commands():
    argv = hrun.start_command("harbor", "job", "/m.yaml", "n1", "/opt/swebench/jobs", concurrency=4,
                              env_file="/opt/swebench/jobs/.harbor_job/n1/env", extra_args=["-r", 2])
    assert argv == ["harbor", "job", "start", "-c", "/m.yaml", "--job-name", "n1", "-o", "/opt/swebench/jobs", "-y", "-q",
                    "-n", "4", "--env-file", "/opt/swebench/jobs/.harbor_job/n1/env", "-r", "2"]
    assert hrun.resume_command("harbor", "jobs", "/j/n1") == ["harbor", "jobs", "resume", "-p", "/j/n1", "-f", "CancelledError"]
    assert hrun.resume_command("h", "job", "/j/n1", ["AgentTimeoutError", "CancelledError"]) == [
        "h", "job", "resume", "-p", "/j/n1", "-f", "CancelledError", "-f", "AgentTimeoutError"]


REAL_START = ["/opt/harbor/bin/python3", "/opt/harbor/bin/harbor", "job", "start", "-c", "/opt/swebench/jobs/.harbor_job/n1/matrix.json",
              "--job-name", "n1", "-o", "/opt/swebench/jobs", "-y", "-q"]


@pytest.mark.parametrize("args,expected", [
    (REAL_START, True),
    (["harbor", "jobs", "start", "--job-name=n1", "--jobs-dir=/opt/swebench/jobs/"], True),
    (["/opt/harbor/bin/python3", "/opt/harbor/bin/harbor", "job", "resume", "-p", "/opt/swebench/jobs/n1", "-f", "CancelledError"], True),
    (REAL_START[:7] + ["n10"] + REAL_START[8:], False),  # another job
    (REAL_START[:9] + ["/elsewhere"] + REAL_START[10:], False),  # another jobs directory
    (["sh", "-c", hrun.DETACH_SCRIPT, "harbor_job", "/p", "/l"] + REAL_START[1:], False),  # the wrapper before exec
    (["harbor", "job", "resume", "-p", "/opt/swebench/jobs/n2"], False),
    (["python3", "-m", "pytest", "n1"], False),
    (["harbor"], False),
])
def test_harbor_process_matching(args, expected):
    assert hrun.is_harbor_job_process(args, "n1", "/opt/swebench/jobs", "/opt/swebench/jobs/n1") is expected


def test_compose_project_prefix_matches_harbor():
    # Observed on a real interrupted run: trial sleepy__UkanMRN left project sleepy__ukanmrn__env.
    assert "sleepy__ukanmrn__env".startswith(hrun.compose_project_prefix("sleepy__UkanMRN"))
    assert hrun.compose_project_prefix(".odd name") == "0-odd-name__"
    projects = ["sleepy__ukanmrn__env", "sleepy__ukanmrn__verifier", "sleepy__other__env", "unrelated"]
    assert hrun.leftover_projects(projects, ["sleepy__UkanMRN"]) == ["sleepy__ukanmrn__env", "sleepy__ukanmrn__verifier"]
    assert hrun.leftover_projects(projects, []) == []


def test_trial_names_skip_files_and_hidden(tmp_path):
    (tmp_path / "t1__abc").mkdir()
    (tmp_path / ".hidden").mkdir()
    (tmp_path / "result.json").write_text("{}")
    assert hrun.trial_names(str(tmp_path)) == ["t1__abc"]
    assert hrun.trial_names(str(tmp_path / "missing")) == []


def test_job_files(tmp_path):
    files = hrun.JobFiles(str(tmp_path / "host"), "/opt/swebench/jobs", "n1")
    assert files.harbor("matrix.json") == "/opt/swebench/jobs/.harbor_job/n1/matrix.json"
    files.ensure_dir()
    assert stat.S_IMODE(os.stat(files.host_dir).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(os.path.dirname(files.host_dir)).st_mode) == 0o700
    assert files.read_state() == {} and files.read_pid() is None and files.log_tail() == ""
    files.write_state({"pid": 12, "command": ["harbor"]})
    assert files.read_state() == {"pid": 12, "command": ["harbor"]}
    assert stat.S_IMODE(os.stat(files.host("state.json")).st_mode) == 0o600
    with open(files.host("harbor.pid"), "w") as handle:
        handle.write("4242\n")
    assert files.read_pid() == 4242
    with open(files.host("harbor.log"), "w") as handle:
        handle.write("".join("line %d\n" % i for i in range(100)))
    assert files.log_tail(3) == "line 97\nline 98\nline 99"
    assert files.remove("harbor.pid") is True and files.remove("harbor.pid") is False


def test_write_file_is_atomic_and_idempotent(tmp_path):
    path = str(tmp_path / "env")
    assert hrun.write_file(path, "A=1\n", 0o600) is True
    assert hrun.write_file(path, "A=1\n", 0o600) is False
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    os.chmod(path, 0o644)
    assert hrun.write_file(path, "A=1\n", 0o600) is False
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert os.listdir(str(tmp_path)) == ["env"]


def test_trial_network_overlay_and_its_place_in_the_config():
    from ansible_collections.aisbench.agent_runtime.plugins.module_utils._agent_toolchains import with_compose_overlay
    from ansible_collections.aisbench.agent_runtime.plugins.module_utils._harbor_runner import trial_network_overlay
    # The same key as docs/agents.md's overlay: both in one job merge into one network of the main container.
    assert trial_network_overlay("aisbench-model") == {
        "services": {"main": {"networks": ["model"]}},
        "networks": {"model": {"external": True, "name": "aisbench-model"}}}
    assert trial_network_overlay("aisbench-model", only=False)["services"]["main"]["networks"] == ["default", "model"]
    config = {"agents": [{"name": "oracle"}], "environment": {"extra_docker_compose": ["/c/mine.json"], "type": "docker"}}
    added = with_compose_overlay(config, "/j/network-compose.json")
    assert added["environment"] == {"extra_docker_compose": ["/c/mine.json", "/j/network-compose.json"], "type": "docker"}
    assert config["environment"]["extra_docker_compose"] == ["/c/mine.json"]
    assert with_compose_overlay(added, "/j/network-compose.json") == added
    assert with_compose_overlay({}, "/j/n.json") == {"environment": {"extra_docker_compose": ["/j/n.json"]}}
