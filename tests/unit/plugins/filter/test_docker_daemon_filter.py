"""docker_daemon_config: the daemon.json the docker_engine role writes; registry_ca_files: where its registries' CAs go."""
import hashlib
import os

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.aisbench.agent_runtime.plugins.filter.docker_daemon import docker_daemon_config, registry_ca_files

ROLE_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles", "docker_engine")
# The settings vars/main.yml passes to the filter, with the role's own defaults.
SETTINGS = ("registry_mirrors", "insecure_registries", "storage_driver", "cgroup_driver", "data_root", "log_driver",
            "log_max_size", "log_max_file", "default_address_pools", "runtimes", "default_runtime", "live_restore",
            "daemon_options")
with open(os.path.join(ROLE_DIR, "defaults", "main.yml")) as defaults_file:
    _DEFAULTS = yaml.safe_load(defaults_file)
ROLE_DEFAULTS = {name: _DEFAULTS["docker_engine_" + name] for name in SETTINGS}


def test_the_role_passes_every_setting_to_the_filter():
    with open(os.path.join(ROLE_DIR, "vars", "main.yml")) as vars_file:
        passed = vars_file.read()
    for name in SETTINGS:
        assert "'%s': docker_engine_%s" % (name, name) in passed


def build(**overrides):
    settings = dict(ROLE_DEFAULTS)
    settings.update(overrides)
    return docker_daemon_config(settings)


def test_role_defaults_give_log_rotation_and_live_restore():
    assert build() == {"log-driver": "json-file", "log-opts": {"max-size": "100m", "max-file": "3"}, "live-restore": True}


def test_live_restore_off_leaves_the_key_out_and_daemon_options_win():
    assert "live-restore" not in build(live_restore=False)
    assert build(daemon_options={"live-restore": False})["live-restore"] is False


def test_live_restore_must_be_a_boolean():
    with pytest.raises(AnsibleFilterError, match=r"docker_engine_live_restore: 'yes' must be true or false"):
        build(live_restore="yes")


def test_every_setting_lands_under_its_daemon_json_key():
    config = build(
        registry_mirrors=["https://mirror.example.org", "http://10.0.0.5:5000/"],
        insecure_registries=["registry.local:5000", "10.20.0.0/16"],
        storage_driver="vfs",
        cgroup_driver="systemd",
        data_root="/data/docker",
        default_address_pools=[{"base": "172.80.0.0/16", "size": 24}],
        runtimes={"nvidia": {"path": "nvidia-container-runtime", "runtimeArgs": []}},
        default_runtime="nvidia",
    )
    assert config["registry-mirrors"] == ["https://mirror.example.org", "http://10.0.0.5:5000/"]
    assert config["insecure-registries"] == ["registry.local:5000", "10.20.0.0/16"]
    assert config["storage-driver"] == "vfs"
    assert config["exec-opts"] == ["native.cgroupdriver=systemd"]
    assert config["data-root"] == "/data/docker"
    assert config["default-address-pools"] == [{"base": "172.80.0.0/16", "size": 24}]
    assert config["runtimes"]["nvidia"]["path"] == "nvidia-container-runtime"
    assert config["default-runtime"] == "nvidia"


def test_extra_options_merge_last_and_recursively():
    config = build(daemon_options={"log-opts": {"max-file": "9", "compress": "true"}, "live-restore": True})
    assert config["log-opts"] == {"max-size": "100m", "max-file": "9", "compress": "true"}
    assert config["live-restore"] is True


def test_log_driver_without_rotation_options():
    assert build(log_driver="journald", live_restore=False) == {"log-driver": "journald"}


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"registry_mirrors": ["mirror.example.org"]}, "docker_engine_registry_mirrors: 'mirror.example.org' is not an http"),
        ({"registry_mirrors": ["ftp://mirror.example.org"]}, "is not an http"),
        ({"registry_mirrors": ["https://mirror.example.org:99999"]}, "port outside"),
        ({"registry_mirrors": ["https://bad host"]}, "is not an http"),
        ({"registry_mirrors": "https://a.example"}, "must be a list"),
        ({"insecure_registries": ["http://registry.local"]}, "docker_engine_insecure_registries"),
        ({"storage_driver": "overlay"}, "docker_engine_storage_driver: 'overlay' is not one of"),
        ({"cgroup_driver": "systemd.slice"}, "docker_engine_cgroup_driver"),
        ({"data_root": "var/lib/docker"}, "must be an absolute path"),
        ({"data_root": "/data/../etc"}, "must be an absolute path"),
        ({"log_driver": "loki"}, "docker_engine_log_driver"),
        ({"log_max_size": "10 MB"}, "docker_engine_log_max_size"),
        ({"log_max_file": 0}, "docker_engine_log_max_file"),
        ({"default_address_pools": [{"base": "172.80.0.1/16", "size": 24}]}, "not a CIDR"),
        ({"default_address_pools": [{"base": "172.80.0.0/16", "size": 8}]}, "size outside 16-32"),
        ({"default_address_pools": [{"base": "172.80.0.0/16"}]}, "exactly the keys base and size"),
        ({"runtimes": {"nvidia": {}}}, "needs a path"),
        ({"default_runtime": "crun"}, "docker_engine_default_runtime: 'crun'"),
        ({"daemon_options": ["live-restore"]}, "docker_engine_daemon_options"),
    ],
)
def test_bad_values_name_the_variable_and_the_value(overrides, message):
    with pytest.raises(AnsibleFilterError, match=None) as error:
        build(**overrides)
    assert message in str(error.value)


