# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""Registries as the Docker engine uses them (standard library only).

- ``certs_dir_name``: the directory of ``/etc/docker/certs.d`` whose ``ca.crt`` dockerd trusts for a registry or mirror.
- ``probe``: ``GET <registry>/v2/`` from this host, its TLS checked the way dockerd checks it (the system's CAs plus the
  registry's own CA), and, given credentials, whether the registry takes them (Basic: the same GET with them; Bearer:
  the token endpoint the registry names, as ``docker login`` does).
- ``verdict``: one line a user can act on, naming the registry and the variable to fix.

The preflight_checks module (its registry_mirrors and registry_logins checks, which the docker_engine role runs before it
writes anything) is the one caller on the target.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import re
import socket
import ssl

try:
    import http.client as http_client
    import urllib.error as urllib_error
    import urllib.request as urllib_request
    from urllib.parse import urlencode, urlsplit
except ImportError:  # pragma: no cover - Python 2 is not supported on targets
    http_client = urllib_error = urllib_request = urlencode = urlsplit = None

_CHALLENGE_PARAM = re.compile(r'(\w+)="([^"]*)"')

# The registry_logins option of the modules that take the host's logins (doc fragment registry_logins).
LOGINS_ARGUMENT_SPEC = dict(type="list", elements="dict", default=[], options=dict(
    registry=dict(type="str", required=True),
    username=dict(type="str", required=True),
    password=dict(type="str", required=True, no_log=True),
))


def registry_url(registry):
    """A registry given as host[:port] is reached over https://; a URL stays as it is (without a trailing /)."""
    registry = str(registry).strip()
    return (registry if "://" in registry else "https://" + registry).rstrip("/")


def certs_dir_name(registry):
    """host[:port] of a registry or mirror URL: the certs.d directory dockerd reads its CA from."""
    return urlsplit(registry_url(registry)).netloc


def _context(ca_pem, validate_certs):
    context = ssl.create_default_context()
    if not validate_certs:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif ca_pem:
        # On top of the system's CAs, as dockerd does with certs.d/<host:port>/ca.crt.
        context.load_verify_locations(cadata=ca_pem)
    return context


def describe_error(exc):
    """(text, untrusted) of a failed connection; untrusted when the server's certificate did not verify."""
    reason = getattr(exc, "reason", None)
    if reason is not None and not isinstance(reason, str):
        exc = reason
    if isinstance(exc, ssl.SSLCertVerificationError):
        return "TLS certificate not trusted (certificate verify failed: %s)" % (exc.verify_message or exc.reason or exc), True
    if isinstance(exc, ssl.SSLError):
        return "TLS failed (%s)" % (exc.reason or exc), False
    if isinstance(exc, socket.timeout) or "timed out" in str(exc):
        return "timed out", False
    if isinstance(exc, socket.gaierror):
        return "its name does not resolve (%s)" % (exc.strerror or exc), False
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused", False
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__, False


def _get(url, timeout, context, headers=None):
    """(status, headers, error, untrusted) of one GET; an HTTP error status is an answer, not an error."""
    opener = urllib_request.build_opener(urllib_request.HTTPSHandler(context=context))
    request = urllib_request.Request(url, headers=headers or {}, method="GET")
    try:
        response = opener.open(request, timeout=timeout)
        try:
            return response.getcode(), response.headers, None, False
        finally:
            response.close()
    except urllib_error.HTTPError as exc:
        return exc.code, exc.headers, None, False
    except (urllib_error.URLError, OSError, http_client.HTTPException, ValueError) as exc:
        text, untrusted = describe_error(exc)
        return None, None, text, untrusted


def _challenge(headers):
    """(scheme, params) of a 401's WWW-Authenticate header, scheme lowercased ('' when there is none)."""
    value = (headers.get("WWW-Authenticate") if headers is not None else None) or ""
    scheme, _sep, rest = value.strip().partition(" ")
    return scheme.lower(), dict(_CHALLENGE_PARAM.findall(rest))


