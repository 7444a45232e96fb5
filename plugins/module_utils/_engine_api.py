# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""Private: read-only GETs on a Docker engine's API with the standard library only (no docker CLI, SDK or requests),
for the modules that read an engine before the target has python3-requests. unix:// and plain tcp:// only."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import socket

try:
    import http.client as http_client
    from urllib.parse import quote, urlsplit
except ImportError:  # pragma: no cover - Python 2 targets are not supported; the import test still loads this file
    http_client = quote = urlsplit = None

from ansible_collections.aisbench.agent_runtime.plugins.module_utils._validation import docker_host_problem


def parse_docker_host(docker_host):
    """unix:///path or tcp://host:port -> ("unix", path) / ("tcp", host, port); ValueError otherwise."""
    problem = docker_host_problem(docker_host, ("unix", "tcp"))
    if problem:
        raise ValueError("%r %s (TLS endpoints are not supported, nor ssh://)" % (docker_host, problem))
    if docker_host.startswith("unix://"):
        return ("unix", docker_host[len("unix://"):])
    parts = urlsplit(docker_host)
    return ("tcp", parts.hostname, parts.port or 2375)


if http_client is not None:
    class _UnixHTTPConnection(http_client.HTTPConnection):
        def __init__(self, socket_path, timeout):
            http_client.HTTPConnection.__init__(self, "localhost", timeout=timeout)
            self._socket_path = socket_path

        def connect(self):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(self.timeout)
            try:
                sock.connect(self._socket_path)
            except Exception:
                sock.close()
                raise
            self.sock = sock


def get(docker_host, path, timeout=5.0):
    """GET path on the engine: (HTTP status, body bytes). Raises ValueError (bad docker_host), OSError or
    http_client.HTTPException (not reachable)."""
    endpoint = parse_docker_host(docker_host)
    if endpoint[0] == "unix":
        connection = _UnixHTTPConnection(endpoint[1], timeout)
    else:
        connection = http_client.HTTPConnection(endpoint[1], endpoint[2], timeout=timeout)
    try:
        connection.request("GET", path, headers={"Host": "docker"})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def inspect(docker_host, kind, name, timeout=5.0):
    """GET /<kind>s/<name>[/json] (kind: container, image or volume): the engine's inspect document, or None if it has none
    by that name. Any other answer raises RuntimeError naming the status."""
    # Volumes are inspected at /volumes/<name>, the others at /<kind>s/<name>/json.
    path = "/%ss/%s%s" % (kind, quote(name, safe="/:"), "" if kind == "volume" else "/json")
    status, body = get(docker_host, path, timeout)
    if status == 404:
        return None
    if status != 200:
        raise RuntimeError("GET %s answered HTTP %d: %s" % (path, status, body.decode("utf-8", "replace")[:200]))
    return json.loads(body.decode("utf-8"))
