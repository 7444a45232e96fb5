#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: runtime_container_state
short_description: Read what the runtime_container role decides from, in one round trip
version_added: 0.1.0
description:
  - The M(aisbench.agent_runtime.runtime_container) role's one read of a target, so that an idempotent rerun costs
    one module run instead of one per directory, file and container - the host directories and managed files as they
    are, the runtime container and its image, the data container and the host's engine socket, and whether
    community.docker's Python requirement is there.
  - The action plugin adds the digests of what the role would write from the controller (a file, or every file of a
    directory tree), and RV(differ) names the entries that a write would change. Rendered content comes with its
    C(sha1) (the role hashes it on the controller; a secret never reaches this task).
  - The engine is read through its API with the Python standard library (unix:// and plain tcp://); for any other
    O(docker_host) RV(engine_read) is false and the role reads it with community.docker's modules.
  - Reads only; in check mode it reads the same and reports RV(check_mode).
author: aisbench maintainers (!UNKNOWN)
options:
  docker_host:
    description: The engine that runs the runtime container.
    type: str
    default: unix:///var/run/docker.sock
  container:
    description: Name of the runtime container.
    type: str
    required: true
  image:
    description: Reference of the runtime image.
    type: str
    required: true
  data_container:
    description: Name of the data container whose volumes the runtime container mounts; empty for none.
    type: str
    default: ""
  socket:
    description: Host path that must be a socket (the host engine's socket in host_socket mode); empty for none.
    type: str
    default: ""
  dirs:
    description: Directories as the role creates them, each with C(key), C(path) and optionally C(owner), C(group),
      C(mode) (octal string). An entry differs when it is not a directory or its owner, group or mode differs.
    type: list
    elements: dict
    default: []
  files:
    description: Files the role writes, each with C(key) (entries may share a key, as the files of one directory
      tree do), C(dest), optionally C(owner), C(group), C(mode), and either C(src) (a controller file, or a
      directory whose files go under C(dest) as M(ansible.builtin.copy)'s C(src=DIR/) puts them; the action plugin
      hashes them) or C(sha1) of the content to be written. An entry with neither is only read (RV(files)).
    type: list
    elements: dict
    default: []
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - aisbench.agent_runtime.attributes
attributes:
  check_mode:
    support: full
    details: Reads the same as a real run; RV(check_mode) says which it is.
"""

EXAMPLES = r"""
- name: Read the host and engine state (one round trip)
  aisbench.agent_runtime.runtime_container_state:
    container: agent-runtime
    image: aisbench/agent-runtime:0.26.0
    dirs:
      - {key: jobs, path: /opt/aisbench/jobs, owner: root, group: root, mode: "0755"}
    files:
      - {key: matrix, src: /srv/matrix.yaml, dest: /opt/aisbench/config/matrix.yaml, mode: "0644"}
  register: state
"""

RETURN = r"""
check_mode:
  description: Whether the task ran in check mode (also when check_mode is set on the task, role or play).
  type: bool
  returned: always
requests:
  description: Whether the target's Python imports requests (community.docker's modules need it).
  type: bool
  returned: always
differ:
  description: Keys of the O(dirs) and O(files) entries a write would change (missing, other content, owner, group
    or mode), sorted.
  type: list
  elements: str
  returned: always
files:
  description: Per O(files) C(dest), what is there now (C(exists), C(sha1), C(mode), C(owner), C(group)).
  type: dict
  returned: always
engine_read:
  description: Whether the engine was read (RV(container), RV(image), RV(data_container_exists) are then set).
  type: bool
  returned: always
engine_error:
  description: Why the engine was not read, when O(docker_host) is unix:// or tcp:// but did not answer.
  type: str
  returned: when the engine did not answer
container:
  description: The engine's inspect document of O(container), or null if there is none.
  type: dict
  returned: when RV(engine_read)
image:
  description: The engine's inspect document of O(image), or null if the engine has none.
  type: dict
  returned: when RV(engine_read)
data_container_exists:
  description: Whether O(data_container) exists (false when it is empty).
  type: bool
  returned: when RV(engine_read)
socket_is_socket:
  description: Whether O(socket) is a socket (false when it is empty).
  type: bool
  returned: always
"""

import grp
import hashlib
import importlib
import os
import pwd
import stat

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _engine_api as engine_api

try:
    import http.client as http_client
except ImportError:  # pragma: no cover - Python 2 targets are not supported
    http_client = None


def _name(lookup, number):
    try:
        return lookup(number)[0]
    except KeyError:
        return str(number)


def path_state(path, want_dir):
    """exists/isdir/mode/owner/group of path (not following a final symlink for files)."""
    try:
        info = os.stat(path) if want_dir else os.lstat(path)
    except OSError:
        return {"exists": False}
    return {"exists": True, "isdir": stat.S_ISDIR(info.st_mode), "isreg": stat.S_ISREG(info.st_mode),
            "mode": "%04o" % stat.S_IMODE(info.st_mode), "owner": _name(pwd.getpwuid, info.st_uid),
            "group": _name(grp.getgrgid, info.st_gid)}


def file_sha1(path):
    digest = hashlib.sha1()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _mode_differs(want, have):
    return bool(want) and int(str(want), 8) != int(have, 8)


def attributes_differ(entry, seen):
    return ((entry.get("owner") and entry["owner"] != seen["owner"])
            or (entry.get("group") and entry["group"] != seen["group"]) or _mode_differs(entry.get("mode"), seen["mode"]))


def read_paths(dirs, files):
    """(differ keys, {dest: what is there}) for the role's directories and files."""
    differ = set()
    for entry in dirs:
        seen = path_state(entry["path"], True)
        if not seen["exists"] or not seen["isdir"] or attributes_differ(entry, seen):
            differ.add(entry["key"])
    observed = {}
    for entry in files:
        seen = path_state(entry["dest"], False)
        if seen["exists"] and seen["isreg"]:
            seen["sha1"] = file_sha1(entry["dest"])
        observed[entry["dest"]] = seen
        if entry.get("sha1") and (not seen.get("sha1") or seen["sha1"] != entry["sha1"] or attributes_differ(entry, seen)):
            differ.add(entry["key"])
    return sorted(differ), observed


def read_engine(docker_host, container, image, data_container):
    """(engine facts or None, error or None): None facts when docker_host is not one the standard library reads."""
    try:
        engine_api.parse_docker_host(docker_host)
    except ValueError:
        return None, None
    try:
        return {"container": engine_api.inspect(docker_host, "container", container),
                "image": engine_api.inspect(docker_host, "image", image),
                "data_container_exists": bool(data_container)
                and engine_api.inspect(docker_host, "container", data_container) is not None}, None
    except (OSError, RuntimeError, ValueError, http_client.HTTPException) as exc:
        return None, "%s: %s" % (docker_host, getattr(exc, "strerror", None) or exc)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            docker_host=dict(type="str", default="unix:///var/run/docker.sock"),
            container=dict(type="str", required=True),
            image=dict(type="str", required=True),
            data_container=dict(type="str", default=""),
            socket=dict(type="str", default=""),
            dirs=dict(type="list", elements="dict", default=[]),
            files=dict(type="list", elements="dict", default=[]),
        ),
        supports_check_mode=True,
    )
    params = module.params
    for entry in params["dirs"] + params["files"]:
        if not entry.get("key") or not (entry.get("path") or entry.get("dest")):
            module.fail_json(msg="runtime_container_state: every dirs entry needs key and path, every files entry "
                                 "key and dest; got %s" % entry)
    differ, observed = read_paths(params["dirs"], params["files"])
    try:
        importlib.import_module("requests")
        has_requests = True
    except ImportError:
        has_requests = False
    socket_path = params["socket"]
    result = dict(changed=False, check_mode=module.check_mode, requests=has_requests, differ=differ, files=observed,
                  socket_is_socket=bool(socket_path) and os.path.exists(socket_path)
                  and stat.S_ISSOCK(os.stat(socket_path).st_mode))
    engine, error = read_engine(params["docker_host"], params["container"], params["image"], params["data_container"])
    result["engine_read"] = engine is not None
    if engine is not None:
        result.update(engine)
    if error:
        result["engine_error"] = error
    module.exit_json(**result)


if __name__ == "__main__":
    main()
