#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: docker_engine_state
short_description: Read what the docker_engine role decides on, in one round trip
version_added: 0.1.0
description:
  - Reads, without changing anything, what the M(aisbench.agent_runtime.docker_engine) role needs to decide whether
    anything must change, so that a host where nothing differs costs one module run instead of one per checked thing.
  - The installed version of each package in O(packages) (C(dpkg-query)); whether C(dockerd) exists and can validate a
    config file (C(dockerd --help) names C(--validate)); the checksum, mode and owner of O(daemon_json_path) and whether
    its directory exists; the backups earlier releases left next to it (C(daemon.json.PID.DATE@TIME~)); the service's
    C(ActiveState) and C(UnitFileState) (C(systemctl show)); when the service is active, C(docker info) as JSON;
    the C(Id) and labels of each image in O(images) (C(docker image inspect)); and the members of group O(group)
    (the group database, no command); and whether the kernel enforces AppArmor (the files C(dockerd) itself reads).
  - Also reports whether it ran in check mode, as set on the task, block, role or play (C(ansible_check_mode) sees
    only C(--check)), so a role needs no extra task to find out.
author: aisbench maintainers (!UNKNOWN)
options:
  packages:
    description: Debian packages whose installed version to report.
    type: list
    elements: str
    default: []
  daemon_json_path:
    description: The engine's daemon.json.
    type: path
    default: /etc/docker/daemon.json
  service_name:
    description: The engine's systemd unit.
    type: str
    default: docker
  docker_executable:
    description: The docker CLI (for C(docker info) and C(docker image inspect)).
    type: str
    default: docker
  docker_host:
    description: The engine to ask (C(docker --host)); the CLI's default when not set.
    type: str
  engine_info:
    description: Whether to ask the engine for C(docker info) (RV(info)).
    type: bool
    default: true
  images:
    description: Image references whose C(Id) and labels to report.
    type: list
    elements: str
    default: []
  group:
    description: A group whose members to report (RV(group_members)), e.g. C(docker); none when not set.
    type: str
    version_added: 0.2.0
  archives:
    description:
      - Paths of C(docker save) archives on the target whose images to report (RV(archives)), read from each archive's
        C(manifest.json) without reading its layers (milliseconds for a 1.2 GB uncompressed tar).
      - The C(aisbench.agent_runtime.image_archive_id) filter picks an image ID from such a result.
    type: list
    elements: str
    default: []
    version_added: 0.2.0
  files:
    description: Paths of files (the registries' CA certificates) whose checksum, mode and owner to report (RV(files)).
    type: list
    elements: path
    default: []
    version_added: 0.3.0
  docker_config:
    description: The Docker client config (C(docker login) writes it) that O(registry_logins) are compared with.
    type: path
    default: /root/.docker/config.json
    version_added: 0.3.0
extends_documentation_fragment:
  - aisbench.agent_runtime.registry_logins
  - ansible.builtin.action_common_attributes
  - aisbench.agent_runtime.attributes
attributes:
  check_mode:
    details: Reads only; runs the same in check mode.
"""

EXAMPLES = r"""
- name: Read the engine's state
  aisbench.agent_runtime.docker_engine_state:
    packages: [docker.io, docker-cli]
  register: engine_state
"""

RETURN = r"""
packages:
  description: Installed (C(ii)) packages of O(packages), name to version; the others are missing.
  returned: always
  type: dict
  sample: {docker.io: "26.1.5+dfsg1-9+b9"}
installed_specs:
  description: The same as C(name=version) strings.
  returned: always
  type: list
  elements: str
dockerd:
  description: Whether C(dockerd) is on the PATH (C(found)) and can validate a config file (C(validate)).
  returned: always
  type: dict
daemon_json:
  description: >-
    O(daemon_json_path): C(exists), C(checksum) (SHA-1 of the content, as the template module computes it), C(mode)
    (octal string), C(uid), C(gid), C(dir_exists) for its directory, and C(registry_mirrors), the mirrors it holds
    (null when it is not a JSON object).
  returned: always
  type: dict
old_backups:
  description: Per-attempt backups earlier releases left next to daemon.json.
  returned: always
  type: list
  elements: str
service:
  description: The unit's C(active_state) and C(unit_file_state) (empty strings without systemd).
  returned: always
  type: dict
info:
  description: C(docker info) as JSON when the service is active, the engine answers and O(engine_info) is set, else null.
  returned: always
  type: dict
images:
  description: Per reference in O(images), C(Id) and C(Labels) of the image, or null when the engine lacks it.
  returned: always
  type: dict
  sample: {"aisbench/agent-runtime:0.25.0": {"Id": "sha256:4f1c...", "Labels": {"org.aisbench.runtime.hash": "9d2e..."}}}
group_members:
  description: >-
    The users in O(group): its listed members and the users whose primary group it is, sorted; null when O(group) is
    not set or the group does not exist.
  returned: always
  type: list
  elements: str
  sample: [alice, bench]
archives:
  description: >-
    Per path in O(archives): C(path), C(exists), C(images) (each with the image C(Id), from the name of the
    archive's config blob, and its C(RepoTags)) and C(error) (why an existing file could not be read, else null).
  returned: always
  type: dict
  sample:
    /var/tmp/agent-runtime.tar:
      path: /var/tmp/agent-runtime.tar
      exists: true
      images: [{"Id": "sha256:db00ac3c...", "RepoTags": ["aisbench/agent-runtime:0.25.0"]}]
      error: null
files:
  description: Per path in O(files), the same keys as RV(daemon_json) (without C(registry_mirrors)).
  returned: always
  type: dict
  version_added: 0.3.0
logins_differ:
  description: The registries of O(registry_logins) whose credentials O(docker_config) does not hold as given.
  returned: always
  type: list
  elements: str
  version_added: 0.3.0
apparmor_enabled:
  description: >-
    Whether the kernel enforces AppArmor (C(/sys/kernel/security/apparmor) exists and
    C(/sys/module/apparmor/parameters/enabled) is C(Y)), as C(dockerd) decides it; there, C(dockerd) loads its container
    profile with C(apparmor_parser) and starts no container without it.
  returned: always
  type: bool
  version_added: 0.2.0
check_mode:
  description: Whether the module ran in check mode.
  returned: always
  type: bool
read:
  description: >-
    What this run was asked to read: C(packages), C(images), C(archives) and C(docker_host) (empty for the CLI's
    default). A later task that reuses the result instead of a read of its own checks that it covers what it needs.
  returned: always
  type: dict
  version_added: 0.2.0
  sample: {packages: [docker.io, python3-requests], images: ["aisbench/agent-runtime:0.25.0"], archives: [], docker_host: ""}
"""

import base64
import grp
import hashlib
import json
import os
import pwd
import re
import stat

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._image_archive import archive_state
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._registry import LOGINS_ARGUMENT_SPEC


def package_versions(module, names):
    """{name: version} of the packages dpkg reports installed and configured ("ii"); "rc" does not count."""
    if not names or not module.get_bin_path("dpkg-query"):
        return {}
    # rc 1 when some package is unknown: the known ones are still printed.
    _rc, out, _err = module.run_command(["dpkg-query", "-W", "-f=${db:Status-Abbrev} ${Package} ${Version}\n"] + list(names))
    versions = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[0] == "ii":
            versions[fields[1]] = fields[2]
    return versions


def dockerd_state(module):
    path = module.get_bin_path("dockerd")
    if not path:
        return {"found": False, "validate": False}
    rc, out, err = module.run_command([path, "--help"])
    return {"found": rc == 0, "validate": "--validate" in out + err}


def file_state(path, content=None):
    state = {"exists": False, "checksum": None, "mode": None, "uid": None, "gid": None,
             "dir_exists": os.path.isdir(os.path.dirname(path))}
    try:
        info = os.stat(path)
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return state
    state.update(exists=stat.S_ISREG(info.st_mode), checksum=hashlib.sha1(data).hexdigest(),  # nosec: template's checksum
                 mode="%04o" % stat.S_IMODE(info.st_mode), uid=info.st_uid, gid=info.st_gid)
    if content:
        state.update(content(data))
    return state


def daemon_json_mirrors(data):
    """The registry-mirrors daemon.json holds (None when it is not a JSON object)."""
    try:
        config = json.loads(data.decode("utf-8"))
    except ValueError:
        return {"registry_mirrors": None}
    return {"registry_mirrors": config.get("registry-mirrors", []) if isinstance(config, dict) else None}


def logins_differ(config_path, logins):
    """The registries of logins whose credentials the Docker client config does not hold as given (docker login stores
    base64 of user:password under the registry's name). Never returns a secret."""
    if not logins:
        return []
    try:
        with open(config_path, "rb") as handle:
            auths = json.loads(handle.read().decode("utf-8")).get("auths") or {}
    except (OSError, ValueError, AttributeError):
        auths = {}
    differ = []
    for login in logins:
        wanted = base64.b64encode(("%s:%s" % (login["username"], login["password"])).encode("utf-8")).decode("ascii")
        stored = [(auths.get(key) or {}).get("auth") for key in (login["registry"], "https://" + login["registry"])]
        if wanted not in stored:
            differ.append(login["registry"])
    return differ


def old_backups(path):
    directory, name = os.path.split(path)
    pattern = re.compile(r"^%s\.[0-9]+\.[0-9-]+@[0-9:]+~$" % re.escape(name))
    try:
        return sorted(os.path.join(directory, entry) for entry in os.listdir(directory) if pattern.match(entry))
    except OSError:
        return []


def service_state(module, name):
    systemctl = module.get_bin_path("systemctl")
    if not systemctl:
        return {"active_state": "", "unit_file_state": ""}
    _rc, out, _err = module.run_command([systemctl, "show", name, "--property=ActiveState,UnitFileState"])
    props = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    return {"active_state": props.get("ActiveState", ""), "unit_file_state": props.get("UnitFileState", "")}


def docker_argv(module, params):
    path = module.get_bin_path(params["docker_executable"])
    if not path:
        return None
    return [path] + (["--host", params["docker_host"]] if params["docker_host"] else [])


def image_identities(module, docker, refs):
    """{ref: {"Id": ..., "Labels": {...}} or None}."""
    found = dict.fromkeys(refs)
    if not refs or not docker:
        return found
    for ref in refs:
        rc, out, _err = module.run_command(docker + ["image", "inspect", "--format",
                                                     "{{json .Id}} {{json .Config.Labels}}", ref])
        if rc == 0 and out.strip():
            image_id, _sep, labels = out.strip().partition(" ")
            try:
                found[ref] = {"Id": json.loads(image_id), "Labels": json.loads(labels or "null") or {}}
            except ValueError:
                found[ref] = None
    return found


def group_members(name):
    """Sorted members of group name (listed ones and those whose primary group it is), None when it does not exist."""
    if not name:
        return None
    try:
        group = grp.getgrnam(name)
    except KeyError:
        return None
    members = set(group.gr_mem)
    members.update(user.pw_name for user in pwd.getpwall() if user.pw_gid == group.gr_gid)
    return sorted(members)


def apparmor_enabled(sys_root="/sys"):
    """Whether the kernel enforces AppArmor, by the two files dockerd checks (moby pkg/apparmor: HostSupports)."""
    if not os.path.isdir(os.path.join(sys_root, "kernel/security/apparmor")):
        return False
    try:
        with open(os.path.join(sys_root, "module/apparmor/parameters/enabled")) as handle:
            return handle.read().strip() == "Y"
    except (IOError, OSError):
        return False


def engine_info(module, docker, service):
    if service["active_state"] != "active" or not docker:
        return None
    rc, out, _err = module.run_command(docker + ["info", "--format", "{{json .}}"])
    if rc != 0:
        return None
    try:
        return json.loads(out)
    except ValueError:
        return None


def main():
    module = AnsibleModule(
        argument_spec=dict(
            packages=dict(type="list", elements="str", default=[]),
            daemon_json_path=dict(type="path", default="/etc/docker/daemon.json"),
            service_name=dict(type="str", default="docker"),
            docker_executable=dict(type="str", default="docker"),
            docker_host=dict(type="str"),
            engine_info=dict(type="bool", default=True),
            images=dict(type="list", elements="str", default=[]),
            group=dict(type="str"),
            archives=dict(type="list", elements="str", default=[]),
            files=dict(type="list", elements="path", default=[]),
            docker_config=dict(type="path", default="/root/.docker/config.json"),
            registry_logins=LOGINS_ARGUMENT_SPEC,
        ),
        supports_check_mode=True,
    )
    params = module.params
    packages = package_versions(module, params["packages"])
    service = service_state(module, params["service_name"])
    docker = docker_argv(module, params)
    module.exit_json(
        changed=False,
        packages=packages,
        installed_specs=sorted("%s=%s" % item for item in packages.items()),
        dockerd=dockerd_state(module),
        daemon_json=file_state(params["daemon_json_path"], daemon_json_mirrors),
        old_backups=old_backups(params["daemon_json_path"]),
        service=service,
        info=engine_info(module, docker, service) if params["engine_info"] else None,
        images=image_identities(module, docker, params["images"]),
        group_members=group_members(params["group"]),
        apparmor_enabled=apparmor_enabled(),
        archives=dict((path, archive_state(path)) for path in params["archives"]),
        files=dict((path, file_state(path)) for path in params["files"]),
        logins_differ=logins_differ(params["docker_config"], params["registry_logins"]),
        check_mode=module.check_mode,
        read=dict(packages=params["packages"], images=params["images"], archives=params["archives"],
                  docker_host=params["docker_host"] or ""),
    )


if __name__ == "__main__":
    main()
