# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""Build and validate the content of /etc/docker/daemon.json from role variables."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: docker_daemon_config
short_description: Build a validated daemon.json dictionary from docker_engine settings
version_added: 0.1.0
description:
  - Takes a dictionary of C(docker_engine) settings and returns the daemon.json content.
  - Empty settings are left out, so the engine keeps its own defaults for them.
  - C(daemon_options) is merged last (recursively) and wins over the named settings.
  - Raises a clear error naming the setting and the bad value.
positional: _input
options:
  _input:
    description: Settings with keys registry_mirrors, insecure_registries, storage_driver, cgroup_driver,
      data_root, log_driver, log_max_size, log_max_file, default_address_pools, runtimes,
      default_runtime, daemon_options.
    type: dict
    required: true
"""

EXAMPLES = r"""
daemon_json: "{{ {'registry_mirrors': ['https://mirror.example:5000']} | aisbench.agent_runtime.docker_daemon_config }}"
"""

RETURN = r"""
_value:
  description: The daemon.json content.
  type: dict
"""

import ipaddress
import posixpath
import re

from ansible.errors import AnsibleFilterError
from ansible_collections.aisbench.agent_runtime.plugins.module_utils.validation import (
    http_url_problem,
    registry_problem,
)

STORAGE_DRIVERS = ("overlay2", "fuse-overlayfs", "btrfs", "zfs", "vfs", "devicemapper")
CGROUP_DRIVERS = ("systemd", "cgroupfs")
LOG_DRIVERS = ("json-file", "local", "journald", "syslog", "none", "fluentd", "gelf", "awslogs", "splunk", "gcplogs")
BUILTIN_RUNTIMES = ("runc", "io.containerd.runc.v2")
_SIZE = re.compile(r"^[1-9][0-9]*[kmg]?\Z")


def _fail(setting, value, why):
    raise AnsibleFilterError("docker_engine_%s: %r %s" % (setting, value, why))


def _merge(base, extra):
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _list(settings, name):
    value = settings.get(name) or []
    if not isinstance(value, list):
        _fail(name, value, "must be a list")
    return value


def docker_daemon_config(settings):
    if not isinstance(settings, dict):
        raise AnsibleFilterError("docker_daemon_config expects a dict of settings, got %r" % type(settings).__name__)
    config = {}

    mirrors = _list(settings, "registry_mirrors")
    for mirror in mirrors:
        problem = http_url_problem(mirror)
        if problem:
            _fail("registry_mirrors", mirror, problem)
    if mirrors:
        config["registry-mirrors"] = mirrors

    insecure = _list(settings, "insecure_registries")
    for registry in insecure:
        problem = registry_problem(registry)
        if problem:
            _fail("insecure_registries", registry, problem)
    if insecure:
        config["insecure-registries"] = insecure

    storage = settings.get("storage_driver") or ""
    if storage:
        if storage not in STORAGE_DRIVERS:
            _fail("storage_driver", storage, "is not one of %s" % ", ".join(STORAGE_DRIVERS))
        config["storage-driver"] = storage

    cgroup = settings.get("cgroup_driver") or ""
    if cgroup:
        if cgroup not in CGROUP_DRIVERS:
            _fail("cgroup_driver", cgroup, "is not one of %s" % ", ".join(CGROUP_DRIVERS))
        config["exec-opts"] = ["native.cgroupdriver=%s" % cgroup]

    data_root = settings.get("data_root") or ""
    if data_root:
        if not isinstance(data_root, str) or not posixpath.isabs(data_root) or ".." in data_root.split("/"):
            _fail("data_root", data_root, "must be an absolute path without '..'")
        config["data-root"] = data_root

    log_driver = settings.get("log_driver") or ""
    if log_driver:
        if log_driver not in LOG_DRIVERS:
            _fail("log_driver", log_driver, "is not one of %s" % ", ".join(LOG_DRIVERS))
        config["log-driver"] = log_driver
        if log_driver in ("json-file", "local"):
            log_opts = {}
            size = settings.get("log_max_size")
            if size not in (None, ""):
                if not _SIZE.match(str(size)):
                    _fail("log_max_size", size, "must look like 100m, 512k or 1g")
                log_opts["max-size"] = str(size)
            files = settings.get("log_max_file")
            if files not in (None, ""):
                try:
                    count = int(files)
                except (TypeError, ValueError):
                    count = 0
                if count < 1:
                    _fail("log_max_file", files, "must be a positive integer")
                log_opts["max-file"] = str(count)
            if log_opts:
                config["log-opts"] = log_opts

    pools = _list(settings, "default_address_pools")
    for pool in pools:
        if not isinstance(pool, dict) or set(pool) != {"base", "size"}:
            _fail("default_address_pools", pool, "entries need exactly the keys base and size")
        try:
            network = ipaddress.ip_network(pool["base"], strict=True)
        except (TypeError, ValueError):
            _fail("default_address_pools", pool, "has a base that is not a CIDR network")
        size = pool["size"]
        if not isinstance(size, int) or isinstance(size, bool) or not network.prefixlen <= size <= network.max_prefixlen:
            _fail("default_address_pools", pool, "has a size outside %d-%d" % (network.prefixlen, network.max_prefixlen))
    if pools:
        config["default-address-pools"] = pools

    runtimes = settings.get("runtimes") or {}
    if not isinstance(runtimes, dict):
        _fail("runtimes", runtimes, "must be a dict of name -> {path, runtimeArgs}")
    for name, runtime in runtimes.items():
        if not isinstance(runtime, dict) or not runtime.get("path"):
            _fail("runtimes", {name: runtime}, "needs a path")
    if runtimes:
        config["runtimes"] = runtimes

    default_runtime = settings.get("default_runtime") or ""
    if default_runtime:
        if default_runtime not in runtimes and default_runtime not in BUILTIN_RUNTIMES:
            _fail("default_runtime", default_runtime, "is neither a built-in runtime nor a key of docker_engine_runtimes")
        config["default-runtime"] = default_runtime

    extra = settings.get("daemon_options") or {}
    if not isinstance(extra, dict):
        _fail("daemon_options", extra, "must be a dict")
    return _merge(config, extra)


class FilterModule(object):
    def filters(self):
        return {"docker_daemon_config": docker_daemon_config}
