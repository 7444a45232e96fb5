# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""Input checks shared by filters, modules and roles (standard library only)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import re

_HOST = r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*"
_HTTP_URL = re.compile(r"^https?://(?:" + _HOST + r"|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?(?:/[^\s]*)?\Z")
_REGISTRY = re.compile(r"^(?:" + _HOST + r"|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?\Z")


def http_url_problem(value):
    """Return why value is not an http(s) URL, or None when it is one."""
    if not isinstance(value, str) or not value:
        return "is empty or not a string"
    match = _HTTP_URL.match(value)
    if not match:
        return "is not an http:// or https:// URL"
    port = match.group(1)
    if port is not None and not 0 < int(port) < 65536:
        return "has a port outside 1-65535"
    return None


def registry_problem(value):
    """Return why value is not a registry host[:port] or CIDR, or None when it is one."""
    if not isinstance(value, str) or not value:
        return "is empty or not a string"
    if "/" in value:
        try:
            ipaddress.ip_network(value, strict=False)
            return None
        except ValueError:
            return "is neither host[:port] nor a CIDR network"
    match = _REGISTRY.match(value)
    if not match:
        return "is not host[:port] (no scheme, no path)"
    port = match.group(1)
    if port is not None and not 0 < int(port) < 65536:
        return "has a port outside 1-65535"
    return None
