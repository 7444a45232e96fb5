"""report_cells: the one CSV formula guard and the one Markdown cell escape of the reports.

harbor_results (harbor_job_summary's files) and fleet_report (fleet-report.csv/.md) both use these; their
rendered outputs are tested in test_harbor_results.py and test_fleet_report.py.
"""

import csv
import io

import pytest

from ansible_collections.aisbench.agent_runtime.plugins.plugin_utils import _fleet_report as fleet_report
from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _harbor_results as harbor_results
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._report_cells import (
    CSV_FORMULA_STARTS,
    csv_cell,
    md_escape,
    md_table,
)


# --- csv_cell --------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["=HYPERLINK(1)", "+cmd", "-bad", "@SUM(A1)", "\t=1+1", "\rx", "\t", "-", "=", "@"])
def test_csv_cell_guards_every_formula_start(text):
    assert text[:1] in CSV_FORMULA_STARTS
    assert csv_cell(text) == "'" + text


def test_csv_cell_guards_exactly_these_starts():
    assert set(CSV_FORMULA_STARTS) == {"=", "+", "-", "@", "\t", "\r"}


@pytest.mark.parametrize("value", [-1.5, "-1.5", "-1", -3, "+2", "-0.25e3", "-inf", "+1E-3"])
def test_csv_cell_leaves_numbers_alone(value):
    assert csv_cell(value) == str(value)


@pytest.mark.parametrize("value, expected", [
    (None, ""), ("", ""), (0, "0"), (0.5, "0.5"), (True, "True"), ("leading-dash-inside", "leading-dash-inside"),
    ("a=b", "a=b"), (" =x", " =x"), ("'=x", "'=x"), ("line\nbreak", "line\nbreak"),
])
def test_csv_cell_leaves_other_text_alone(value, expected):
    assert csv_cell(value) == expected


def test_csv_cell_survives_the_csv_round_trip():
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow([csv_cell(v) for v in ("=1+1", "-2", "a|b", None, "x\r\ny")])
    assert next(csv.reader(io.StringIO(out.getvalue()))) == ["'=1+1", "-2", "a|b", "", "x\r\ny"]


# --- md_escape and md_table ----------------------------------------------------------------------

@pytest.mark.parametrize("value, expected", [
    ("plain", "plain"),
    ("a|b", "a\\|b"),
    ("back\\slash", "back\\\\slash"),
    ("`code`", "\\`code\\`"),
    ("\\|", "\\\\\\|"),  # the backslash is escaped first, so the pipe's own escape is not undone
    ("one\ntwo", "one two"),
    ("one\rtwo", "one two"),
    ("one\r\ntwo", "one  two"),  # each of CR and LF becomes one space
    ("`=cmd|` & co", "\\`=cmd\\|\\` & co"),
    (3, "3"),
    (0.5, "0.5"),
    (None, "None"),  # the renderers decide what None shows (harbor_results: empty, fleet_report: "-")
])
def test_md_escape(value, expected):
    assert md_escape(value) == expected


def test_md_table_shape_and_escaping():
    lines = md_table(["name", "a|b"], [["x|y", 1], ["`z`\nw", None]])
    assert lines == [
        "| name | a\\|b |",
        "|---|---|",
        "| x\\|y | 1 |",
        "| \\`z\\` w | None |",
    ]


def test_md_table_formats_headers_and_cells_with_the_given_function():
    assert md_table(["h"], [[None], [0.25]], lambda v: "-" if v is None else md_escape(v)) == [
        "| h |", "|---|", "| - |", "| 0.25 |"]
    assert md_table(["h"], []) == ["| h |", "|---|"]


# --- both renderers use them ------------------------------------------------------------------------

def test_both_report_layers_use_the_shared_cells():
    for module in (harbor_results, fleet_report):
        assert module.csv_cell is csv_cell
        assert module.md_escape is md_escape
        assert module.md_table is md_table
    for gone in ("_csv_text", "_looks_numeric", "_md_table"):
        assert not hasattr(harbor_results, gone)
    assert not hasattr(fleet_report, "_csv_cell")


def test_harbor_markdown_cells_are_escaped_and_formatted():
    assert harbor_results._md_cell(None) == ""  # pylint: disable=protected-access
    assert harbor_results._md_cell(0.5) == "0.500"  # pylint: disable=protected-access
    assert harbor_results._md_cell("a\\`b|c\r\nd") == "a\\\\\\`b\\|c  d"  # pylint: disable=protected-access


def test_fleet_markdown_cells_are_escaped_and_formatted():
    assert fleet_report._md(None) == "-"  # pylint: disable=protected-access
    assert fleet_report._md("") == "-"  # pylint: disable=protected-access
    assert fleet_report._md("a\\`b|c\r\nd") == "a\\\\\\`b\\|c  d"  # pylint: disable=protected-access