def test_builtin_default_runtime_needs_no_declaration():
    assert build(default_runtime="runc")["default-runtime"] == "runc"


# --- the merged options, checked the way dockerd uses them (the same table the Molecule scenario walks) ---------

def _wrong_rows():
    import yaml
    path = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "molecule", "docker_engine", "vars", "wrong_options.yml")
    with open(path) as handle:
        return yaml.safe_load(handle)["wrong_daemon_options"]


WRONG_ROWS = _wrong_rows()


@pytest.mark.parametrize("row", [r for r in WRONG_ROWS if r["stage"] == "filter"], ids=lambda r: r["id"])
def test_every_filter_row_of_the_table_is_refused_with_its_words(row):
    settings = dict(ROLE_DEFAULTS, log_max_size="20m", daemon_options=dict({"live-restore": True}, **row.get("options", {})))
    for name, value in row.get("vars", {}).items():
        settings[name[len("docker_engine_"):]] = value
    with pytest.raises(AnsibleFilterError) as info:
        docker_daemon_config(settings)
    assert row["expect"] in str(info.value)


def test_the_table_has_at_least_twenty_wrong_values():
    assert len(WRONG_ROWS) >= 20 and len({row["id"] for row in WRONG_ROWS}) == len(WRONG_ROWS)


def test_a_named_setting_is_named_as_the_source():
    with pytest.raises(AnsibleFilterError) as info:
        build(data_root="/data/docker", daemon_options={"log-opts": {"max-size": "1X"}})
    assert "log-opts.max-size='1X' (from docker_engine_daemon_options)" in str(info.value)
    with pytest.raises(AnsibleFilterError) as info:
        build(daemon_options={"log-opts": {"max-file": "0"}})
    assert "(from docker_engine_daemon_options)" in str(info.value)


@pytest.mark.parametrize("options", [
    {"log-opts": {"max-size": "1.5g", "max-file": "5", "compress": "true", "mode": "non-blocking",
                  "max-buffer-size": "4m"}},
    {"data-root": "/srv/docker", "bip": "172.26.0.1/16", "fixed-cidr": "172.26.5.0/24", "dns": ["10.0.0.2", "::1"]},
    {"mtu": 1450, "max-concurrent-downloads": 6, "shutdown-timeout": 0, "live-restore": False, "log-level": "warn"},
    {"proxies": {"http-proxy": "http://proxy.local:3128", "no-proxy": "localhost"}, "default-shm-size": "128M"},
    {"log-driver": "fluentd", "log-opts": {"fluentd-address": "localhost:24224", "fluentd-retry-wait": "1s"}},
    {"features": {"buildkit": True}, "some-future-option": {"x": 1}},
])
def test_good_options_pass(options):
    assert build(daemon_options=options)


# ---------------------------------------------------------------------------- inner_daemon_config (runtime container)

from ansible_collections.aisbench.agent_runtime.plugins.plugin_utils._docker_daemon import (  # noqa: E402
    INNER_ADDRESS_POOLS,
    inner_daemon_config,
)


def test_inner_defaults_cgroupfs_pools_for_2048_trials_and_rotated_logs():
    config = inner_daemon_config({})
    assert config == {
        "exec-opts": ["native.cgroupdriver=cgroupfs"],
        "log-driver": "json-file",
        "log-opts": {"max-size": "20m", "max-file": "2"},
        "default-address-pools": [{"base": "172.24.0.0/13", "size": 24}],
        "init": True,
    }
    pool = INNER_ADDRESS_POOLS[0]
    assert 2 ** (pool["size"] - int(pool["base"].split("/")[1])) >= 64
    # The role passes its empty defaults: the same result.
    assert inner_daemon_config({"registry_mirrors": [], "default_address_pools": [], "daemon_options": {}}) == config


