# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0 (see LICENSE)
"""Fleet-wide nightly report from per-host harbor_job_info summaries (standard library only).

Layout of a report directory (see docs/fleet_report.md)::

    REPORT_DIR/NIGHT/hosts/HOST/summary.json   harbor_job_info's summary JSON, fetched from HOST
    REPORT_DIR/NIGHT/hosts/HOST/failure.json   {"host": HOST, "stage": STAGE, "error": TEXT}
    REPORT_DIR/NIGHT/fleet-report.{json,csv,md,html}
    REPORT_DIR/latest -> NIGHT                 newest night holding a fleet-report.json

Everything rendered here is a pure function of the inputs (no clock, no absolute paths
that change between runs), so a rerun on the same inputs gives byte-identical files.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import csv
import html
import io
import json
import os
import re

from ansible_collections.aisbench.agent_runtime.plugins.module_utils.harbor_results import read_regular_file

REPORT_FORMAT_VERSION = 1
REPORT_BASENAME = "fleet-report"
REPORT_FORMATS = ("json", "csv", "md", "html")
HOSTS_SUBDIR = "hosts"
SUMMARY_FILE = "summary.json"
FAILURE_FILE = "failure.json"
LATEST_LINK = "latest"
# Stage recorded for a host whose summary file cannot be used.
REPORT_STAGE = "report"
# "unscored": every trial of the row was cancelled, so it has no pass@1 to compare.
CHANGES = ("regressed", "improved", "new", "gone", "unchanged", "unscored")
NIGHT_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
COUNTERS = ("n_completed", "n_errored", "n_cancelled", "n_pass")
MAX_ERROR_CHARS = 500


class ReportError(Exception):
    """Bad input that stops the report (the module fails, nothing is written)."""


class InputError(Exception):
    """A per-host input that cannot be used (reported as that host's failure)."""


def night_problem(night):
    """Why night is not usable as a night id (a directory name), or None."""
    if not isinstance(night, str) or not NIGHT_PATTERN.match(night):
        return "use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"
    if night == LATEST_LINK or ".." in night:
        return "'latest' and '..' are reserved"
    return None


def _short(text):
    text = " ".join(str(text).split())
    return text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS - 3] + "..."


def _read_json(path, label):
    try:
        data = read_regular_file(path)  # never blocks on a FIFO
    except FileNotFoundError:
        raise InputError("%s is missing" % label)
    except OSError as exc:
        raise InputError("cannot read %s: %s" % (label, exc.strerror or exc))
    if not data.strip():
        raise InputError("%s is empty" % label)
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputError("%s is not UTF-8 text" % label)
    except ValueError as exc:
        raise InputError("%s is not valid JSON: %s" % (label, exc))


def _count(value, where):
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError("%s: expected a count, got %r" % (where, value))
    return value


def _label(value, where, optional=False):
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value:
        raise InputError("%s: expected a name, got %r" % (where, value))
    return value


# --- inputs ------------------------------------------------------------------------------

def load_summary(path):
    """Parse one harbor_job_info summary JSON into (rows, jobs); InputError when unusable.

    rows: one per (benchmark, agent, model) summed over the summary's jobs, from
    ``jobs[].evals`` (the same counters harbor_job_info's ``pass_at_1`` table sums, plus
    the exception types).
    """
    data = _read_json(path, SUMMARY_FILE)
    if not isinstance(data, dict) or not isinstance(data.get("jobs"), list):
        raise InputError("%s is not a harbor_job_info summary (no 'jobs' list)" % SUMMARY_FILE)
    rows = {}
    jobs = []
    for index, job in enumerate(data["jobs"]):
        where = "%s jobs[%d]" % (SUMMARY_FILE, index)
        if not isinstance(job, dict):
            raise InputError("%s is not an object" % where)
        evals = job.get("evals")
        if not isinstance(evals, list):
            raise InputError("%s has no 'evals' list" % where)
        jobs.append({
            "name": str(job.get("name")),
            "status": str(job.get("status")),
            "error": _short(job["error"]) if job.get("error") else None,
        })
        for eval_index, ev in enumerate(evals):
            ev_where = "%s.evals[%d]" % (where, eval_index)
            if not isinstance(ev, dict):
                raise InputError("%s is not an object" % ev_where)
            key = (_label(ev.get("benchmark"), ev_where + ".benchmark"), _label(ev.get("agent"), ev_where + ".agent"),
                   _label(ev.get("model"), ev_where + ".model", optional=True))
            row = rows.get(key)
            if row is None:
                row = rows[key] = _new_row(*key)
            for field in COUNTERS:
                row[field] += _count(ev.get(field, 0), "%s.%s" % (ev_where, field))
            exceptions = ev.get("exceptions") or {}
            if not isinstance(exceptions, dict):
                raise InputError("%s.exceptions is not an object" % ev_where)
            for name, number in exceptions.items():
                row["exceptions"][str(name)] = row["exceptions"].get(str(name), 0) + _count(number, ev_where + ".exceptions")
    return [_finish_row(rows[key]) for key in sorted(rows, key=_sort_key)], jobs


