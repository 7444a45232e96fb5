"""Verify docker_engine on the Molecule targets (real engines inside privileged containers)."""
import json
import re

EXPECTED_DAEMON_JSON = {
    "registry-mirrors": ["https://mirror-a.aisbench.test", "http://mirror-b.aisbench.test:5000"],
    "insecure-registries": ["registry.aisbench.test:5000"],
    "storage-driver": "overlay2",
    "exec-opts": ["native.cgroupdriver=cgroupfs"],
    "log-driver": "json-file",
    "log-opts": {"max-size": "20m", "max-file": "2"},
    "default-address-pools": [{"base": "172.30.0.0/16", "size": 24}],
    "live-restore": True,
}


def _docker_info(host):
    return json.loads(host.check_output("docker info --format '{{json .}}'"))


def test_engine_package_installed(host):
    assert host.package("docker.io").is_installed


def test_compose_and_buildx_where_asked(host):
    if host.system_info.release.startswith("13"):
        assert host.package("docker-compose").is_installed
        assert host.package("docker-buildx").is_installed
        assert re.match(r"Docker Compose version v?2\.", host.check_output("docker compose version"))
    else:
        assert not host.package("docker-compose").is_installed


def test_daemon_json_is_what_was_asked(host):
    daemon_json = host.file("/etc/docker/daemon.json")
    assert daemon_json.user == "root" and daemon_json.mode == 0o644
    assert json.loads(daemon_json.content_string) == EXPECTED_DAEMON_JSON


def test_engine_applies_the_config(host):
    info = _docker_info(host)
    assert info["Driver"] == "overlay2"
    assert info["CgroupDriver"] == "cgroupfs"
    assert info["LiveRestoreEnabled"] is True
    mirrors = [m.rstrip("/") for m in info["RegistryConfig"]["Mirrors"]]
    assert mirrors == ["https://mirror-a.aisbench.test", "http://mirror-b.aisbench.test:5000"]
    insecure = info["RegistryConfig"]["IndexConfigs"]["registry.aisbench.test:5000"]
    assert insecure["Secure"] is False


def test_service_enabled_and_running(host):
    service = host.service("docker")
    assert service.is_running
    assert service.is_enabled


def test_a_container_runs_inside_the_target(host):
    host.check_output("docker load -q -i /root/busybox.tar")
    out = host.check_output("docker run --rm --log-opt max-size=1m local/busybox:latest sh -c 'echo inner-ok; uname -m'")
    assert out.splitlines()[0] == "inner-ok"
    # New networks get their subnet from the configured pool.
    host.check_output("docker network rm aisbench-pool-test >/dev/null 2>&1 || true; docker network create aisbench-pool-test")
    subnet = host.check_output(
        "docker network inspect aisbench-pool-test --format '{{(index .IPAM.Config 0).Subnet}}'"
    )
    host.check_output("docker network rm aisbench-pool-test")
    assert subnet.startswith("172.30.") and subnet.endswith("/24")
