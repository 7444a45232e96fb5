# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""Fixed-width text tables, shared by the fleet report (plugin_utils/_fleet_report.py) and the status_table filter.

A module of its own so that the filter does not import the fleet report: Ansible loads every filter file of a
collection, and what they import, in each task's worker that uses any one of its filters.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


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
