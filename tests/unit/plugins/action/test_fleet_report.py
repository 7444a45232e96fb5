"""fleet_report on real harbor_job_summary output.

Every per-host summary.json here is written by harbor_results.write_reports (the code behind
harbor_job_summary) from the real Harbor job directories in tests/fixtures/harbor/jobs,
then placed where the nightly playbook fetches it. Previous nights are made by running the module
on an earlier night's summaries, never written by hand. Damaged inputs are damaged copies.

Fixture jobs: pass-fail (hello/oracle 1 of 2), errored (broken/oracle 0 of 2 errored, hello/oracle
1 of 1), two-agents (hello/nop 0 of 2, hello/oracle 1 of 2), nop-with-model (hello/nop/acme/fake-model-1
0 of 2), running (no trial finished), resumed (hello/oracle 1 of 2, slow/oracle 1 of 1).

Its tests that start a process: tests/integration/plays/test_fleet_report_nightly.py.
"""
import csv
import hashlib
import json
import os
import shutil
import time
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible_collections.aisbench.agent_runtime.plugins.action import fleet_report as action
from ansible_collections.aisbench.agent_runtime.plugins.plugin_utils import _fleet_report as fr
from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _harbor_results as hr

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".."))
FIXTURE_JOBS = os.path.join(ROOT, "tests", "fixtures", "harbor", "jobs")
NIGHT1 = "2026-12-01"
NIGHT2 = "2026-12-02"
FORMATS = ("md", "csv", "json", "html")


# --- helpers -------------------------------------------------------------------------------


def harbor_summary(output_dir, jobs, timestamp="20261202-060000"):
    """Write harbor_job_summary's JSON (with details, its default) for the given fixture jobs; return its path."""
    return hr.write_reports(hr.summarize(FIXTURE_JOBS, jobs, details=True), str(output_dir), ["json"], timestamp)["json"]


def put_summary(report_dir, night, host, jobs):
    """A host's summary where the nightly playbook fetches it: NIGHT/hosts/HOST/summary.json."""
    host_dir = os.path.join(str(report_dir), night, "hosts", host)
    os.makedirs(host_dir, exist_ok=True)
    path = harbor_summary(host_dir, jobs)
    os.replace(path, os.path.join(host_dir, "summary.json"))
    return os.path.join(host_dir, "summary.json")


def put_failure(report_dir, night, host, stage, error):
    host_dir = os.path.join(str(report_dir), night, "hosts", host)
    os.makedirs(host_dir, exist_ok=True)
    with open(os.path.join(host_dir, "failure.json"), "w") as handle:
        json.dump({"host": host, "stage": stage, "error": error}, handle)


def put_raw(report_dir, night, host, name, data):
    host_dir = os.path.join(str(report_dir), night, "hosts", host)
    os.makedirs(host_dir, exist_ok=True)
    with open(os.path.join(host_dir, name), "wb") as handle:
        handle.write(data)


RENDER_HTML = action.html_renderer()


def run_module(capsys, args, check=False, diff=False):
    """The action plugin's work (argument spec, then run_report) as (rc, result), like a module run."""
    del capsys
    validated = ArgumentSpecValidator(action.ARGUMENT_SPEC).validate(args)
    if validated.error_messages:
        return 1, {"failed": True, "msg": "; ".join(validated.error_messages)}
    try:
        result = action.run_report(validated.validated_parameters, check_mode=check, diff=diff, render_html=RENDER_HTML)
    except action.FleetReportError as exc:
        return 1, dict(exc.result, failed=True, msg=str(exc))
    return 0, json.loads(json.dumps(result))


def night_one(report_dir):
    put_summary(report_dir, NIGHT1, "host-a", ["pass-fail"])
    put_summary(report_dir, NIGHT1, "host-b", ["two-agents"])
    put_summary(report_dir, NIGHT1, "host-c", ["errored"])
    put_summary(report_dir, NIGHT1, "host-d", ["nop-with-model"])


def night_two(report_dir):
    put_summary(report_dir, NIGHT2, "host-a", ["resumed"])
    put_summary(report_dir, NIGHT2, "host-b", ["errored"])
    put_failure(report_dir, NIGHT2, "host-c", "wait", "harbor_job: timeout after 43200 s, 3 of 10 trials done")
    put_raw(report_dir, NIGHT2, "host-d", "summary.json", b'{"jobs": [{"name": "nightly", "evals": [')
    put_summary(report_dir, NIGHT2, "host-e", ["running"])


def load_json(path):
    with open(path) as handle:
        return json.load(handle)


def rows_by_key(rows):
    return {(r["benchmark"], r["agent"], r["model"]): r for r in rows}


def digest(night_dir):
    result = {}
    for fmt in FORMATS:
        with open(os.path.join(night_dir, "fleet-report." + fmt), "rb") as handle:
            result[fmt] = hashlib.sha256(handle.read()).hexdigest()
    return result


@pytest.fixture
def report_dir(tmp_path):
    path = tmp_path / "reports"
    path.mkdir()
    return str(path)


@pytest.fixture
def two_nights(capsys, report_dir):
    night_one(report_dir)
    rc, first = run_module(capsys, {"report_dir": report_dir, "night": NIGHT1})
    assert rc == 0 and first["changed"] is True
    night_two(report_dir)
    return report_dir


# --- a first night -------------------------------------------------------------------------


def test_first_night_has_no_comparison_and_every_row_is_new(capsys, report_dir):
    night_one(report_dir)
    rc, result = run_module(capsys, {"report_dir": report_dir, "night": NIGHT1})
    assert rc == 0 and result["changed"] is True
    assert result["previous_night"] is None
    night_dir = os.path.join(report_dir, NIGHT1)
    assert result["files"] == {fmt: os.path.join(night_dir, "fleet-report." + fmt) for fmt in FORMATS}
    for path in result["files"].values():
        assert os.path.getsize(path) > 0
    fleet = rows_by_key(result["fleet"])
    # hello/oracle: host-a 1/2, host-b 1/2, host-c 1/1 -> 3/5 (the hosts' mean would be 0.667).
    assert fleet[("hello", "oracle", None)]["pass_at_1"] == 0.6
    assert fleet[("hello", "oracle", None)]["n_completed"] == 5
    assert fleet[("hello", "oracle", None)]["n_hosts"] == 3
    assert fleet[("hello", "nop", "acme/fake-model-1")]["n_completed"] == 2
    assert fleet[("broken", "oracle", None)]["n_errored"] == 2
    assert {row["change"] for row in result["fleet"]} == {"new"}
    assert result["regressions"] == [] and result["failed_hosts"] == [] and result["no_result_hosts"] == []
    # 3 + 0 + 0 + 0 passes over 5 + 2 + 2 + 2 scored trials, all benchmarks together
    assert result["fleet_pass_at_1"] == round(3 / 11, 6)
    assert os.readlink(os.path.join(report_dir, "latest")) == NIGHT1
    assert result["latest"] == os.path.join(report_dir, "latest")


