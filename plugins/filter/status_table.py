# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""Fleet status as one fixed-width text table."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

try:
    from ansible.module_utils.common.text.converters import to_text
except ImportError:  # pragma: no cover - very old ansible-core
    to_text = str

from ansible_collections.aisbench.agent_runtime.plugins.plugin_utils._text_table import text_table

DEFAULT_COLUMNS = (
    ("host", "host"),
    ("container_state", "container"),
    ("restart_policy", "restart"),
    ("engine_version", "engine"),
    ("storage_driver", "storage"),
    ("storage_reason", "storage why"),
    ("inner_disk", "inner disk"),
    ("platform", "platform"),
    ("mounts_ok", "mounts"),
    ("api_key_present", "api key"),
    ("jobs_total", "jobs"),
    ("jobs_finished", "finished"),
    ("jobs_running", "running"),
    ("latest_jobs", "latest jobs"),
    ("jobs_damaged", "damaged"),
    ("harbor_version", "harbor"),
)
DEFAULT_TITLES = dict(DEFAULT_COLUMNS)


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _cell(value, missing, list_limit):
    if value is None:
        return None
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        value = ["%s=%s" % (to_text(k), _cell(v, missing, list_limit) or missing) for k, v in value.items()]
    if isinstance(value, (list, tuple)):
        items = [_cell(item, missing, list_limit) or missing for item in value]
        if not items:
            return None
        shown = items[:list_limit] if list_limit > 0 else items
        text = ", ".join(shown)
        if len(items) > len(shown):
            text += " +%d" % (len(items) - len(shown))
        return text
    text = " ".join(to_text(value).split())
    return text or None


def _cut(text, max_width):
    if max_width and len(text) > max_width:
        return text[:max(max_width - 3, 1)] + "..."
    return text


def status_table(rows, columns=None, titles=None, missing="-", max_width=64, list_limit=3):
    if not isinstance(rows, (list, tuple)):
        raise AnsibleFilterError("status_table expects a list of dicts (one per host), got %s" % type(rows).__name__)
    for index, row in enumerate(rows):
        if not isinstance(row, dict):
            raise AnsibleFilterError("status_table: item %d is a %s, not a dict" % (index, type(row).__name__))
    if columns is None:
        columns = [key for key, _title in DEFAULT_COLUMNS]
    if isinstance(columns, str) or not isinstance(columns, (list, tuple)) or not columns:
        raise AnsibleFilterError("status_table: columns must be a non-empty list of keys, got %r" % (columns,))
    columns = [to_text(column) for column in columns]
    if titles is not None and not isinstance(titles, dict):
        raise AnsibleFilterError("status_table: titles must be a dict of key to title, got %r" % (titles,))
    for name, value in (("max_width", max_width), ("list_limit", list_limit)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise AnsibleFilterError("status_table: %s must be an integer >= 0, got %r" % (name, value))
    if max_width and max_width < 4:
        raise AnsibleFilterError("status_table: max_width must be 0 (no limit) or at least 4, got %r" % max_width)
    missing = to_text(missing)

    headers = [to_text((titles or {}).get(column, DEFAULT_TITLES.get(column, column))) for column in columns]
    if len(set(headers)) != len(headers):
        raise AnsibleFilterError("status_table: two columns have the same title: %s" % ", ".join(headers))
    cells = []
    for row in rows:
        line = []
        for column in columns:
            text = _cell(row.get(column), missing, list_limit)
            line.append(_cut(text, max_width) if text is not None else missing)
        cells.append(line)
    # Right-align a column when every value it has is a number.
    numeric = set()
    for column, header in zip(columns, headers):
        values = [row.get(column) for row in rows if row.get(column) not in (None, "")]
        if values and all(_is_number(value) for value in values):
            numeric.add(header)
    return "\n".join(text_table(headers, cells, right=numeric, missing=missing))


def _start_key(job):
    """Newest first; a job without a (text) started_at sorts last instead of breaking the sort."""
    started = job.get("started_at")
    return (1, started) if isinstance(started, str) and started else (0, "")


def job_status(jobs):
    """Job columns of one status row from harbor_job_info's jobs, and a problem per job that cannot be read.

    Returns {'jobs_total', 'jobs_finished', 'jobs_running', 'jobs_damaged', 'latest_jobs', 'problems'}; a damaged
    job (symlink loop, unreadable or cut file, missing timestamps) is data, never an error of the whole row.
    """
    if not isinstance(jobs, list):
        raise AnsibleFilterError("job_status expects harbor_job_info's jobs list, got %s" % type(jobs).__name__)
    jobs = [job for job in jobs if isinstance(job, dict)]
    damaged = [job for job in jobs if job.get("error")]
    ordered = sorted(jobs, key=_start_key, reverse=True)
    return {
        "jobs_total": len(jobs),
        "jobs_finished": sum(1 for job in jobs if job.get("status") == "finished"),
        "jobs_running": sum(1 for job in jobs if job.get("status") == "unfinished"),
        "jobs_damaged": len(damaged),
        "latest_jobs": [to_text(job.get("name")) for job in ordered],
        "problems": ["job %s: %s" % (to_text(job.get("name")), to_text(job.get("error"))) for job in damaged],
    }


class FilterModule(object):
    def filters(self):
        return {"status_table": status_table, "job_status": job_status}