def load_failure(path):
    """Parse one failure record; InputError when unusable."""
    data = _read_json(path, FAILURE_FILE)
    if not isinstance(data, dict):
        raise InputError("%s is not an object" % FAILURE_FILE)
    return {"host": data.get("host"), "stage": data.get("stage"), "error": data.get("error")}


def discover_hosts(hosts_dir):
    """{host: {"summary": path or None, "failure": path or None}} from HOSTS_DIR/HOST/ directories."""
    found = {}
    try:
        entries = sorted(os.scandir(hosts_dir), key=lambda e: e.name)
    except FileNotFoundError:
        return found
    except OSError as exc:
        raise ReportError("cannot list %s: %s" % (hosts_dir, exc.strerror or exc))
    for entry in entries:
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = True  # a symlink loop: reading its summary reports why, per host
        if entry.name.startswith(".") or not is_dir:
            continue
        summary = os.path.join(entry.path, SUMMARY_FILE)
        failure = os.path.join(entry.path, FAILURE_FILE)
        found[entry.name] = {
            "summary": summary if os.path.lexists(summary) or not os.path.isdir(entry.path) else None,
            "failure": failure if os.path.lexists(failure) else None,
        }
    return found


def _sort_key(key):
    return tuple(part or "" for part in key)


def _new_row(benchmark, agent, model):
    row = {"benchmark": benchmark, "agent": agent, "model": model, "exceptions": {}}
    for field in COUNTERS:
        row[field] = 0
    return row


def _finish_row(row):
    # Cancelled trials never reached an outcome (as in harbor_job_info); errored ones count as failures.
    row["n_scored"] = max(row["n_completed"] - row["n_cancelled"], 0)
    row["pass_at_1"] = round(row["n_pass"] / row["n_scored"], 6) if row["n_scored"] else None
    row["exceptions"] = dict(sorted(row["exceptions"].items()))
    return row


def _display_path(path, base):
    """Path relative to base when it lies inside it, so reports do not depend on where they live."""
    absolute = os.path.abspath(path)
    base = os.path.abspath(base)
    if absolute == base or absolute.startswith(base.rstrip(os.sep) + os.sep):
        return os.path.relpath(absolute, base)
    return absolute


def _text(value):
    return None if value is None else _short(value)


DROPPED_STAGE = "dropped"
DROPPED_ERROR = "left the play (unreachable, or failed outside a rescue block); see the Ansible log"


def collect_hosts(night_dir, hosts_dir=None, summaries=None, failures=None, expected_hosts=None, dropped_hosts=None):
    """One entry per host, sorted by name.

    summaries: [{"host", "path"}]; failures: [{"host", "stage", "error"}] (records given
    inline); both win over what hosts_dir holds for the same host. expected_hosts without
    any input are listed as hosts without results. dropped_hosts (hosts that left the play)
    are failed at stage "dropped" unless they have a failure record of their own.
    """
    sources = {}
    if hosts_dir:
        for host, found in discover_hosts(hosts_dir).items():
            sources[host] = {"summary": found["summary"], "failure_file": found["failure"], "failure": None}
    for item in summaries or []:
        sources.setdefault(item["host"], {"summary": None, "failure_file": None, "failure": None})["summary"] = item["path"]
    for item in failures or []:
        entry = sources.setdefault(item["host"], {"summary": None, "failure_file": None, "failure": None})
        entry["failure"] = {"stage": item.get("stage"), "error": item.get("error")}
        entry["failure_file"] = None
    for host in expected_hosts or []:
        sources.setdefault(host, {"summary": None, "failure_file": None, "failure": None})
    for host in dropped_hosts or []:
        entry = sources.setdefault(host, {"summary": None, "failure_file": None, "failure": None})
        if entry["failure"] is None and entry["failure_file"] is None:
            entry["failure"] = {"stage": DROPPED_STAGE, "error": DROPPED_ERROR}

    hosts = []
    for host in sorted(sources):
        hosts.append(_host_entry(host, sources[host], night_dir))
    return hosts