def test_fleet_pass_at_1_is_a_sum_not_a_mean_of_means(capsys, two_nights):
    rc, result = run_module(capsys, {"report_dir": two_nights, "night": NIGHT2})
    assert rc == 0
    row = rows_by_key(result["fleet"])[("hello", "oracle", None)]
    # host-a 1/2 (0.5) and host-b 1/1 (1.0): fleet 2/3, not (0.5 + 1.0) / 2
    assert (row["n_pass"], row["n_completed"], row["pass_at_1"]) == (2, 3, 0.666667)
    report = load_json(result["files"]["json"])
    fleet_row = rows_by_key(report["fleet"]["rows"])[("hello", "oracle", None)]
    assert (fleet_row["host_min_pass_at_1"], fleet_row["host_max_pass_at_1"]) == (0.5, 1.0)
    assert fleet_row["hosts"] == ["host-a", "host-b"]
    assert "not a mean" in report["pass_at_1_definition"]
    with open(result["files"]["md"]) as handle:
        assert "not a mean of the hosts' values" in handle.read()


# --- the comparison ------------------------------------------------------------------------


def test_second_night_improved_new_gone_failed_corrupt_and_empty_hosts(capsys, two_nights):
    rc, result = run_module(capsys, {"report_dir": two_nights, "night": NIGHT2, "expected_hosts": ["host-f"]})
    assert rc == 0 and result["changed"] is True
    assert result["previous_night"] == NIGHT1
    fleet = rows_by_key(result["fleet"])
    hello = fleet[("hello", "oracle", None)]
    assert (hello["previous_pass_at_1"], hello["delta"], hello["change"]) == (0.6, 0.066667, "improved")
    assert fleet[("slow", "oracle", None)]["change"] == "new"
    assert fleet[("broken", "oracle", None)]["change"] == "unchanged"
    assert fleet[("broken", "oracle", None)]["delta"] == 0.0
    report = load_json(result["files"]["json"])
    gone = [(r["benchmark"], r["agent"], r["model"]) for r in report["fleet"]["gone"]]
    assert gone == [("hello", "nop", None), ("hello", "nop", "acme/fake-model-1")]
    assert result["counts"]["changes"] == {"improved": 1, "new": 1, "unchanged": 1, "gone": 2, "regressed": 0}

    failed = {h["host"]: h for h in result["failed_hosts"]}
    assert set(failed) == {"host-c", "host-d"}
    assert failed["host-c"]["stage"] == "wait"
    assert failed["host-c"]["error"] == "harbor_job: timeout after 43200 s, 3 of 10 trials done"
    assert failed["host-d"]["stage"] == "report"
    assert failed["host-d"]["error"].startswith("summary.json is not valid JSON")
    assert result["no_result_hosts"] == [
        {"host": "host-e", "reason": "no completed trials"},
        {"host": "host-f", "reason": "no summary.json and no failure.json"},
    ]
    assert result["counts"]["hosts"] == 6
    assert (result["counts"]["hosts_ok"], result["counts"]["hosts_failed"], result["counts"]["hosts_no_results"]) == (2, 2, 2)

    hosts = {h["host"]: h for h in report["hosts"]}
    host_b = rows_by_key(hosts["host-b"]["rows"])
    assert host_b[("hello", "oracle", None)]["change"] == "improved"      # 1/2 -> 1/1
    assert host_b[("hello", "oracle", None)]["delta"] == 0.5
    assert host_b[("broken", "oracle", None)]["change"] == "new"
    assert [r["agent"] for r in hosts["host-b"]["gone"]] == ["nop"]
    assert rows_by_key(hosts["host-a"]["rows"])[("hello", "oracle", None)]["change"] == "unchanged"
    assert hosts["host-e"]["notes"] == ["job running is unfinished"]
    assert hosts["host-c"]["rows"] == [] and hosts["host-c"]["gone"] == []


def test_swapped_nights_show_the_regressions(capsys, report_dir):
    # Night two's inputs first, then night one's: hello/oracle goes 2/3 -> 3/5.
    put_summary(report_dir, NIGHT1, "host-a", ["resumed"])
    put_summary(report_dir, NIGHT1, "host-b", ["errored"])
    put_failure(report_dir, NIGHT1, "host-c", "unreachable", "ssh: connect to host host-c port 22: No route to host")
    assert run_module(capsys, {"report_dir": report_dir, "night": NIGHT1})[0] == 0
    put_summary(report_dir, NIGHT2, "host-a", ["pass-fail"])
    put_summary(report_dir, NIGHT2, "host-b", ["two-agents"])
    put_failure(report_dir, NIGHT2, "host-c", "unreachable", "ssh: connect to host host-c port 22: No route to host")
    rc, result = run_module(capsys, {"report_dir": report_dir, "night": NIGHT2})
    assert rc == 0
    assert result["regressions"] == [{"benchmark": "hello", "agent": "oracle", "model": None,
                                      "pass_at_1": 0.5, "previous_pass_at_1": 0.666667, "delta": -0.166667}]
    assert result["host_regressions"] == [{"host": "host-b", "benchmark": "hello", "agent": "oracle", "model": None,
                                           "pass_at_1": 0.5, "previous_pass_at_1": 1.0, "delta": -0.5}]
    assert result["failed_hosts"] == [{"host": "host-c", "stage": "unreachable",
                                       "error": "ssh: connect to host host-c port 22: No route to host",
                                       "failed_previous_night": True}]
    assert "Regressions: 2" in result["summary_lines"]
    assert "  fleet hello / oracle: 0.667 -> 0.500 (-0.167)" in result["summary_lines"]
    assert "  host-c (unreachable): ssh: connect to host host-c port 22: No route to host" in result["summary_lines"]
    with open(result["files"]["md"]) as handle:
        markdown = handle.read()
    assert "| host-b | hello | oracle | - | 0.500 | 1.000 | -0.500 |" in markdown
    assert "| host-c | unreachable | ssh: connect to host host-c port 22: No route to host | yes |" in markdown


def test_threshold_and_min_trials(capsys, two_nights):
    rc, result = run_module(capsys, {"report_dir": two_nights, "night": NIGHT2, "threshold": 0.1})
    hello = rows_by_key(result["fleet"])[("hello", "oracle", None)]
    assert (hello["delta"], hello["change"]) == (0.066667, "unchanged")
    rc, result = run_module(capsys, {"report_dir": two_nights, "night": NIGHT2, "threshold": 0.066667})
    assert rows_by_key(result["fleet"])[("hello", "oracle", None)]["change"] == "improved"
    # 3 scored trials tonight: with min_trials 4 the move does not count.
    rc, result = run_module(capsys, {"report_dir": two_nights, "night": NIGHT2, "threshold": 0.0, "min_trials": 4})
    assert rows_by_key(result["fleet"])[("hello", "oracle", None)]["change"] == "unchanged"
    rc, result = run_module(capsys, {"report_dir": two_nights, "night": NIGHT2, "threshold": 0.0, "min_trials": 3})
    assert rows_by_key(result["fleet"])[("hello", "oracle", None)]["change"] == "improved"


