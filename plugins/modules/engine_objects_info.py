#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: engine_objects_info
short_description: Read images and volumes of a Docker engine in one round trip
version_added: 0.2.0
description:
  - Inspects every image and volume named, in one module run, through the engine's API with the Python standard
    library (no docker CLI, SDK or requests needed). The M(aisbench.agent_runtime.baked_images) role decides from it
    what to load, pull, build and fill, so that an idempotent rerun reads the engine once instead of once per image
    list and volume.
  - Only unix:// and plain tcp:// engines are read; for any other O(docker_host) RV(engine_read) is false and the
    caller reads with community.docker's modules.
  - Also says whether the task runs in check mode (however it was set) and whether the target's Python imports
    requests, which community.docker's modules need.
author: aisbench maintainers (!UNKNOWN)
options:
  docker_host:
    description: The engine to read.
    type: str
    default: unix:///var/run/docker.sock
  images:
    description: Image references to inspect.
    type: list
    elements: str
    default: []
  volumes:
    description: Volume names to inspect.
    type: list
    elements: str
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
- name: Read the case images and the toolchain volumes
  aisbench.agent_runtime.engine_objects_info:
    docker_host: unix:///opt/swebench/run/docker.sock
    images: [swebench/sample-hello-pass-base:latest]
    volumes: [aisbench-agent-mini-swe-agent-2.4.6]
  register: engine
"""

RETURN = r"""
check_mode:
  description: Whether the task ran in check mode.
  type: bool
  returned: always
requests:
  description: Whether the target's Python imports requests.
  type: bool
  returned: always
engine_read:
  description: Whether the engine was read (RV(images) and RV(volumes) are then set).
  type: bool
  returned: always
images:
  description: The inspect documents of the O(images) the engine has (as community.docker.docker_image_info's
    C(images)), each once.
  type: list
  elements: dict
  returned: when RV(engine_read)
volumes:
  description: Per O(volumes) name, its inspect document, or null if the engine has none.
  type: dict
  returned: when RV(engine_read)
"""

import importlib

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _engine_api as engine_api

try:
    import http.client as http_client
except ImportError:  # pragma: no cover - Python 2 targets are not supported
    http_client = None


def read_objects(docker_host, images, volumes):
    """(images found, {volume: inspect or None}); each image inspected once (by Id)."""
    found, seen = [], set()
    for ref in images:
        image = engine_api.inspect(docker_host, "image", ref)
        if image is not None and image.get("Id") not in seen:
            seen.add(image.get("Id"))
            found.append(image)
    return found, dict((name, engine_api.inspect(docker_host, "volume", name)) for name in volumes)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            docker_host=dict(type="str", default="unix:///var/run/docker.sock"),
            images=dict(type="list", elements="str", default=[]),
            volumes=dict(type="list", elements="str", default=[]),
        ),
        supports_check_mode=True,
    )
    try:
        importlib.import_module("requests")
        has_requests = True
    except ImportError:
        has_requests = False
    result = dict(changed=False, check_mode=module.check_mode, requests=has_requests, engine_read=False)
    try:
        engine_api.parse_docker_host(module.params["docker_host"])
    except ValueError:
        module.exit_json(**result)
    try:
        images, volumes = read_objects(module.params["docker_host"], module.params["images"], module.params["volumes"])
    except (OSError, RuntimeError, ValueError, http_client.HTTPException) as exc:
        module.fail_json(msg="engine_objects_info: cannot read the engine at %s: %s" % (
            module.params["docker_host"], getattr(exc, "strerror", None) or exc), **result)
    result.update(engine_read=True, images=images, volumes=volumes)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
