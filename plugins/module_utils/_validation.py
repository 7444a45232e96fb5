# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""Input checks shared by filters, modules and roles (standard library only).

Each rule lives here once; roles reach it through the test plugins ``url`` and ``docker_host``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import re

_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOSTPORT = re.compile(r"^(?:(?P<name>" + _LABEL + r"(?:\." + _LABEL + r")*)|\[(?P<ipv6>[0-9A-Fa-f:.]+)\])(?::(?P<port>\d{1,5}))?\Z")
_URL = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?P<rest>.*)\Z", re.S)
_SPACE = re.compile(r"\s")
_USERINFO = re.compile(r"^[^@/?#\s]+\Z")


def _hostport_problem(hostport):
    match = _HOSTPORT.match(hostport)
    if not match:
        return "has no valid host"
    if match.group("ipv6") is not None:
        try:
            ipaddress.IPv6Address(match.group("ipv6"))
        except ValueError:
            return "has no valid host"
    port = match.group("port")
    if port is not None and not 0 < int(port) < 65536:
        return "has a port outside 1-65535"
    return None


def _either(names):
    names = list(names)
    return names[0] if len(names) == 1 else "%s or %s" % (", ".join(names[:-1]), names[-1])


def _kind(schemes):
    joined = _either("%s://" % scheme for scheme in schemes)
    return "%s %s URL" % ("an" if schemes[0] in ("http", "https") else "a", joined)


def _split(value, schemes, kind):
    """(problem, scheme, rest) of value as scheme://rest, scheme one of schemes; problem None when it parses."""
    if not isinstance(value, str) or not value:
        return "is empty or not a string", None, None
    match = _URL.match(value)
    if not match or match.group("scheme") not in schemes or _SPACE.search(value):
        return "is not %s" % kind, None, None
    return None, match.group("scheme"), match.group("rest")


def _userinfo_problem(authority, allowed, refused, malformed):
    """(problem, host[:port]) of an authority that may carry user[:secret]@ only when allowed."""
    if "@" not in authority:
        return None, authority
    if not allowed:
        return refused, None
    userinfo, hostport = authority.rsplit("@", 1)
    return (None if _USERINFO.match(userinfo) else malformed), hostport


def url_problem(value, schemes=("http", "https"), credentials=False):
    """Return why value is not a base URL of one of schemes, or None when it is one.

    http(s): host name, IPv4 or [IPv6], optional port 1-65535 and path; no query, no fragment, no whitespace;
    ``user:token@`` only when credentials is true (pip indexes). file: ``file:///`` and an absolute path.
    """
    schemes = tuple(schemes)
    problem, scheme, rest = _split(value, schemes, _kind(schemes))
    if problem:
        return problem
    if "?" in rest or "#" in rest:
        return "must not have a query or fragment"
    if scheme == "file":
        return None if rest.startswith("/") else "needs an absolute path (file:///...)"
    problem, hostport = _userinfo_problem(rest.split("/", 1)[0], credentials,
                                          "must not carry user:password@ credentials", "has malformed credentials")
    return problem or _hostport_problem(hostport)


def http_url_problem(value):
    """Return why value is not an http(s) URL, or None when it is one."""
    return url_problem(value, ("http", "https"))


def docker_host_problem(value, schemes=("unix", "tcp", "ssh")):
    """Return why value is not a Docker endpoint (unix:///path, tcp://host[:port], ssh://[user@]host[:port]), or None."""
    schemes = tuple(schemes)
    wanted = {"unix": "unix:///path", "tcp": "tcp://host[:port]", "ssh": "ssh://[user@]host[:port]"}
    problem, scheme, rest = _split(value, schemes, _either(wanted.get(name, name + "://") for name in schemes))
    if problem:
        return problem
    if scheme == "unix":
        return None if rest.startswith("/") and len(rest) > 1 else "needs an absolute socket path (unix:///...)"
    if "?" in rest or "#" in rest or rest.rstrip("/").count("/"):
        return "must be host[:port] without a path"
    problem, hostport = _userinfo_problem(rest.rstrip("/"), scheme == "ssh", "must not carry user@", "has a malformed user")
    return problem or _hostport_problem(hostport)


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
    if _SPACE.search(value):
        return "is not host[:port] (no scheme, no path)"
    problem = _hostport_problem(value)
    if problem == "has no valid host":
        return "is not host[:port] (no scheme, no path)"
    return problem


def registry_host_problem(value):
    """Return why value is not a registry host[:port] (a login's or a certs.d directory's name), or None."""
    if isinstance(value, str) and ("/" in value or "://" in value):
        return "is not host[:port] (no scheme, no path)"
    return registry_problem(value)