def _host_entry(host, source, night_dir):
    entry = {
        "host": host,
        "status": "ok",
        "stage": None,
        "error": None,
        "reason": None,
        "summary": _display_path(source["summary"], night_dir) if source["summary"] else None,
        "jobs": [],
        "notes": [],
        "rows": [],
        "gone": [],
    }
    failure = source["failure"]
    if source["failure_file"]:
        try:
            failure = load_failure(source["failure_file"])
        except InputError as exc:
            failure = {"stage": REPORT_STAGE, "error": str(exc)}
        if failure.get("host") not in (None, host):
            entry["notes"].append("%s names host %s" % (FAILURE_FILE, _short(failure["host"])))
    if failure is not None:
        entry["status"] = "failed"
        entry["stage"] = _text(failure.get("stage")) or "unknown"
        entry["error"] = _text(failure.get("error")) or "no error recorded"

    if source["summary"]:
        try:
            rows, jobs = load_summary(source["summary"])
        except InputError as exc:
            if failure is None:
                entry.update(status="failed", stage=REPORT_STAGE, error=str(exc))
            else:
                entry["notes"].append(str(exc))
        else:
            entry["rows"] = rows
            entry["jobs"] = jobs
            for job in jobs:
                if job["error"]:
                    entry["notes"].append("job %s: %s" % (job["name"], job["error"]))
                elif job["status"] != "finished":
                    entry["notes"].append("job %s is %s" % (job["name"], job["status"]))
    _add_totals(entry)
    if entry["status"] == "ok" and not entry["n_scored"]:
        entry["status"] = "no_results"
        if not source["summary"]:
            entry["reason"] = "no %s and no %s" % (SUMMARY_FILE, FAILURE_FILE)
        elif not entry["jobs"]:
            entry["reason"] = "the summary lists no jobs"
        else:
            entry["reason"] = "no completed trials"
    return entry


def _add_totals(entry):
    for field in COUNTERS + ("n_scored",):
        entry[field] = sum(row[field] for row in entry["rows"])
    entry["pass_at_1"] = round(entry["n_pass"] / entry["n_scored"], 6) if entry["n_scored"] else None


def fleet_rows(hosts):
    """pass@1 per (benchmark, agent, model) over every host: sum of passes / sum of scored trials."""
    rows = {}
    for host in hosts:
        for row in host["rows"]:
            key = (row["benchmark"], row["agent"], row["model"])
            fleet = rows.get(key)
            if fleet is None:
                fleet = rows[key] = _new_row(*key)
                fleet["hosts"] = []
                fleet["host_pass_at_1"] = []
            for field in COUNTERS:
                fleet[field] += row[field]
            for name, number in row["exceptions"].items():
                fleet["exceptions"][name] = fleet["exceptions"].get(name, 0) + number
            fleet["hosts"].append(host["host"])
            if row["pass_at_1"] is not None:
                fleet["host_pass_at_1"].append(row["pass_at_1"])
    result = []
    for key in sorted(rows, key=_sort_key):
        row = _finish_row(rows[key])
        spread = row.pop("host_pass_at_1")
        row["n_hosts"] = len(row["hosts"])
        row["host_min_pass_at_1"] = min(spread) if spread else None
        row["host_max_pass_at_1"] = max(spread) if spread else None
        result.append(row)
    return result


# --- previous nights ---------------------------------------------------------------------

def report_nights(report_dir):
    """Night directories of report_dir that hold a fleet report, sorted by name."""
    try:
        names = os.listdir(report_dir)
    except OSError:
        return []
    report = REPORT_BASENAME + ".json"
    return sorted(name for name in names
                  if night_problem(name) is None and os.path.isfile(os.path.join(report_dir, name, report)))


def earlier_nights(report_dir, night):
    """Nights with a fleet report that sort before night, newest first."""
    return [name for name in reversed(report_nights(report_dir)) if name < night]


def load_report(path):
    """A fleet-report.json written by this code; InputError when unusable."""
    data = _read_json(path, os.path.basename(path))
    if not isinstance(data, dict) or data.get("format") != REPORT_FORMAT_VERSION:
        raise InputError("%s is not a fleet report of format %d" % (os.path.basename(path), REPORT_FORMAT_VERSION))
    fleet = data.get("fleet")
    hosts = data.get("hosts")
    if not isinstance(fleet, dict) or not isinstance(fleet.get("rows"), list) or not isinstance(hosts, list):
        raise InputError("%s lacks the fleet rows or hosts" % os.path.basename(path))
    return data


def find_previous(report_dir, night, previous_night=None):
    """(night id, report) of the night to compare with, or (None, None); plus warnings.

    previous_night names it; otherwise the latest earlier night with a usable report
    (unusable ones are skipped with a warning).
    """
    warnings = []
    candidates = [previous_night] if previous_night else earlier_nights(report_dir, night)
    for name in candidates:
        path = os.path.join(report_dir, name, REPORT_BASENAME + ".json")
        try:
            return name, load_report(path), warnings
        except InputError as exc:
            warnings.append("previous night %s skipped: %s" % (name, exc))
    return None, None, warnings


def _rows_by_key(rows):
    result = {}
    for row in rows or []:
        if isinstance(row, dict) and row.get("pass_at_1") is not None:
            result[(row.get("benchmark"), row.get("agent"), row.get("model"))] = row
    return result


