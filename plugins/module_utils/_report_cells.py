# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0 (see LICENSE)
"""Cells of the collection's CSV and Markdown reports (standard library only).

The one place for the two rules every report applies to text that comes from disk or from the fleet (job, host,
task and exception names, error messages):

* ``csv_cell``: a CSV cell never starts a spreadsheet formula. A cell whose first character is ``=``, ``+``, ``-``,
  ``@``, a tab or a carriage return gets a leading ``'``, unless the whole cell is a number (``-1.5`` stays a number).
* ``md_escape`` and ``md_table``: a Markdown table cell keeps the table's shape and shows its text literally
  (``\\``, ``|`` and backticks escaped, line breaks turned into spaces).

Used by harbor_results (harbor_job_summary's files, on the target: keep it plain Python) and fleet_report (the
fleet_report action plugin, on the controller).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# Leading characters a spreadsheet reads as the start of a formula (or, for tab and CR, lets one follow).
CSV_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def csv_cell(value):
    """The text of one CSV cell: None is empty; a would-be formula gets a leading ``'``, a number does not."""
    text = "" if value is None else str(value)
    if text[:1] in CSV_FORMULA_STARTS and not _is_number(text):
        return "'" + text
    return text


def md_escape(value):
    """Text for one Markdown table cell: ``\\``, ``|`` and backticks escaped, CR and LF each turned into a space."""
    return (str(value).replace("\\", "\\\\").replace("|", "\\|").replace("`", "\\`")
            .replace("\n", " ").replace("\r", " "))


def md_table(headers, rows, cell=md_escape):
    """A Markdown table's lines: header, separator, one line per row; ``cell`` formats headers and cells alike."""
    lines = ["| " + " | ".join(cell(header) for header in headers) + " |",
             "|" + "|".join("---" for _unused in headers) + "|"]
    lines += ["| " + " | ".join(cell(value) for value in row) + " |" for row in rows]
    return lines