def test_previous_is_the_latest_earlier_night_with_a_usable_report(capsys, two_nights):
    # An older night and a later one must not be picked; a damaged report is skipped with a warning.
    put_summary(two_nights, "2026-11-30", "host-a", ["two-agents"])
    assert run_module(capsys, {"report_dir": two_nights, "night": "2026-11-30"})[0] == 0
    put_summary(two_nights, "2026-12-03", "host-a", ["two-agents"])
    assert run_module(capsys, {"report_dir": two_nights, "night": "2026-12-03"})[0] == 0
    rc, result = run_module(capsys, {"report_dir": two_nights, "night": NIGHT2})
    assert result["previous_night"] == NIGHT1
    with open(os.path.join(two_nights, NIGHT1, "fleet-report.json"), "w") as handle:
        handle.write('{"format": 1, "fleet": ')
    rc, result = run_module(capsys, {"report_dir": two_nights, "night": NIGHT2})
    assert rc == 0 and result["previous_night"] == "2026-11-30"
    assert result["report_warnings"][0].startswith("previous night 2026-12-01 skipped: fleet-report.json is not valid JSON")
    # A named previous night without a usable report is an error.
    rc, result = run_module(capsys, {"report_dir": two_nights, "night": NIGHT2, "previous_night": NIGHT1})
    assert rc == 1 and "previous_night 2026-12-01" in result["msg"]
    rc, result = run_module(capsys, {"report_dir": two_nights, "night": NIGHT2, "previous_night": "2026-11-30"})
    assert rc == 0 and result["previous_night"] == "2026-11-30"


# --- damaged inputs ------------------------------------------------------------------------

DAMAGED = [
    (b"", "summary.json is empty"),
    (b'{"jobs": [', "summary.json is not valid JSON"),
    (b"[1, 2]", "is not a harbor_job_summary file"),
    (b'{"pass_at_1": []}', "is not a harbor_job_summary file"),
    (b'{"jobs": [42]}', "jobs[0] is not an object"),
    (b'{"jobs": [{"name": "x"}]}', "jobs[0] has no 'evals' list"),
    (b'{"jobs": [{"name": "x", "evals": [{"benchmark": "hello", "agent": "oracle", "n_pass": "7"}]}]}',
     "jobs[0].evals[0].n_pass: expected a count"),
    (b'{"jobs": [{"name": "x", "evals": [{"benchmark": "hello", "agent": "oracle", "n_pass": -1}]}]}',
     "expected a count, got -1"),
    (b'{"jobs": [{"name": "x", "evals": [{"benchmark": null, "agent": "oracle"}]}]}', "benchmark: expected a name"),
    (b'{"jobs": [{"name": "x", "evals": [{"benchmark": "b", "agent": "a", "exceptions": [1]}]}]}',
     "exceptions is not an object"),
    (b"\xff\xfe{}", "summary.json is not UTF-8 text"),
]


@pytest.mark.parametrize("content, message", DAMAGED)
def test_damaged_summary_is_that_hosts_failure(capsys, two_nights, content, message):
    put_raw(two_nights, NIGHT2, "host-d", "summary.json", content)
    rc, result = run_module(capsys, {"report_dir": two_nights, "night": NIGHT2})
    assert rc == 0
    failed = {h["host"]: h for h in result["failed_hosts"]}
    assert failed["host-d"]["stage"] == "report"
    assert message in failed["host-d"]["error"]
    assert {r["benchmark"] for r in result["fleet"]} == {"hello", "broken", "slow"}


def test_unreadable_summary_and_failure_record(capsys, two_nights):
    os.unlink(os.path.join(two_nights, NIGHT2, "hosts", "host-d", "summary.json"))
    os.mkdir(os.path.join(two_nights, NIGHT2, "hosts", "host-d", "summary.json"))
    put_raw(two_nights, NIGHT2, "host-g", "failure.json", b"not json")
    put_raw(two_nights, NIGHT2, "host-h", "failure.json", b'{"host": "someone-else"}')
    rc, result = run_module(capsys, {"report_dir": two_nights, "night": NIGHT2})
    assert rc == 0
    failed = {h["host"]: h for h in result["failed_hosts"]}
    assert failed["host-d"]["error"].startswith("cannot read summary.json")
    assert failed["host-g"]["stage"] == "report" and "failure.json is not valid JSON" in failed["host-g"]["error"]
    assert (failed["host-h"]["stage"], failed["host-h"]["error"]) == ("unknown", "no error recorded")
    report = load_json(result["files"]["json"])
    host_h = [h for h in report["hosts"] if h["host"] == "host-h"][0]
    assert host_h["notes"] == ["failure.json names host someone-else"]


def test_failed_host_keeps_its_partial_results(capsys, two_nights):
    put_summary(two_nights, NIGHT2, "host-c", ["interrupted"])
    rc, result = run_module(capsys, {"report_dir": two_nights, "night": NIGHT2})
    report = load_json(result["files"]["json"])
    host_c = [h for h in report["hosts"] if h["host"] == "host-c"][0]
    assert host_c["status"] == "failed" and host_c["stage"] == "wait"
    # interrupted: slow/oracle, 1 completed trial that was cancelled: it counts as a failure, as in Harbor's mean
    assert [(r["benchmark"], r["n_completed"], r["n_cancelled"], r["pass_at_1"], r["change"]) for r in host_c["rows"]] == [
        ("slow", 1, 1, 0.0, "new")]
    assert host_c["notes"] == ["job interrupted is unfinished"]
    slow = rows_by_key(result["fleet"])[("slow", "oracle", None)]
    assert (slow["n_pass"], slow["n_completed"], slow["n_cancelled"], slow["n_hosts"]) == (1, 2, 1, 2)


def test_explicit_inputs_win_over_the_hosts_directory(capsys, two_nights, tmp_path):
    elsewhere = harbor_summary(tmp_path, ["pass-fail"])
    rc, result = run_module(capsys, {
        "report_dir": two_nights, "night": NIGHT2,
        "summaries": [{"host": "host-d", "path": elsewhere}, {"host": "host-x", "path": elsewhere}],
        "failures": [{"host": "host-c", "stage": "unreachable", "error": "host down"},
                     {"host": "host-y", "error": "no stage given"}],
    })
    assert rc == 0
    failed = {h["host"]: (h["stage"], h["error"]) for h in result["failed_hosts"]}
    assert failed == {"host-c": ("unreachable", "host down"), "host-y": ("unknown", "no stage given")}
    report = load_json(result["files"]["json"])
    hosts = {h["host"]: h for h in report["hosts"]}
    assert hosts["host-d"]["status"] == "ok" and hosts["host-d"]["summary"] == elsewhere
    assert hosts["host-a"]["summary"] == os.path.join("hosts", "host-a", "summary.json")