def classify(current, previous, threshold, min_trials):
    """improved / regressed / unchanged for two pass@1 values (both scored)."""
    delta = round(current["pass_at_1"] - previous["pass_at_1"], 6)
    enough = current["n_scored"] >= min_trials and _as_count(previous.get("n_scored")) >= min_trials
    if not enough or delta == 0 or abs(delta) < threshold:
        return "unchanged", delta
    return ("improved" if delta > 0 else "regressed"), delta


def _as_count(value):
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def compare_rows(rows, previous_rows, threshold, min_trials):
    """Annotate rows with previous_pass_at_1, delta and change; return the gone rows."""
    previous = _rows_by_key(previous_rows)
    seen = set()
    for row in rows:
        key = (row["benchmark"], row["agent"], row["model"])
        before = previous.get(key)
        if row["pass_at_1"] is None:
            row.update(previous_pass_at_1=before["pass_at_1"] if before else None, delta=None, change="unscored")
            seen.add(key)
            continue
        if before is None:
            row.update(previous_pass_at_1=None, delta=None, change="new")
            continue
        seen.add(key)
        change, delta = classify(row, before, threshold, min_trials)
        row.update(previous_pass_at_1=before["pass_at_1"], delta=delta, change=change)
    gone = []
    for key in sorted(set(previous) - seen, key=_sort_key):
        before = previous[key]
        gone.append({
            "benchmark": key[0], "agent": key[1], "model": key[2], "change": "gone",
            "previous_pass_at_1": before["pass_at_1"], "previous_n_scored": _as_count(before.get("n_scored")),
        })
    return gone


# --- the report --------------------------------------------------------------------------

def build_report(night, hosts, previous_night=None, previous=None, threshold=0.05, min_trials=1, warnings=None):
    """The report document (also the content of fleet-report.json)."""
    rows = fleet_rows(hosts)
    previous_hosts = {}
    previous_failed = set()
    if previous is not None:
        for host in previous.get("hosts") or []:
            if isinstance(host, dict) and isinstance(host.get("host"), str):
                previous_hosts[host["host"]] = host
                if host.get("status") == "failed":
                    previous_failed.add(host["host"])
    gone = compare_rows(rows, previous["fleet"]["rows"], threshold, min_trials) if previous is not None else []
    if previous is None:
        for row in rows:
            row.update(previous_pass_at_1=None, delta=None, change="new" if row["pass_at_1"] is not None else "unscored")
    for host in hosts:
        before = previous_hosts.get(host["host"])
        # A host compares with its own previous rows; a failed or empty host is listed as such
        # instead of as a pile of "gone" rows.
        if before is not None and host["rows"]:
            host["gone"] = compare_rows(host["rows"], before.get("rows"), threshold, min_trials)
        else:
            for row in host["rows"]:
                row.update(previous_pass_at_1=None, delta=None,
                           change="new" if row["pass_at_1"] is not None else "unscored")
        host["failed_previous_night"] = host["host"] in previous_failed

    n_pass = sum(row["n_pass"] for row in rows)
    n_scored = sum(row["n_scored"] for row in rows)
    changes = {name: 0 for name in CHANGES}
    for row in rows:
        changes[row["change"]] += 1
    changes["gone"] = len(gone)
    statuses = {"ok": 0, "failed": 0, "no_results": 0}
    for host in hosts:
        statuses[host["status"]] += 1
    return {
        "format": REPORT_FORMAT_VERSION,
        "night": night,
        "previous_night": previous_night if previous is not None else None,
        "threshold": threshold,
        "min_trials": min_trials,
        "pass_at_1_definition": "passed trials / scored trials (completed minus cancelled; errored trials count as "
                                "failures), summed over hosts: the fleet value is not a mean of the hosts' values",
        "fleet": {
            "rows": rows,
            "gone": gone,
            "n_pass": n_pass,
            "n_scored": n_scored,
            "n_errored": sum(row["n_errored"] for row in rows),
            "pass_at_1": round(n_pass / n_scored, 6) if n_scored else None,
        },
        "counts": {
            "hosts": len(hosts),
            "hosts_ok": statuses["ok"],
            "hosts_failed": statuses["failed"],
            "hosts_no_results": statuses["no_results"],
            "changes": changes,
        },
        "hosts": hosts,
        "failed_hosts": [{"host": h["host"], "stage": h["stage"], "error": h["error"],
                          "failed_previous_night": h["failed_previous_night"]}
                         for h in hosts if h["status"] == "failed"],
        "no_result_hosts": [{"host": h["host"], "reason": h["reason"]} for h in hosts if h["status"] == "no_results"],
        "regressions": [_change_item(row) for row in rows if row["change"] == "regressed"],
        "host_regressions": [_change_item(row, host["host"]) for host in hosts for row in host["rows"]
                             if row["change"] == "regressed"],
        "warnings": list(warnings or []),
    }


