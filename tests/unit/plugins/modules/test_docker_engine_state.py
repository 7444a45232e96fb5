"""docker_engine_state: whether the kernel enforces AppArmor (the two files dockerd reads); the docker group's members
(option group), which the docker_engine role's no-change decision reads instead of running the user module for every
docker_engine_users entry on every run; and what a read covered
(return read), which runtime_image checks before it decides from docker_engine's read instead of a read of its own.

Its tests that start a process: tests/integration/plays/test_docker_engine_state_play.py.
"""
import base64
import collections
import json

from ansible_collections.aisbench.agent_runtime.plugins.modules import docker_engine_state

Group = collections.namedtuple("Group", "gr_name gr_passwd gr_gid gr_mem")
User = collections.namedtuple("User", "pw_name pw_passwd pw_uid pw_gid pw_gecos pw_dir pw_shell")


def _fake_databases(monkeypatch):
    groups = {"docker": Group("docker", "x", 990, ["carol", "alice"])}

    def getgrnam(name):
        return groups[name]  # KeyError for an unknown group, as grp does

    users = [User("alice", "x", 1000, 1000, "", "/home/alice", "/bin/bash"),
             User("bob", "x", 1001, 990, "", "/home/bob", "/bin/bash"),  # docker is bob's primary group
             User("carol", "x", 1002, 1002, "", "/home/carol", "/bin/bash")]
    monkeypatch.setattr(docker_engine_state.grp, "getgrnam", getgrnam)
    monkeypatch.setattr(docker_engine_state.pwd, "getpwall", lambda: users)


def test_group_members_lists_members_and_primary_users_sorted(monkeypatch):
    _fake_databases(monkeypatch)
    assert docker_engine_state.group_members("docker") == ["alice", "bob", "carol"]


def test_group_members_is_none_without_the_group_or_when_not_asked(monkeypatch):
    _fake_databases(monkeypatch)
    assert docker_engine_state.group_members("nosuchgroup") is None
    assert docker_engine_state.group_members(None) is None
    assert docker_engine_state.group_members("") is None


def _sys_tree(tmp_path, securityfs, enabled):
    root = tmp_path / "sys"
    if securityfs:
        (root / "kernel/security/apparmor").mkdir(parents=True)
    if enabled is not None:
        (root / "module/apparmor/parameters").mkdir(parents=True)
        (root / "module/apparmor/parameters/enabled").write_text(enabled + "\n")
    return str(root)


def test_apparmor_enabled_needs_both_files_dockerd_reads(tmp_path):
    # As on Debian's arm64 kernel (the arm64 test host): securityfs lists apparmor and the module says Y.
    assert docker_engine_state.apparmor_enabled(_sys_tree(tmp_path / "on", True, "Y")) is True
    # Disabled on the command line (apparmor=0), not built in, or securityfs not mounted: dockerd skips profiles too.
    assert docker_engine_state.apparmor_enabled(_sys_tree(tmp_path / "off", True, "N")) is False
    assert docker_engine_state.apparmor_enabled(_sys_tree(tmp_path / "none", False, None)) is False
    assert docker_engine_state.apparmor_enabled(_sys_tree(tmp_path / "nosecfs", False, "Y")) is False


def test_logins_differ_compares_root_docker_config_without_returning_secrets(tmp_path):
    config = tmp_path / "config.json"
    logins = [{"registry": "registry.example:5000", "username": "ci", "password": "s3cret"},
              {"registry": "other.example", "username": "ci", "password": "x"}]
    assert docker_engine_state.logins_differ(str(config), logins) == ["registry.example:5000", "other.example"]
    config.write_text(json.dumps({"auths": {"registry.example:5000": {"auth": base64.b64encode(b"ci:s3cret").decode()},
                                            "https://other.example": {"auth": base64.b64encode(b"ci:old").decode()}}}))
    assert docker_engine_state.logins_differ(str(config), logins) == ["other.example"]
    assert docker_engine_state.logins_differ(str(config), []) == []
    config.write_text("not json")
    assert docker_engine_state.logins_differ(str(config), logins[:1]) == ["registry.example:5000"]


def test_file_state_reads_checksums_and_daemon_json_its_mirrors(tmp_path):
    daemon_json = tmp_path / "daemon.json"
    daemon_json.write_text('{"registry-mirrors": ["https://mirror.example:5443"]}')
    state = docker_engine_state.file_state(str(daemon_json), docker_engine_state.daemon_json_mirrors)
    assert state["registry_mirrors"] == ["https://mirror.example:5443"] and state["exists"] is True
    assert docker_engine_state.file_state(str(tmp_path / "none"))["exists"] is False
    daemon_json.write_text("{")
    assert docker_engine_state.file_state(str(daemon_json), docker_engine_state.daemon_json_mirrors)["registry_mirrors"] is None
