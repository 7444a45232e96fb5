# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""Build and validate the content of /etc/docker/daemon.json from role variables."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# The rules live in plugin_utils/_docker_daemon.py and are imported on first use: Ansible loads every filter file of the
# collection in each task that uses any one of its filters, and these rules are the largest of them.


def docker_daemon_config(settings, prefix="docker_engine"):
    from ansible_collections.aisbench.agent_runtime.plugins.plugin_utils import _docker_daemon as docker_daemon

    return docker_daemon.docker_daemon_config(settings, prefix=prefix)


def inner_daemon_config(settings=None, prefix="runtime_container"):
    from ansible_collections.aisbench.agent_runtime.plugins.plugin_utils import _docker_daemon as docker_daemon

    return docker_daemon.inner_daemon_config(settings, prefix=prefix)


def registry_ca_files(cas, contents=None, certs_dir="/etc/docker/certs.d", current=None):
    from ansible_collections.aisbench.agent_runtime.plugins.plugin_utils import _docker_daemon as docker_daemon

    return docker_daemon.registry_ca_files(cas, contents, certs_dir=certs_dir, current=current)


class FilterModule(object):
    def filters(self):
        return {"docker_daemon_config": docker_daemon_config, "inner_daemon_config": inner_daemon_config,
                "registry_ca_files": registry_ca_files}