def _change_item(row, host=None):
    item = {"benchmark": row["benchmark"], "agent": row["agent"], "model": row["model"],
            "pass_at_1": row["pass_at_1"], "previous_pass_at_1": row["previous_pass_at_1"], "delta": row["delta"]}
    if host is not None:
        item = dict(host=host, **item)
    return item


# --- rendering ---------------------------------------------------------------------------

def fmt_rate(value):
    return "-" if value is None else "%.3f" % value


def fmt_delta(value):
    return "-" if value is None else "%+.3f" % value


def fmt_exceptions(exceptions):
    return ", ".join("%s=%d" % item for item in sorted(exceptions.items()))


def text_table(headers, rows, right=(), missing="-"):
    """Fixed-width text table (list of lines): header, dashes, rows; right-aligns the named columns."""
    cells = [[missing if cell is None or cell == "" else " ".join(str(cell).split()) for cell in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for index, cell in enumerate(row):
            widths[index] = max(widths[index], len(cell))

    def line(values):
        parts = []
        for index, value in enumerate(values):
            parts.append(value.rjust(widths[index]) if headers[index] in right else value.ljust(widths[index]))
        return "  ".join(parts).rstrip()

    return [line(headers), "  ".join("-" * width for width in widths)] + [line(row) for row in cells]


def render_json(report):
    return json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


CSV_COLUMNS = ("scope", "host", "host_status", "benchmark", "agent", "model", "pass_at_1", "previous_pass_at_1",
               "delta", "change", "n_pass", "n_scored", "n_completed", "n_errored", "n_cancelled", "n_hosts",
               "exceptions", "stage", "error")


def _csv_cell(value):
    text = "" if value is None else str(value)
    # Spreadsheet formula guard: host, job and exception names come from the fleet.
    if text[:1] in ("=", "+", "-", "@", "\t", "\r"):
        try:
            float(text)
        except ValueError:
            return "'" + text
    return text


def render_csv(report):
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)

    def emit(values):
        writer.writerow([_csv_cell(values.get(column)) for column in CSV_COLUMNS])

    for row in report["fleet"]["rows"] + report["fleet"]["gone"]:
        emit(dict(row, scope="fleet", exceptions=fmt_exceptions(row.get("exceptions") or {})))
    for host in report["hosts"]:
        base = {"scope": "host", "host": host["host"], "host_status": host["status"], "stage": host["stage"],
                "error": host["error"] or host["reason"]}
        if not host["rows"]:
            emit(base)
        for row in host["rows"] + host["gone"]:
            emit(dict(base, **dict(row, exceptions=fmt_exceptions(row.get("exceptions") or {}))))
    return out.getvalue()


def _md(value):
    if value is None or value == "":
        return "-"
    return str(value).replace("\\", "\\\\").replace("|", "\\|").replace("`", "\\`").replace("\n", " ").replace("\r", " ")


def _md_table(headers, rows):
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(_md(cell) for cell in row) + " |" for row in rows]
    return lines


def _spread(row):
    if row.get("host_min_pass_at_1") is None:
        return "-"
    return "%s-%s" % (fmt_rate(row["host_min_pass_at_1"]), fmt_rate(row["host_max_pass_at_1"]))


def _intro(report):
    counts = report["counts"]
    lines = []
    if report["previous_night"]:
        lines.append("Compared with night %s: a change counts when pass@1 moves by at least %s and both nights scored "
                     "at least %d trial(s)." % (report["previous_night"], report["threshold"], report["min_trials"]))
    else:
        lines.append("No earlier night to compare with.")
    lines.append("Hosts: %d, with results %d, failed %d, without results %d." % (
        counts["hosts"], counts["hosts_ok"], counts["hosts_failed"], counts["hosts_no_results"]))
    lines.append("pass@1 = %s." % report["pass_at_1_definition"])
    return lines


def _fleet_table_rows(report):
    return [[r["benchmark"], r["agent"], r["model"], fmt_rate(r["pass_at_1"]), fmt_rate(r["previous_pass_at_1"]),
             fmt_delta(r["delta"]), r["change"], r["n_pass"], r["n_scored"], r["n_errored"], r["n_hosts"], _spread(r)]
            for r in report["fleet"]["rows"]]


FLEET_HEADERS = ["benchmark", "agent", "model", "pass@1", "previous", "delta", "change", "passed", "scored",
                 "errored", "hosts", "host range"]


HOST_TABLE_HEADERS = ["host", "status", "benchmark", "agent", "model", "pass@1", "previous", "delta", "change",
                      "passed", "scored", "errored", "exceptions"]


