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
  - The merged result is then checked the way dockerd uses it, before anything is written (C(dockerd --validate)
    accepts values that break the engine later), namely sizes (C(log-opts.max-size), C(default-shm-size)), durations,
    counts and booleans, absolute paths (C(data-root), C(exec-root)), CIDRs (C(bip), C(fixed-cidr),
    C(default-address-pools)), IP addresses (C(dns)), URLs (C(registry-mirrors), C(proxies)), known drivers
    (storage, log, cgroup), C(log-opts) values as strings, runtimes with absolute paths, and keys that the Debian
    systemd unit already sets on the command line (C(hosts)). Options it does not know are left to dockerd.
  - Raises a clear error naming the daemon.json option, the variable it came from, the bad value and why dockerd
    would refuse it.
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

# The rules live in plugin_utils/docker_daemon.py and are imported on first use: Ansible loads every filter file of the
# collection in each task that uses any one of its filters, and these rules are the largest of them.


def docker_daemon_config(settings, prefix="docker_engine"):
    from ansible_collections.aisbench.agent_runtime.plugins.plugin_utils import docker_daemon

    return docker_daemon.docker_daemon_config(settings, prefix=prefix)


def inner_daemon_config(settings=None, prefix="runtime_container"):
    from ansible_collections.aisbench.agent_runtime.plugins.plugin_utils import docker_daemon

    return docker_daemon.inner_daemon_config(settings, prefix=prefix)


def registry_ca_files(cas, contents=None, certs_dir="/etc/docker/certs.d", current=None):
    from ansible_collections.aisbench.agent_runtime.plugins.plugin_utils import docker_daemon

    return docker_daemon.registry_ca_files(cas, contents, certs_dir=certs_dir, current=current)


class FilterModule(object):
    def filters(self):
        return {"docker_daemon_config": docker_daemon_config, "inner_daemon_config": inner_daemon_config,
                "registry_ca_files": registry_ca_files}