def test_dropped_hosts_are_failed_unless_they_recorded_why(capsys, two_nights):
    rc, result = run_module(capsys, {"report_dir": two_nights, "night": NIGHT2,
                                     "dropped_hosts": ["host-c", "host-z"], "expected_hosts": ["host-z"]})
    assert rc == 0
    failed = {h["host"]: (h["stage"], h["error"]) for h in result["failed_hosts"]}
    assert failed["host-c"] == ("wait", "harbor_job: timeout after 43200 s, 3 of 10 trials done")
    assert failed["host-z"] == ("dropped", fr.DROPPED_ERROR)
    assert "host-z" not in [h["host"] for h in result["no_result_hosts"]]


def test_summaries_alone_without_a_hosts_directory(capsys, report_dir, tmp_path):
    path = harbor_summary(tmp_path, ["pass-fail", "two-agents"])
    rc, result = run_module(capsys, {"report_dir": report_dir, "night": NIGHT1,
                                     "summaries": [{"host": "only", "path": path}]})
    assert rc == 0
    # The same job summed over two jobs on one host: hello/oracle 1/2 + 1/2.
    assert rows_by_key(result["fleet"])[("hello", "oracle", None)]["n_completed"] == 4


# --- idempotence, check mode, diff, latest ---------------------------------------------------


def test_rerun_is_byte_identical_and_unchanged(capsys, two_nights):
    args = {"report_dir": two_nights, "night": NIGHT2, "expected_hosts": ["host-f"]}
    assert run_module(capsys, args)[1]["changed"] is True
    night_dir = os.path.join(two_nights, NIGHT2)
    first = digest(night_dir)
    mtimes = {fmt: os.stat(os.path.join(night_dir, "fleet-report." + fmt)).st_mtime_ns for fmt in FORMATS}
    # Until a file written now gets another mtime than the reports (the file system's clock has moved on), so an
    # unchanged mtime below means "not rewritten".
    probe = os.path.join(str(two_nights), "mtime-probe")
    while True:
        with open(probe, "w") as handle:
            handle.write("x")
        if os.stat(probe).st_mtime_ns > max(mtimes.values()):
            break
    os.unlink(probe)
    rc, result = run_module(capsys, args)
    assert rc == 0 and result["changed"] is False
    assert digest(night_dir) == first
    assert {fmt: os.stat(os.path.join(night_dir, "fleet-report." + fmt)).st_mtime_ns for fmt in FORMATS} == mtimes
    # A summary regenerated later (new generated_at, same results) gives the same report.
    summary_path = os.path.join(night_dir, "hosts", "host-a", "summary.json")
    before = load_json(summary_path)["generated_at"]
    # generated_at has a resolution of one second: summarize again until it differs.
    deadline = time.monotonic() + 10
    while load_json(summary_path)["generated_at"] == before:
        assert time.monotonic() < deadline
        time.sleep(0.05)  # the poll's interval
        put_summary(two_nights, NIGHT2, "host-a", ["resumed"])
    rc, result = run_module(capsys, args)
    assert rc == 0 and result["changed"] is False and digest(night_dir) == first
    # Moved elsewhere, the same inputs give the same files (no absolute paths inside).
    moved = two_nights + "-moved"
    shutil.copytree(two_nights, moved, symlinks=True)
    for fmt in FORMATS:
        os.unlink(os.path.join(moved, NIGHT2, "fleet-report." + fmt))
    assert run_module(capsys, dict(args, report_dir=moved))[1]["changed"] is True
    assert digest(os.path.join(moved, NIGHT2)) == first


def test_check_mode_writes_nothing(capsys, two_nights):
    before = sorted(os.listdir(os.path.join(two_nights, NIGHT2)))
    rc, result = run_module(capsys, {"report_dir": two_nights, "night": NIGHT2}, check=True)
    assert rc == 0 and result["changed"] is True
    assert sorted(os.listdir(os.path.join(two_nights, NIGHT2))) == before == ["hosts"]
    assert os.readlink(os.path.join(two_nights, "latest")) == NIGHT1
    assert result["files"]["md"] == os.path.join(two_nights, NIGHT2, "fleet-report.md")
    rc, result = run_module(capsys, {"report_dir": os.path.join(two_nights, "new"), "night": NIGHT1,
                                     "expected_hosts": ["a"]}, check=True)
    assert rc == 0 and not os.path.exists(os.path.join(two_nights, "new"))


def test_the_action_plugin_runs_run_report_in_check_mode_with_diff(capsys, two_nights):
    """The ActionModule itself (plugin_utils' CollectionAction): same rows as run_report, nothing written."""
    from types import SimpleNamespace

    from ansible.playbook.play_context import PlayContext
    from ansible.playbook.task import Task

    rc, expected = run_module(capsys, {"report_dir": two_nights, "night": NIGHT2}, check=True, diff=True)
    task = Task()
    task.args = {"report_dir": two_nights, "night": NIGHT2}
    context = PlayContext()
    context.check_mode, context.diff = True, True
    plugin = action.ActionModule(task, SimpleNamespace(_shell=SimpleNamespace(tmpdir=None)), context, None, None, None)
    result = json.loads(json.dumps(plugin.run(task_vars={})))
    assert rc == 0 and result["changed"] is True and not result.get("failed")
    assert result["fleet"] == expected["fleet"] and result["diff"]["after_header"] == expected["diff"]["after_header"]
    assert sorted(os.listdir(os.path.join(two_nights, NIGHT2))) == ["hosts"]


def test_diff_shows_the_markdown_change(capsys, two_nights):
    rc, result = run_module(capsys, {"report_dir": two_nights, "night": NIGHT2}, check=True, diff=True)
    assert result["diff"]["before"] == ""
    assert result["diff"]["after"].startswith("# Fleet report 2026-12-02\n")
    run_module(capsys, {"report_dir": two_nights, "night": NIGHT2})
    rc, result = run_module(capsys, {"report_dir": two_nights, "night": NIGHT2}, diff=True)
    assert result["changed"] is False and "diff" not in result
    rc, result = run_module(capsys, {"report_dir": two_nights, "night": NIGHT2, "threshold": 0.6}, diff=True)
    assert result["changed"] is True
    assert "| improved |" in result["diff"]["before"] and "| improved |" not in result["diff"]["after"]


def test_latest_points_at_the_newest_night(capsys, two_nights):
    assert run_module(capsys, {"report_dir": two_nights, "night": NIGHT2})[1]["changed"] is True
    assert os.readlink(os.path.join(two_nights, "latest")) == NIGHT2
    # Regenerating an older night does not move it back; its files change, the link does not.
    os.unlink(os.path.join(two_nights, NIGHT1, "fleet-report.md"))
    rc, result = run_module(capsys, {"report_dir": two_nights, "night": NIGHT1})
    assert result["changed"] is True
    assert os.readlink(os.path.join(two_nights, "latest")) == NIGHT2
    # A dangling or wrong link is repaired.
    os.unlink(os.path.join(two_nights, "latest"))
    os.symlink("gone", os.path.join(two_nights, "latest"))
    rc, result = run_module(capsys, {"report_dir": two_nights, "night": NIGHT1})
    assert result["changed"] is True and os.readlink(os.path.join(two_nights, "latest")) == NIGHT2
    rc, result = run_module(capsys, {"report_dir": two_nights, "night": NIGHT2, "update_latest": False})
    assert result["changed"] is False and result["latest"] is None