def _host_table_rows(report):
    """The per-host table (Markdown and HTML): (cells, change) for every row of every host."""
    table = []
    for host in report["hosts"]:
        for row in host["rows"] + host["gone"]:
            table.append(([host["host"], host["status"], row["benchmark"], row["agent"], row["model"],
                           fmt_rate(row.get("pass_at_1")), fmt_rate(row["previous_pass_at_1"]),
                           fmt_delta(row.get("delta")), row["change"], row.get("n_pass"), row.get("n_scored"),
                           row.get("n_errored"), fmt_exceptions(row.get("exceptions") or {})], row["change"]))
    return table


def render_markdown(report):
    fleet = report["fleet"]
    lines = ["# Fleet report %s" % _md(report["night"]), ""] + _intro(report) + ["", "## Fleet pass@1", ""]
    if fleet["rows"]:
        lines += _md_table(FLEET_HEADERS, _fleet_table_rows(report))
        lines += ["", "All benchmarks together: %s (%d of %d scored trials passed, %d errored)." % (
            fmt_rate(fleet["pass_at_1"]), fleet["n_pass"], fleet["n_scored"], fleet["n_errored"])]
    else:
        lines.append("No host reported a completed trial.")

    lines += ["", "## Regressions", ""]
    regressions = report["regressions"] + report["host_regressions"]
    if regressions:
        lines += _md_table(["scope", "benchmark", "agent", "model", "pass@1", "previous", "delta"],
                           [[r.get("host", "fleet"), r["benchmark"], r["agent"], r["model"], fmt_rate(r["pass_at_1"]),
                             fmt_rate(r["previous_pass_at_1"]), fmt_delta(r["delta"])] for r in regressions])
    else:
        lines.append("None.")

    changed = [r for r in fleet["rows"] if r["change"] in ("improved", "new")] + fleet["gone"]
    lines += ["", "## Improved, new and gone (fleet)", ""]
    if changed:
        lines += _md_table(["change", "benchmark", "agent", "model", "pass@1", "previous", "delta"],
                           [[r["change"], r["benchmark"], r["agent"], r["model"], fmt_rate(r.get("pass_at_1")),
                             fmt_rate(r["previous_pass_at_1"]), fmt_delta(r.get("delta"))] for r in changed])
    else:
        lines.append("None.")

    lines += ["", "## Failed hosts", ""]
    if report["failed_hosts"]:
        lines += _md_table(["host", "stage", "error", "failed the previous night"],
                           [[h["host"], h["stage"], h["error"], "yes" if h["failed_previous_night"] else "no"]
                            for h in report["failed_hosts"]])
    else:
        lines.append("None.")

    lines += ["", "## Hosts without results", ""]
    if report["no_result_hosts"]:
        lines += _md_table(["host", "reason"], [[h["host"], h["reason"]] for h in report["no_result_hosts"]])
    else:
        lines.append("None.")

    lines += ["", "## Per host", ""]
    host_rows = [cells for cells, _change in _host_table_rows(report)]
    if host_rows:
        lines += _md_table(HOST_TABLE_HEADERS, host_rows)
    else:
        lines.append("No host rows.")
    notes = [(h["host"], note) for h in report["hosts"] for note in h["notes"]]
    if notes or report["warnings"]:
        lines += ["", "## Notes", ""]
        lines += ["- %s" % _md(text) for text in report["warnings"]]
        lines += ["- %s: %s" % (_md(host), _md(note)) for host, note in notes]
    return "\n".join(lines) + "\n"


# --- HTML --------------------------------------------------------------------------------

def _h(value):
    return html.escape("-" if value is None or value == "" else str(value), quote=True)


def _html_table(headers, rows, classes=None):
    out = ["<table>", "<thead><tr>%s</tr></thead>" % "".join("<th>%s</th>" % _h(h) for h in headers), "<tbody>"]
    for index, row in enumerate(rows):
        css = (classes or [None] * len(rows))[index]
        out.append("<tr%s>%s</tr>" % (' class="%s"' % _h(css) if css else "", "".join("<td>%s</td>" % _h(c) for c in row)))
    out.append("</tbody></table>")
    return "\n".join(out)


CHART_LABEL_WIDTH = 220
CHART_BAR_WIDTH = 360
CHART_BAR_HEIGHT = 14
CHART_GAP = 4
BAR_COLOURS = {"fleet": "#1f4e79", "host": "#6fa8dc", "failed": "#cc4125"}