def test_inner_init_is_a_default_a_site_can_turn_off():
    assert inner_daemon_config({"daemon_options": {"init": False}})["init"] is False
    with pytest.raises(AnsibleFilterError, match="init"):
        inner_daemon_config({"daemon_options": {"init": "yes"}})


def test_inner_site_settings_replace_the_defaults():
    config = inner_daemon_config({
        "registry_mirrors": ["https://mirror.example.org"],
        "default_address_pools": [{"base": "10.230.0.0/16", "size": 26}],
        "daemon_options": {"mtu": 1400, "log-opts": {"max-size": "50m"}},
    })
    assert config["registry-mirrors"] == ["https://mirror.example.org"]
    assert config["default-address-pools"] == [{"base": "10.230.0.0/16", "size": 26}]
    assert config["mtu"] == 1400
    assert config["log-opts"] == {"max-size": "50m", "max-file": "2"}
    assert "storage-driver" not in config


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"daemon_options": {"storage-driver": "vfs"}},
         "runtime_container_daemon_options: storage-driver='vfs' is not an option of the inner daemon.json: the "
         "runtime image's entrypoint sets it (see runtime_container_storage_driver)"),
        ({"daemon_options": {"data-root": "/srv/docker"}}, "see runtime_container_docker_volume"),
        ({"daemon_options": {"hosts": ["tcp://0.0.0.0:2375"]}}, "see runtime_container_run_dir"),
        ({"registry_mirrors": ["mirror.example.org"]}, "runtime_container_registry_mirrors: 'mirror.example.org'"),
        ({"default_address_pools": [{"base": "10.230.0.0/16", "size": 8}]},
         "runtime_container_default_address_pools: {'base': '10.230.0.0/16', 'size': 8} has a size outside 16-32"),
        ({"daemon_options": {"mtu": "1400"}},
         "runtime_container: daemon.json option mtu='1400' (from runtime_container_daemon_options) must be a whole"),
        ({"storage_driver": "overlay3"},
         "runtime_container_storage_driver: 'overlay3' is neither auto nor one of overlay2, fuse-overlayfs"),
        ({"default_address_pools": [{"base": "10.300.0.0/16", "size": 24}]},
         "runtime_container_default_address_pools: {'base': '10.300.0.0/16', 'size': 24} has a base that is not a "
         "CIDR network"),
        ({"storage": "vfs"}, "inner_daemon_config: unknown settings storage"),
    ],
)
def test_inner_bad_settings_name_the_runtime_container_variable(settings, message):
    with pytest.raises(AnsibleFilterError) as error:
        inner_daemon_config(settings)
    assert message in str(error.value)


@pytest.mark.parametrize("driver", ["auto", "overlay2", "vfs", "", None])
def test_inner_storage_driver_is_checked_but_never_written(driver):
    # The entrypoint owns the driver (auto: chosen when the container starts); daemon.json never names it.
    assert "storage-driver" not in inner_daemon_config({"storage_driver": driver})


def test_registry_ca_files_say_where_each_ca_goes_and_whether_it_differs():
    cas = {"mirror.example:5443": "/srv/site-ca.crt", "registry.example": "/srv/other.crt"}
    pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
    assert [entry["dest"] for entry in registry_ca_files(cas, certs_dir="/etc/docker/certs.d")] == [
        "/etc/docker/certs.d/mirror.example:5443/ca.crt", "/etc/docker/certs.d/registry.example/ca.crt"]
    held = {"/etc/docker/certs.d/mirror.example:5443/ca.crt": {
        "exists": True, "mode": "0644", "uid": 0, "gid": 0, "checksum": hashlib.sha1(pem.encode()).hexdigest()}}
    files = registry_ca_files(cas, [pem, pem], "/etc/docker/certs.d", held)
    assert [(entry["registry"], entry["differs"], entry["content"]) for entry in files] == [
        ("mirror.example:5443", False, pem), ("registry.example", True, pem)]
    held["/etc/docker/certs.d/mirror.example:5443/ca.crt"]["mode"] = "0600"
    assert registry_ca_files(cas, [pem, pem], "/etc/docker/certs.d", held)[0]["differs"] is True
    with pytest.raises(AnsibleFilterError, match=r"docker_engine_registry_ca_certificates: \{'registry.example': "
                                                 r"'/srv/other.crt'\} is not a PEM certificate file"):
        registry_ca_files(cas, [pem, "not a certificate"])
    with pytest.raises(AnsibleFilterError, match=r"docker_engine_registry_ca_certificates: 'https://mirror.example' is "
                                                 r"not host\[:port\] \(no scheme, no path\)"):
        registry_ca_files({"https://mirror.example": "/srv/ca.crt"})