# --- refusals --------------------------------------------------------------------------------


@pytest.mark.parametrize("args, message", [
    ({"night": "../etc"}, "night '../etc' refused"),
    ({"night": "latest"}, "night 'latest' refused"),
    ({"night": "a b"}, "night 'a b' refused"),
    ({"night": NIGHT2, "previous_night": "x/y"}, "previous_night 'x/y' refused"),
    ({"night": NIGHT2, "threshold": 1.5}, "threshold 1.5 refused"),
    ({"night": NIGHT2, "threshold": -0.1}, "threshold -0.1 refused"),
    ({"night": NIGHT2, "min_trials": 0}, "min_trials 0 refused"),
    ({"night": "2026-12-09"}, "nothing to report"),
    ({"night": NIGHT2, "expected_hosts": [" "]}, "expected_hosts: an empty host name"),
])
def test_bad_input_is_refused_and_writes_nothing(capsys, two_nights, args, message):
    before = sorted(os.listdir(two_nights))
    rc, result = run_module(capsys, dict(args, report_dir=two_nights))
    assert rc == 1 and result["failed"] is True
    assert message in result["msg"]
    assert sorted(os.listdir(two_nights)) == before
    assert not os.path.exists(os.path.join(two_nights, NIGHT2, "fleet-report.md"))


def test_latest_that_is_not_a_link_is_refused(capsys, two_nights):
    os.unlink(os.path.join(two_nights, "latest"))
    os.mkdir(os.path.join(two_nights, "latest"))
    rc, result = run_module(capsys, {"report_dir": two_nights, "night": NIGHT2})
    assert rc == 1 and "is not a symlink" in result["msg"]
    assert not os.path.exists(os.path.join(two_nights, NIGHT2, "fleet-report.md"))
    rc, result = run_module(capsys, {"report_dir": two_nights, "night": NIGHT2, "update_latest": False})
    assert rc == 0


def test_report_dir_that_is_a_file_is_refused(capsys, tmp_path):
    path = tmp_path / "file"
    path.write_text("x")
    rc, result = run_module(capsys, {"report_dir": str(path), "night": NIGHT1, "expected_hosts": ["a"]})
    assert rc == 1 and "is not a directory" in result["msg"]


def test_default_night_is_the_utc_date(capsys, report_dir):
    rc, result = run_module(capsys, {"report_dir": report_dir, "expected_hosts": ["a"]})
    assert rc == 0
    assert result["night"] in (time.strftime("%Y-%m-%d", time.gmtime(time.time() - 5)),
                               time.strftime("%Y-%m-%d", time.gmtime()))


# --- rendering: escaping, CSV, HTML/SVG ------------------------------------------------------

NASTY_HOST = '<script>alert("x")</script> | `=cmd|` & co'


def test_hostile_names_are_escaped_everywhere(capsys, report_dir, tmp_path):
    path = harbor_summary(tmp_path, ["two-agents"])
    rc, result = run_module(capsys, {
        "report_dir": report_dir, "night": NIGHT1,
        "summaries": [{"host": NASTY_HOST, "path": path}, {"host": "=HYPERLINK(1)", "path": path}],
        "failures": [{"host": "-bad", "stage": "<b>fetch</b>", "error": "line one\nline | two"}],
    })
    assert rc == 0
    with open(result["files"]["html"], encoding="utf-8") as handle:
        page = handle.read()
    assert "<script>" not in page and "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in page
    assert "<b>fetch</b>" not in page and "&lt;b&gt;fetch&lt;/b&gt;" in page
    with open(result["files"]["md"], encoding="utf-8") as handle:
        markdown = handle.read()
    assert "\\`=cmd\\|\\` & co" in markdown
    assert "line one line \\| two" in markdown
    # Every table line has the header's number of cells.
    for block in markdown.split("\n\n"):
        lines = [line for line in block.splitlines() if line.startswith("|")]
        if lines:
            widths = {len(line.replace("\\|", "").split("|")) for line in lines}
            assert len(widths) == 1, block
    with open(result["files"]["csv"], encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    hosts = {row["host"] for row in rows if row["scope"] == "host"}
    assert hosts == {NASTY_HOST, "'=HYPERLINK(1)", "'-bad"}
    assert [row["error"] for row in rows if row["host"] == "'-bad"] == ["line one line | two"]


class _TagChecker(HTMLParser):
    VOID = {"meta", "br", "img", "hr", "input", "link"}

    def __init__(self):
        super().__init__()
        self.stack = []
        self.external = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if (name in ("src", "href") and not (value or "").startswith("#")) or (value and "url(" in value):
                self.external.append((tag, name, value))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, (self.stack[-5:], tag)
        self.stack.pop()


def test_html_is_balanced_self_contained_with_an_svg_chart(capsys, two_nights):
    rc, result = run_module(capsys, {"report_dir": two_nights, "night": NIGHT2})
    with open(result["files"]["html"], encoding="utf-8") as handle:
        page = handle.read()
    checker = _TagChecker()
    checker.feed(page)
    checker.close()
    assert checker.stack == [] and checker.external == []
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "") and "https://" not in page
    start = page.index("<svg", page.index('<figure id="tonight">'))
    svg = page[start:page.index("</svg>", start) + len("</svg>")]
    root = ET.fromstring(svg)          # the chart is well-formed XML
    ns = "{http://www.w3.org/2000/svg}"
    bars = root.findall(ns + "rect")
    titles = [rect.find(ns + "title").text for rect in bars]
    # hello/oracle: fleet, host-a, host-b; broken/oracle: fleet, host-b; slow/oracle: fleet, host-a
    assert len(bars) == 7
    assert "hello / oracle fleet: 0.667 (2/3)" in titles
    assert "hello / oracle host-b: 1.000 (1/1)" in titles
    widths = {t: int(b.get("width")) for t, b in zip(titles, bars)}
    assert widths["hello / oracle host-b: 1.000 (1/1)"] == fr.CHART_BAR_WIDTH
    assert widths["broken / oracle fleet: 0.000 (0/2)"] == 0
    # Ticks at the previous night's value, for rows that had one: hello/oracle fleet 0.6, host-a 0.5, host-b 0.5;
    # broken/oracle fleet 0.0 (host-b's broken row is new, slow is new).
    ticks = {line.find(ns + "title").text: int(line.get("x1")) for line in root.findall(ns + "line")
             if line.get("class") == "previous"}
    assert ticks == {
        "hello / oracle fleet: previous night 0.600": fr.CHART_LABEL_WIDTH + round(0.6 * fr.CHART_BAR_WIDTH),
        "hello / oracle host-a: previous night 0.500": fr.CHART_LABEL_WIDTH + round(0.5 * fr.CHART_BAR_WIDTH),
        "hello / oracle host-b: previous night 0.500": fr.CHART_LABEL_WIDTH + round(0.5 * fr.CHART_BAR_WIDTH),
        "broken / oracle fleet: previous night 0.000": fr.CHART_LABEL_WIDTH,
    }
    assert "black tick: night 2026-12-01." in svg