def _svg_chart(report):
    """One inline SVG: per (benchmark, agent, model), a fleet bar then one bar per host."""
    per_host = {}
    for host in report["hosts"]:
        for row in host["rows"]:
            per_host.setdefault((row["benchmark"], row["agent"], row["model"]), []).append((host, row))
    step = CHART_BAR_HEIGHT + CHART_GAP
    width = CHART_LABEL_WIDTH + CHART_BAR_WIDTH + 140
    parts = []
    y = 0
    for row in report["fleet"]["rows"]:
        key = (row["benchmark"], row["agent"], row["model"])
        title = " / ".join(part for part in key if part)
        y += step
        parts.append('<text x="0" y="%d" class="group">%s</text>' % (y, _h(title)))
        bars = [("fleet", row, "fleet")] + [(h["host"], r, "failed" if h["status"] == "failed" else "host")
                                            for h, r in per_host.get(key, [])]
        for label, bar, kind in bars:
            y += step
            value = bar["pass_at_1"]
            length = int(round((value or 0) * CHART_BAR_WIDTH))
            parts.append('<text x="%d" y="%d" text-anchor="end">%s</text>' % (CHART_LABEL_WIDTH - 6, y, _h(label)))
            parts.append('<rect x="%d" y="%d" width="%d" height="%d" fill="%s"><title>%s</title></rect>' % (
                CHART_LABEL_WIDTH, y - CHART_BAR_HEIGHT + 3, length, CHART_BAR_HEIGHT, BAR_COLOURS[kind],
                _h("%s %s: %s (%s/%s)" % (title, label, fmt_rate(value), bar["n_pass"], bar["n_scored"]))))
            parts.append('<text x="%d" y="%d">%s (%d/%d)</text>' % (
                CHART_LABEL_WIDTH + length + 6, y, _h(fmt_rate(value)), bar["n_pass"], bar["n_scored"]))
            previous = bar.get("previous_pass_at_1")
            if previous is not None:
                # A tick where the bar ended the previous night.
                x = CHART_LABEL_WIDTH + int(round(previous * CHART_BAR_WIDTH))
                parts.append('<line class="previous" x1="%d" y1="%d" x2="%d" y2="%d" stroke="#000" stroke-width="2">'
                             '<title>%s</title></line>' % (
                                 x, y - CHART_BAR_HEIGHT + 1, x, y + 5,
                                 _h("%s %s: previous night %s" % (title, label, fmt_rate(previous)))))
    y += step
    parts.append('<text x="0" y="%d">%s</text>' % (y, _h(
        "Bars: pass@1 tonight (fleet, then each host; red: a failed host's partial results)"
        + ("; black tick: night %s." % report["previous_night"] if report["previous_night"] else "."))))
    height = y + step
    axis = '<line x1="%d" y1="0" x2="%d" y2="%d" stroke="#999"/>' % (CHART_LABEL_WIDTH, CHART_LABEL_WIDTH, height)
    return ('<svg xmlns="http://www.w3.org/2000/svg" role="img" width="%d" height="%d" viewBox="0 0 %d %d">'
            '<title>pass@1 by benchmark and agent, fleet and per host</title>%s%s</svg>'
            % (width, height, width, height, axis, "".join(parts)))


