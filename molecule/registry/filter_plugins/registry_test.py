# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""Filters of the registry scenario's verify (the test harness, not the collection)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# distribution's access log (gorilla's combined format): client - user [time] "METHOD URI PROTO" status size "ref" "agent"
_ACCESS = re.compile(r'^(?P<client>\S+) \S+ \S+ \[[^\]]+\] "(?P<method>[A-Z]+) (?P<uri>\S+) [^"]*" (?P<status>\d{3}) \S+ '
                     r'"[^"]*" "(?P<agent>[^"]*)"')
_V2 = re.compile(r"^/v2/(?P<repository>.+)/(?P<kind>manifests|blobs)/(?P<reference>[^/?]+)")


def registry_requests(log_text):
    """The v2 API requests of a registry's log: client, method, uri, status, agent, repository, kind, reference."""
    requests = []
    for line in (log_text or "").splitlines():
        match = _ACCESS.match(line)
        if not match:
            continue
        request = match.groupdict()
        request["status"] = int(request["status"])
        api = _V2.match(request["uri"])
        request.update(api.groupdict() if api else {"repository": None, "kind": None, "reference": None})
        requests.append(request)
    return requests


def bad_input_message(doc_text, case):
    """The message of case's row in docs/bad_input.md (the one backticked text of its message column)."""
    for line in doc_text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if cells and cells[0] == "`%s`" % case:
            header = _header_of(doc_text, line)
            messages = re.findall(r"`([^`]+)`", cells[header.index("message")])
            if len(messages) != 1:
                raise ValueError("row %s of docs/bad_input.md needs one `message`" % case)
            return messages[0]
    raise ValueError("docs/bad_input.md has no row %s" % case)


def _header_of(doc_text, row):
    header = None
    for line in doc_text.splitlines():
        if line.startswith("|") and header is None:
            header = [cell.strip().lower() for cell in line.strip().strip("|").split("|")]
        elif not line.startswith("|"):
            header = None
        if line == row:
            return header
    raise ValueError("no table header above %s" % row)


class FilterModule(object):
    def filters(self):
        return {"registry_requests": registry_requests, "bad_input_message": bad_input_message}