def test_csv_has_fleet_host_and_gone_rows(capsys, two_nights):
    rc, result = run_module(capsys, {"report_dir": two_nights, "night": NIGHT2})
    with open(result["files"]["csv"], newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0].keys()) == list(fr.CSV_COLUMNS)
    fleet = [(r["benchmark"], r["agent"], r["model"], r["change"]) for r in rows if r["scope"] == "fleet"]
    assert fleet == [("broken", "oracle", "", "unchanged"), ("hello", "oracle", "", "improved"),
                     ("slow", "oracle", "", "new"), ("hello", "nop", "", "gone"),
                     ("hello", "nop", "acme/fake-model-1", "gone")]
    host_d = [r for r in rows if r["host"] == "host-d"]
    assert len(host_d) == 1 and host_d[0]["host_status"] == "failed" and host_d[0]["stage"] == "report"
    hello = [r for r in rows if r["scope"] == "fleet" and r["benchmark"] == "hello" and r["agent"] == "oracle"][0]
    assert (hello["pass_at_1"], hello["previous_pass_at_1"], hello["delta"], hello["n_pass"], hello["n_completed"]) == (
        "0.666667", "0.6", "0.066667", "2", "3")


def test_no_results_at_all(capsys, report_dir):
    rc, result = run_module(capsys, {"report_dir": report_dir, "night": NIGHT1, "expected_hosts": ["a", "b"]})
    assert rc == 0
    assert result["fleet"] == [] and result["fleet_pass_at_1"] is None
    assert "No host reported a completed trial." in result["summary_lines"]
    with open(result["files"]["html"]) as handle:
        assert "<svg" not in handle.read()


# --- a fleet of 50 hosts x 20 (benchmark, agent) pairs ------------------------------------------


