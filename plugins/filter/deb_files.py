# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""Read package name and version from Debian package file names."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: deb_file_info
short_description: Package name and version of .deb files, from their file names
version_added: 0.1.0
description:
  - Parses Debian file names of the form C(name_version_arch.deb), where an epoch colon is written C(%3a)
    (as C(apt-get download) saves them).
  - A file named otherwise gets C(package=null) and a C(spec) that matches no installed package,
    so callers treat it as not installed.
positional: _input
options:
  _input:
    description: Paths of .deb files.
    type: list
    elements: path
    required: true
"""

EXAMPLES = r"""
wanted: "{{ ['/srv/debs/docker.io_20.10.24+dfsg1-1+deb12u1+b1_amd64.deb'] | aisbench.agent_runtime.deb_file_info }}"
# -> [{src: ..., file: docker.io_..., package: docker.io, version: 20.10.24+dfsg1-1+deb12u1+b1,
#      arch: amd64, spec: "docker.io=20.10.24+dfsg1-1+deb12u1+b1"}]
"""

RETURN = r"""
_value:
  description: One dict per file with src, file, package, version, arch and spec (C(package=version)).
  type: list
  elements: dict
"""

import posixpath
import re

from ansible.errors import AnsibleFilterError

_DEB_NAME = re.compile(r"^(?P<package>[a-z0-9][a-z0-9.+-]+)_(?P<version>[^_]+)_(?P<arch>[a-z0-9-]+)\.deb\Z")


def deb_file_info(paths):
    if not isinstance(paths, list):
        raise AnsibleFilterError("deb_file_info expects a list of .deb paths, got %r" % (paths,))
    infos = []
    for path in paths:
        if not isinstance(path, str) or not path.endswith(".deb"):
            raise AnsibleFilterError("deb_file_info: %r is not a .deb file path" % (path,))
        name = posixpath.basename(path)
        match = _DEB_NAME.match(name)
        if match:
            version = match.group("version").replace("%3a", ":").replace("%3A", ":")
            infos.append({
                "src": path, "file": name, "package": match.group("package"), "version": version,
                "arch": match.group("arch"), "spec": "%s=%s" % (match.group("package"), version),
            })
        else:
            infos.append({"src": path, "file": name, "package": None, "version": None, "arch": None,
                          "spec": "?unparsed:%s" % name})
    return infos


class FilterModule(object):
    def filters(self):
        return {"deb_file_info": deb_file_info}