HTML_STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; }
th { background: #eee; }
tr.regressed td { background: #f4cccc; }
tr.improved td { background: #d9ead3; }
tr.new td { background: #fff2cc; }
tr.gone td { color: #777; }
svg text { font-size: 11px; font-family: sans-serif; dominant-baseline: auto; }
svg text.group { font-weight: bold; }
"""


def render_html(report):
    fleet = report["fleet"]
    body = ["<h1>Fleet report %s</h1>" % _h(report["night"])]
    body += ["<p>%s</p>" % _h(line) for line in _intro(report)]
    body.append("<h2>Fleet pass@1</h2>")
    if fleet["rows"]:
        body.append(_html_table(FLEET_HEADERS, _fleet_table_rows(report), [r["change"] for r in fleet["rows"]]))
        body.append("<p>All benchmarks together: %s (%d of %d scored trials passed, %d errored).</p>" % (
            _h(fmt_rate(fleet["pass_at_1"])), fleet["n_pass"], fleet["n_scored"], fleet["n_errored"]))
        body.append("<h2>pass@1 chart</h2>")
        body.append("<figure>%s</figure>" % _svg_chart(report))
    else:
        body.append("<p>No host reported a completed trial.</p>")
    regressions = report["regressions"] + report["host_regressions"]
    body.append("<h2>Regressions</h2>")
    body.append(_html_table(["scope", "benchmark", "agent", "model", "pass@1", "previous", "delta"],
                            [[r.get("host", "fleet"), r["benchmark"], r["agent"], r["model"], fmt_rate(r["pass_at_1"]),
                              fmt_rate(r["previous_pass_at_1"]), fmt_delta(r["delta"])] for r in regressions],
                            ["regressed"] * len(regressions)) if regressions else "<p>None.</p>")
    if fleet["gone"]:
        body.append("<h2>Gone since the previous night</h2>")
        body.append(_html_table(["benchmark", "agent", "model", "previous pass@1"],
                                [[r["benchmark"], r["agent"], r["model"], fmt_rate(r["previous_pass_at_1"])]
                                 for r in fleet["gone"]], ["gone"] * len(fleet["gone"])))
    body.append("<h2>Failed hosts</h2>")
    body.append(_html_table(["host", "stage", "error", "failed the previous night"],
                            [[h["host"], h["stage"], h["error"], "yes" if h["failed_previous_night"] else "no"]
                             for h in report["failed_hosts"]]) if report["failed_hosts"] else "<p>None.</p>")
    body.append("<h2>Hosts without results</h2>")
    body.append(_html_table(["host", "reason"], [[h["host"], h["reason"]] for h in report["no_result_hosts"]])
                if report["no_result_hosts"] else "<p>None.</p>")
    body.append("<h2>Per host</h2>")
    host_table = _host_table_rows(report)
    host_rows = [cells for cells, _change in host_table]
    body.append(_html_table(HOST_TABLE_HEADERS, host_rows, [change for _cells, change in host_table])
                if host_rows else "<p>No host rows.</p>")
    notes = list(report["warnings"]) + ["%s: %s" % (h["host"], note) for h in report["hosts"] for note in h["notes"]]
    if notes:
        body.append("<h2>Notes</h2>")
        body.append("<ul>%s</ul>" % "".join("<li>%s</li>" % _h(note) for note in notes))
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Fleet report %s</title>\n"
            "<style>%s</style>\n</head>\n<body>\n%s\n</body>\n</html>\n"
            % (_h(report["night"]), HTML_STYLE, "\n".join(body)))


RENDERERS = {"json": render_json, "csv": render_csv, "md": render_markdown, "html": render_html}


def summary_lines(report, limit=20):
    """A short text summary for the Ansible output: fleet table, regressions, failed and empty hosts."""
    lines = ["Fleet report %s (previous: %s)" % (report["night"], report["previous_night"] or "none")]
    rows = _fleet_table_rows(report)
    if rows:
        lines += text_table(FLEET_HEADERS[:-1], [row[:-1] for row in rows],
                            right=("pass@1", "previous", "delta", "passed", "scored", "errored", "hosts"))
    else:
        lines.append("No host reported a completed trial.")
    regressions = report["regressions"] + report["host_regressions"]
    lines.append("Regressions: %d" % len(regressions))
    for item in regressions[:limit]:
        lines.append("  %s %s: %s -> %s (%s)" % (
            item.get("host", "fleet"), " / ".join(p for p in (item["benchmark"], item["agent"], item["model"]) if p),
            fmt_rate(item["previous_pass_at_1"]), fmt_rate(item["pass_at_1"]), fmt_delta(item["delta"])))
    lines.append("Failed hosts: %d" % len(report["failed_hosts"]))
    for item in report["failed_hosts"][:limit]:
        lines.append("  %s (%s): %s" % (item["host"], item["stage"], item["error"]))
    lines.append("Hosts without results: %d" % len(report["no_result_hosts"]))
    for item in report["no_result_hosts"][:limit]:
        lines.append("  %s: %s" % (item["host"], item["reason"]))
    return lines


# --- files -------------------------------------------------------------------------------

def report_paths(night_dir):
    return {fmt: os.path.join(night_dir, "%s.%s" % (REPORT_BASENAME, fmt)) for fmt in REPORT_FORMATS}


def render_all(report):
    return {fmt: RENDERERS[fmt](report).encode("utf-8") for fmt in REPORT_FORMATS}


def _current_bytes(path):
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def read_text(path):
    content = _current_bytes(path)
    return None if content is None else content.decode("utf-8", "replace")


def files_to_write(paths, contents):
    """Formats whose file is missing or differs from the new content."""
    return [fmt for fmt in REPORT_FORMATS if _current_bytes(paths[fmt]) != contents[fmt]]


def write_file(path, content, mode=0o644):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    try:
        with open(tmp, "wb") as handle:
            handle.write(content)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


def latest_night(report_dir, extra=None):
    """Newest night (by name) with a fleet report, counting extra as having one."""
    nights = set(report_nights(report_dir))
    if extra:
        nights.add(extra)
    return max(nights) if nights else None


def latest_problem(report_dir):
    path = os.path.join(report_dir, LATEST_LINK)
    if os.path.lexists(path) and not os.path.islink(path):
        return "%s exists and is not a symlink; move it away so the module can maintain the link" % path
    return None


def latest_needs_update(report_dir, night):
    """(link path, target) when REPORT_DIR/latest must change to point at the newest night, else (path, None)."""
    path = os.path.join(report_dir, LATEST_LINK)
    target = latest_night(report_dir, night)
    if os.path.islink(path) and os.readlink(path) == target:
        return path, None
    return path, target


def point_latest(path, target):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    if os.path.lexists(tmp):
        os.unlink(tmp)
    os.symlink(target, tmp)
    os.replace(tmp, path)