def probe(url, timeout=5, ca_pem=None, username=None, password=None, validate_certs=True):
    """GET <url>/v2/ once; with a username, also whether the registry takes the credentials.

    Returns {url, probed, status (int or None), api_version, error, untrusted, user, credentials}; credentials is
    None (not asked), "anonymous" (the registry needs none), "accepted", "refused" or "unknown: <why>".
    """
    base = registry_url(url)
    target = base + "/v2/"
    context = _context(ca_pem, validate_certs)
    status, headers, error, untrusted = _get(target, timeout, context)
    observed = dict(url=url, probed=target, status=status, error=error, untrusted=untrusted, ca_given=bool(ca_pem),
                    user=username, credentials=None,
                    api_version=headers.get("Docker-Distribution-API-Version") if headers is not None else None)
    if username is None or status not in (200, 401):
        return observed
    if status == 200:
        observed["credentials"] = "anonymous"
        return observed
    basic = "Basic " + base64.b64encode(("%s:%s" % (username, password or "")).encode("utf-8")).decode("ascii")
    scheme, params = _challenge(headers)
    if scheme == "basic":
        answer, _headers, error, _untrusted = _get(target, timeout, context, {"Authorization": basic})
    elif scheme == "bearer" and params.get("realm"):
        query = dict((key, params[key]) for key in ("service",) if key in params)
        query["account"] = username
        realm = params["realm"] + ("&" if "?" in params["realm"] else "?") + urlencode(query)
        answer, _headers, error, _untrusted = _get(realm, timeout, context, {"Authorization": basic})
    else:
        observed["credentials"] = "unknown: the registry asks for %r authentication" % (scheme or "no")
        return observed
    if answer == 200:
        observed["credentials"] = "accepted"
    elif answer in (401, 403):
        observed["credentials"] = "refused"
        observed["refused_status"] = answer
    else:
        observed["credentials"] = "unknown: %s" % (error or "HTTP %s" % answer)
    return observed


def verdict(observed, kind="registry", ca_variable="registry_ca_certificates", login_variable="registry_logins"):
    """(ok, line) for one probe: the registry (or mirror) named, what happened and what to fix."""
    name = observed["url"]
    where = certs_dir_name(name)
    if observed.get("status") is None:
        why = observed.get("error") or "no answer"
        if observed.get("untrusted"):
            ca_given = observed.get("ca_given")
            why += ("; the CA given in %s['%s'] does not sign its certificate" % (ca_variable, where) if ca_given
                    else "; give its CA in %s['%s']" % (ca_variable, where))
            return False, "%s %s: %s" % (kind, name, why)
        return False, "%s %s: not reachable: %s" % (kind, name, why)
    status = observed["status"]
    if status not in (200, 401):
        why = ("404: no /v2/ API at %s (not a registry, or not under this path: dockerd asks <mirror>/v2/...)"
               % observed.get("probed") if status == 404 else "HTTP %s" % status)
        return False, "%s %s: %s" % (kind, name, why)
    line = "%s %s: %s" % (kind, name, "200" if status == 200 else "401 auth required")
    if not observed.get("api_version"):
        line += ", no Docker-Distribution-API-Version header"
    credentials = observed.get("credentials")
    if credentials is None:
        return True, line
    user = observed.get("user")
    if credentials == "accepted":
        return True, "%s %s: accepted the credentials of user %s" % (kind, name, user)
    if credentials == "anonymous":
        return True, "%s %s: 200 without credentials (user %s not needed)" % (kind, name, user)
    if credentials == "refused":
        return False, "%s %s: refused the credentials of user %s (HTTP %s); fix them in %s" % (
            kind, name, user, observed.get("refused_status", 401), login_variable)
    return False, "%s %s: cannot tell whether it takes the credentials of user %s (%s)" % (
        kind, name, user, credentials[len("unknown: "):])