def _scaled_summary(template, host_index):
    """A real summary with its evals renamed and rescaled into 20 (benchmark, agent) pairs."""
    data = json.loads(json.dumps(template))
    job = data["jobs"][0]
    base = job["evals"][0]
    job["evals"] = []
    for pair in range(20):
        ev = dict(base)
        ev["benchmark"] = "bench-%02d" % (pair // 4)
        ev["agent"] = "agent-%d" % (pair % 4)
        ev["n_completed"] = ev["n_scored"] = 10 + (host_index + pair) % 7
        ev["n_errored"] = (host_index * pair) % 3
        ev["n_cancelled"] = pair % 2
        ev["n_pass"] = (host_index * 3 + pair) % (ev["n_completed"] - ev["n_cancelled"] + 1)
        ev["exceptions"] = {"AgentTimeoutError": ev["n_errored"]} if ev["n_errored"] else {}
        job["evals"].append(ev)
    return data


def test_fifty_hosts_by_twenty_pairs(capsys, report_dir, tmp_path):
    with open(harbor_summary(tmp_path, ["pass-fail"])) as handle:
        template = json.load(handle)
    expected = {}
    for night, offset in ((NIGHT1, 1), (NIGHT2, 0)):
        for index in range(50):
            data = _scaled_summary(template, index + offset)
            put_raw(report_dir, night, "gpu%02d" % index, "summary.json", json.dumps(data).encode())
            if night == NIGHT2:
                for ev in data["jobs"][0]["evals"]:
                    total = expected.setdefault((ev["benchmark"], ev["agent"]), [0, 0])
                    total[0] += ev["n_pass"]
                    total[1] += ev["n_completed"]
        started = time.perf_counter()
        rc, result = run_module(capsys, {"report_dir": report_dir, "night": night})
        elapsed = time.perf_counter() - started
        assert rc == 0
    print("fleet_report, 50 hosts x 20 pairs with a previous night: %.3f s" % elapsed)
    assert len(result["fleet"]) == 20 and result["counts"]["hosts_ok"] == 50
    for row in result["fleet"]:
        passes, scored = expected[(row["benchmark"], row["agent"])]
        assert (row["n_pass"], row["n_completed"], row["n_hosts"]) == (passes, scored, 50)
        assert row["pass_at_1"] == round(passes / scored, 6)
    assert sum(result["counts"]["changes"].values()) == 20
    assert elapsed < 20


# --- the sample in the docs ----------------------------------------------------------------

DOC_PATH = os.path.join(ROOT, "docs", "fleet_report.md")
SAMPLE_BEGIN = "<!-- BEGIN SAMPLE: generated by tests/unit/plugins/action/test_fleet_report.py::test_docs_sample_is_current -->"
SAMPLE_END = "<!-- END SAMPLE -->"


def test_docs_sample_is_current(capsys, two_nights):
    """docs/fleet_report.md shows night two's real output; AISBENCH_WRITE_DOCS=1 rewrites it."""
    # host-d fetched Harbor's job result.json instead of the summary (a JSON decode error would
    # quote a position whose wording depends on the Python version).
    with open(os.path.join(FIXTURE_JOBS, "pass-fail", "result.json"), "rb") as handle:
        put_raw(two_nights, NIGHT2, "host-d", "summary.json", handle.read())
    rc, result = run_module(capsys, {"report_dir": two_nights, "night": NIGHT2, "expected_hosts": ["host-f"]})
    assert rc == 0
    with open(result["files"]["md"]) as handle:
        markdown = handle.read()
    sample = "\n".join([
        SAMPLE_BEGIN, "",
        "`summary_lines` (printed by the playbook with `ansible.builtin.debug`):", "",
        "```text", "\n".join(result["summary_lines"]), "```", "",
        "`fleet-report.md`:", "",
        "````markdown", markdown.rstrip("\n"), "````", "",
        SAMPLE_END,
    ])
    with open(DOC_PATH) as handle:
        doc = handle.read()
    start, end = doc.find(SAMPLE_BEGIN), doc.find(SAMPLE_END)
    assert 0 <= start < end, "docs/fleet_report.md lacks the sample markers"
    current = doc[start:end + len(SAMPLE_END)]
    if os.environ.get("AISBENCH_WRITE_DOCS") == "1" and current != sample:
        with open(DOC_PATH, "w") as handle:
            handle.write(doc[:start] + sample + doc[end + len(SAMPLE_END):])
        current = sample
    assert current == sample, "docs/fleet_report.md sample is stale: AISBENCH_WRITE_DOCS=1 pytest -k docs_sample"


# --- several nights: task regressions, flaky tasks, tokens, cost, time, history ----------------

MULTI_NIGHTS = ("2026-11-29", "2026-11-30", "2026-12-01")


def build_multi_night(capsys, report_dir):
    """Three nights of three hosts from real Harbor jobs; returns the last night's result.

    host-a runs the flip job: coin passes, fails, passes (flip-night-1/2/3), steady always passes.
    host-b runs metered (tokens and cost) and multi-key (several reward keys) every night.
    host-c runs errored, errored, then fails at stage wait with a partial summary (cancelled-kept).
    """
    result = None
    for index, night in enumerate(MULTI_NIGHTS):
        put_summary(report_dir, night, "host-a", ["flip-night-%d" % (index + 1)])
        put_summary(report_dir, night, "host-b", ["metered", "multi-key"])
        if index < 2:
            put_summary(report_dir, night, "host-c", ["errored"])
        else:
            put_summary(report_dir, night, "host-c", ["cancelled-kept"])
            put_failure(report_dir, night, "host-c", "wait", "timed out after 21600 s waiting for job nightly: 3 of 5")
        rc, result = run_module(capsys, {"report_dir": report_dir, "night": night})
        assert rc == 0, result
    return result


def test_task_regression_fix_and_flaky_marker_over_three_nights(capsys, report_dir):
    put_summary(report_dir, MULTI_NIGHTS[0], "host-a", ["flip-night-1"])
    assert run_module(capsys, {"report_dir": report_dir, "night": MULTI_NIGHTS[0]})[0] == 0
    put_summary(report_dir, MULTI_NIGHTS[1], "host-a", ["flip-night-2"])
    rc, second = run_module(capsys, {"report_dir": report_dir, "night": MULTI_NIGHTS[1]})
    assert rc == 0
    fleet_regressions = [t for t in second["task_regressions"] if t["host"] is None]
    assert [(t["task"], t["text"], t["flaky"]) for t in fleet_regressions] == [
        ("coin", "passed on 2026-11-29, failed tonight", False)]
    assert [t["host"] for t in second["task_regressions"]] == [None, "host-a"]
    assert "  flip coin / oracle: passed on 2026-11-29, failed tonight" in second["summary_lines"]

    result = build_multi_night(capsys, report_dir)
    fixes = [t for t in result["task_fixes"] if t["host"] is None]
    assert [(t["task"], t["text"]) for t in fixes] == [("coin", "failed on 2026-11-30, passed tonight")]
    flaky = [(t["host"], t["task"], t["flips"], [o["status"] for o in t["outcomes"]]) for t in result["flaky_tasks"]]
    assert flaky == [(None, "coin", 2, ["pass", "fail"]), ("host-a", "coin", 2, ["pass", "fail"])]
    assert result["counts"]["flaky_tasks"] == 2
    with open(result["files"]["md"]) as handle:
        markdown = handle.read()
    assert "| fleet | flip | coin | oracle | - | fixed | failed on 2026-11-30, passed tonight | flaky |" in markdown


def test_matrix_usage_and_history_over_three_nights(capsys, report_dir):
    result = build_multi_night(capsys, report_dir)
    report = load_json(result["files"]["json"])
    assert report["format"] == 2 and result["history_nights"] == list(MULTI_NIGHTS)
    history = {(s["benchmark"], s["agent"], s["model"]): s["values"] for s in report["history"]["series"]}
    assert history[("flip", "oracle", None)] == [1.0, 0.5, 1.0]
    # hello/oracle: host-b's metered job 1/2 every night, host-c's errored 1/1 (nights 1-2) or cancelled-kept 1/2.
    assert history[("hello", "oracle", None)] == [round(2 / 3, 6), round(2 / 3, 6), 0.5]
    # The multi-key benchmark: pass@1 on accuracy (Harbor's first key), style reported as its own column.
    multikey = rows_by_key(result["fleet"])[("multikey", "oracle", None)]
    assert (multikey["primary_key"], multikey["pass_at_1"], multikey["mean_reward"]) == ("accuracy", 0.6, 0.6)
    fleet_row = rows_by_key(report["fleet"]["rows"])[("multikey", "oracle", None)]
    assert fleet_row["reward_means"] == {"accuracy": 0.6, "style": 0.5}
    # Tokens and cost: only the metered agent reports them (3 trials of 1200/200/300 tokens, 0.0042 USD).
    metered = [r for r in result["fleet"] if r["agent"] == "metered"]
    assert sum(r["n_input_tokens"] for r in metered) == 3600
    assert result["usage"]["n_input_tokens"] == 3600 and result["usage"]["cost_usd"] == pytest.approx(0.0126)
    assert result["usage"]["n_cost_reported"] == 3
    assert result["usage"]["durations"]["agent_execution"]["n"] == result["usage"]["n_completed"]
    # The task matrix of the fleet: the errored trial shows its exception type.
    tables = fr.report_tables(report)
    matrices = {m["title"]: m for m in tables["fleet_matrix"]}
    multikey_cells = dict((row[0], row[1:]) for row in matrices["multikey"]["rows"])
    assert multikey_cells["mk-noreward"] == ["error: RewardFileNotFoundError"]
    assert multikey_cells["mk-wrong"] == ["fail"] and multikey_cells["mk-all"] == ["pass"]
    timeouts = dict((row[0], row[1:]) for row in matrices["timeouts"]["rows"])
    assert matrices["timeouts"]["headers"] == ["task", "metered / acme/metered-1", "oracle"]
    assert timeouts["agent-timeout"] == ["pass", "pass"]     # graded after AgentTimeoutError: reward 1
    slow = dict((row[0], row[1:]) for row in matrices["slow"]["rows"])
    assert slow["sleepy"] == ["error: CancelledError"]


def _md_tables(markdown):
    """{section title: [row dicts]} of every Markdown table (first table after a heading)."""
    tables = {}
    title = None
    lines = markdown.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("#"):
            title = line.lstrip("#").strip()
        if line.startswith("| ") and title not in tables:
            headers = [cell.strip() for cell in line.strip("|").split(" | ")]
            rows = []
            index += 2
            while index < len(lines) and lines[index].startswith("| "):
                rows.append(dict(zip(headers, [cell.strip() for cell in lines[index].strip("|").split(" | ")])))
                index += 1
            tables[title] = rows
            continue
        index += 1
    return tables


def test_markdown_csv_and_json_carry_the_same_numbers(capsys, report_dir):
    result = build_multi_night(capsys, report_dir)
    report = load_json(result["files"]["json"])
    with open(result["files"]["md"]) as handle:
        md = _md_tables(handle.read())
    with open(result["files"]["csv"], newline="") as handle:
        rows = list(csv.DictReader(handle))
    md_fleet = {(r["benchmark"], r["agent"], r["model"]): r for r in md["Fleet pass@1"]}
    csv_fleet = {(r["benchmark"], r["agent"], r["model"] or "-"): r for r in rows if r["scope"] == "fleet"}
    md_usage = {(r["benchmark"], r["agent"], r["model"]): r for r in md["Tokens, cost and time"]}
    md_history = {(r["benchmark"], r["agent"], r["model"]): r for r in md["pass@1 history (fleet)"]}
    for row in report["fleet"]["rows"]:
        key = (row["benchmark"], row["agent"], row["model"] or "-")
        assert md_fleet[key]["pass@1"] == fr.fmt_rate(row["pass_at_1"]) == "%.3f" % float(csv_fleet[key]["pass_at_1"])
        assert md_fleet[key]["mean reward"] == fr.fmt_rate(row["mean_reward"])
        for field, header in (("n_pass", "passed"), ("n_completed", "completed"), ("n_errored", "errored"),
                              ("n_cancelled", "cancelled")):
            assert int(md_fleet[key][header]) == row[field] == int(csv_fleet[key][field]), (key, field)
        for field, header in (("n_input_tokens", "input tokens"), ("n_output_tokens", "output tokens")):
            expected = "" if row[field] is None else str(row[field])
            assert csv_fleet[key][field] == expected
            assert md_usage[key][header] == fr.fmt_int(row[field])
        assert md_usage[key]["cost (USD)"] == fr.fmt_cost(row["cost_usd"])
        assert csv_fleet[key]["cost_usd"] == ("" if row["cost_usd"] is None else str(row["cost_usd"]))
        series = [s for s in report["history"]["series"]
                  if (s["benchmark"], s["agent"], s["model"] or "-") == key][0]
        assert [md_history[key][night] for night in report["history"]["nights"]] == [fr.fmt_rate(v) for v in series["values"]]
        csv_history = {r["night"]: float(r["pass_at_1"]) for r in rows if r["scope"] == "history"
                       and (r["benchmark"], r["agent"], r["model"] or "-") == key}
        assert csv_history == {n: v for n, v in zip(report["history"]["nights"], series["values"]) if v is not None}
    # Task outcomes: the Markdown matrix cells and the CSV task rows agree with the JSON rows' tasks.
    csv_tasks = {(r["benchmark"], r["task"], r["agent"], r["model"] or None): r for r in rows
                 if r["scope"] == "task" and not r["host"]}
    for (benchmark, task, agent, model), outcome in fr.task_outcomes(report["fleet"]["rows"]).items():
        line = csv_tasks[(benchmark, task, agent, model)]
        assert line["outcome"] == outcome["label"] and int(line["n_pass"]) == outcome["n_pass"]
        column = "%s / %s" % (agent, model) if model else agent
        md_rows = {r["task"]: r for r in md[benchmark]}
        assert md_rows[task][column] == outcome["label"]


def test_model_gateway_counts_next_to_the_agents_own(capsys, report_dir):
    night_one(report_dir)
    # What nightly.yml writes from `aisbench-model-gateway usage` (docs/model_gateway.md).
    put_raw(report_dir, NIGHT1, "host-a", "model-gateway.json", json.dumps(
        {"requests": 7, "failed_requests": 1, "prompt_tokens": 1200, "completion_tokens": 300, "cost_usd": 0.25}).encode())
    put_raw(report_dir, NIGHT1, "host-b", "model-gateway.json", b"[1, 2]")
    rc, result = run_module(capsys, {"report_dir": report_dir, "night": NIGHT1})
    assert rc == 0
    report = json.loads(open(result["files"]["json"]).read())
    hosts = {host["host"]: host for host in report["hosts"]}
    assert hosts["host-a"]["gateway"] == {"requests": 7, "failed_requests": 1, "prompt_tokens": 1200,
                                          "completion_tokens": 300, "cost_usd": 0.25}
    assert hosts["host-b"]["gateway"] is None and "model-gateway.json is not an object" in hosts["host-b"]["notes"]
    markdown = open(result["files"]["md"]).read()
    assert "### Model gateway per host" in markdown
    # oracle trials report no tokens of their own: "-" beside the gateway's
    assert "| host-a | 7 | 1 | 1,200 | 300 | 0.2500 | - | - |" in markdown.splitlines()
    assert "Model gateway per host" in open(result["files"]["html"]).read()


def test_multi_step_trials_show_their_steps_and_harbor_026_scores_valid_rewards_only(capsys, report_dir):
    # Two hosts: a Harbor 0.26 night (reward_valid) and a Harbor 0.25 one of the same multi-step tasks.
    put_summary(report_dir, NIGHT2, "new", ["v026-multi-step"])
    put_summary(report_dir, NIGHT2, "old", ["v025-multi-step"])
    rc, result = run_module(capsys, {"report_dir": report_dir, "night": NIGHT2})
    assert rc == 0
    with open(os.path.join(report_dir, NIGHT2, "fleet-report.json")) as handle:
        report = json.load(handle)
    hosts = {host["host"]: host for host in report["hosts"]}
    oracle_new = {row["agent"]: row for row in hosts["new"]["rows"]}["oracle"]
    oracle_old = {row["agent"]: row for row in hosts["old"]["rows"]}["oracle"]
    # Each host's pass@1 is its Harbor's mean (0.26 leaves out the trial whose broken step voids its reward)...
    assert (oracle_new["pass_at_1"], oracle_new["n_scored"], oracle_new["n_completed"]) == (1.0, 1, 2)
    assert (oracle_old["pass_at_1"], oracle_old["n_scored"], oracle_old["n_completed"]) == (1.0, 2, 2)
    # ...and the fleet adds the counts: 3 scored trials, all passed.
    fleet = {row["agent"]: row for row in report["fleet"]["rows"]}["oracle"]
    assert (fleet["n_pass"], fleet["n_scored"], fleet["n_completed"], fleet["pass_at_1"]) == (3, 3, 4, 1.0)
    # The agent time of a multi-step trial is the sum of its steps; every step is listed with its exceptions.
    steps = {(step["task"], step["step"]): step for step in fleet["steps"]}
    assert list(steps) == [("ms-broken-step", "write"), ("ms-broken-step", "broken"), ("ms-pass", "write"),
                           ("ms-pass", "append"), ("ms-pass", "count")]
    assert steps[("ms-broken-step", "broken")]["n_errored"] == 2
    assert steps[("ms-broken-step", "broken")]["exceptions"] == {"RewardFileNotFoundError": 2}
    assert fleet["durations"]["agent_execution"]["total_sec"] == pytest.approx(
        sum(step["durations"]["agent_execution"]["total_sec"] for step in fleet["steps"]), abs=0.02)
    with open(os.path.join(report_dir, NIGHT2, "fleet-report.md")) as handle:
        text = handle.read()
    assert "### Steps of multi-step trials" in text and "| multistep | oracle | - | ms-broken-step | broken | 2 |" in text
    with open(os.path.join(report_dir, NIGHT2, "fleet-report.html")) as handle:
        assert 'steps-table' in handle.read()
