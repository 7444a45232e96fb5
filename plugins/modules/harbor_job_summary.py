#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: harbor_job_summary
short_description: Write the summary of Harbor benchmark jobs as JSON, CSV and Markdown files
version_added: 0.3.0
description:
  - Reads Harbor job directories under O(jobs_dir) on the target as M(aisbench.agent_runtime.harbor_job_info) does
    (the same options, the same result) and writes the summary to O(output_dir) as C(summary-TIMESTAMP.json)
    (everything), C(.csv) (one row per benchmark, agent and model) and C(.md), ready for M(ansible.builtin.fetch).
  - Reports C(changed) only when a file's content changes. A rerun on unchanged jobs with the same
    O(output_timestamp) rewrites nothing, the files' generation time included.
options:
  output_dir:
    description: Directory (on the target) to write the summary files to; created with mode 0755 when missing.
    type: path
    required: true
  output_formats:
    description: Which summary files to write.
    type: list
    elements: str
    choices: [json, csv, md]
    default: [json, csv, md]
  output_timestamp:
    description:
      - Timestamp in the file names instead of the current UTC time (C(YYYYMMDD-HHMMSS)); letters, digits, C(-) and
        C(_), for example to name a nightly report after its run. Files with the same name are replaced.
    type: str
requirements:
  - Python standard library only.
seealso:
  - module: aisbench.agent_runtime.harbor_job_info
  - module: ansible.builtin.fetch
author: aisbench maintainers (!UNKNOWN)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - aisbench.agent_runtime.harbor_jobs
  - aisbench.agent_runtime.runtime_contract
  - aisbench.agent_runtime.attributes
attributes:
  check_mode:
    details: In check mode the summary files are not written; RV(files) names the files that would be, and C(changed)
      says whether they would change.
"""

EXAMPLES = r"""
- name: Summarize last night's jobs into files
  aisbench.agent_runtime.harbor_job_summary:
    jobs_dir: /opt/swebench/jobs
    jobs: ["nightly-*"]
    output_dir: /opt/swebench/logs/reports
    output_timestamp: "2026-12-02"
  register: summary

- name: Bring the Markdown summary home
  ansible.builtin.fetch:
    src: "{{ summary.files.md }}"
    dest: "reports/{{ inventory_hostname }}/"
    flat: true
"""

RETURN = r"""
files:
  description: Format to path of the summary files written (or, in check mode, that would be written).
  returned: always
  type: dict
  sample: {json: /opt/swebench/logs/reports/summary-20261202-060000.json}
jobs:
  description: One summary per selected job, as M(aisbench.agent_runtime.harbor_job_info) returns it.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: Job name (its directory name).
      type: str
    error:
      description: What is wrong with the job's files, or null.
      type: str
    evals:
      description: The counters per benchmark, agent and model (see M(aisbench.agent_runtime.harbor_job_info)).
      type: list
      elements: dict
    trials:
      description: With O(trials), one item per completed trial.
      returned: with O(trials)
      type: list
      elements: dict
pass_at_1:
  description: pass@1 by benchmark, agent and model, summed over the selected jobs.
  returned: always
  type: list
  elements: dict
progress:
  description: Progress of every selected job that is not finished (not written to the files).
  returned: always
  type: list
  elements: dict
errors:
  description: The jobs with an error, as C({job, error}).
  returned: always
  type: list
  elements: dict
"""

import os
import re

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._harbor_job_read import READ_OPTIONS, read_jobs
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._harbor_results import (
    REPORT_FORMATS,
    report_timestamp,
    write_reports_if_changed,
)

TIMESTAMP_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}\Z")


def main():
    module = AnsibleModule(
        argument_spec=dict(
            READ_OPTIONS,
            output_dir=dict(type="path", required=True),
            output_formats=dict(type="list", elements="str", choices=list(REPORT_FORMATS), default=list(REPORT_FORMATS)),
            output_timestamp=dict(type="str"),
        ),
        supports_check_mode=True,
    )
    params = module.params
    timestamp = params["output_timestamp"]
    if timestamp is not None and not TIMESTAMP_PATTERN.match(timestamp):
        module.fail_json(msg="output_timestamp %r refused: use letters, digits, '-' and '_' only" % timestamp)
    output_dir = params["output_dir"]
    if os.path.exists(output_dir) and not os.path.isdir(output_dir):
        module.fail_json(msg="output_dir %s exists and is not a directory" % output_dir)
    formats = []
    for fmt in params["output_formats"]:
        if fmt not in formats:
            formats.append(fmt)
    summary, output = read_jobs(module, "harbor_job_summary")
    timestamp = timestamp or report_timestamp()
    if not formats:
        files, changed = {}, False
    elif module.check_mode:
        files, changed = write_reports_if_changed(summary, output_dir, formats, timestamp, dry_run=True)
    else:
        try:
            if not os.path.isdir(output_dir):
                os.makedirs(output_dir, mode=0o755)
            files, changed = write_reports_if_changed(summary, output_dir, formats, timestamp)
        except OSError as exc:
            module.fail_json(msg="cannot write the summary files to %s: %s" % (output_dir, exc), **output)
    module.exit_json(changed=changed, files=files, **output)


if __name__ == "__main__":
    main()
