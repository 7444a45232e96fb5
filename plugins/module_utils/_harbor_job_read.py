# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""The options and the read that harbor_job_info (returns the summary) and harbor_job_summary (also writes it)
share: one argument spec, one set of checks, one summary (docs: doc_fragments/harbor_jobs.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.aisbench.agent_runtime.plugins.module_utils._harbor_results import job_progress, summarize
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._runtime_contract import apply_contract

READ_OPTIONS = dict(
    jobs_dir=dict(type="path"),
    jobs=dict(type="list", elements="str", default=["all"]),
    details=dict(type="bool", default=True),
    trials=dict(type="bool", default=False),
    reward_key=dict(type="str", no_log=False),
    runtime=dict(type="dict"),
)


def read_jobs(module, name):
    """Check the read options (failing the module on a bad one) and summarize the jobs.

    Returns (summary, output): the summary harbor_results renders into files, and the module's result without
    `changed` and `files`.
    """
    params = module.params
    problem = apply_contract(params, name)
    if problem:
        module.fail_json(msg=problem)
    jobs_dir = params["jobs_dir"]
    if not jobs_dir:
        module.fail_json(msg="jobs_dir is required (or runtime, the runtime contract that gives it)")
    if not os.path.isdir(jobs_dir):
        module.fail_json(msg="jobs_dir %s is not a directory" % jobs_dir)
    if params["reward_key"] is not None and not params["reward_key"].strip():
        module.fail_json(msg="reward_key refused: an empty key")
    summary = summarize(jobs_dir, params["jobs"], params["details"], params["reward_key"], params["trials"])
    output = {
        "jobs": summary["jobs"],
        "pass_at_1": summary["pass_at_1"],
        "progress": [job_progress(job["path"], job) for job in summary["jobs"] if job["status"] == "unfinished"],
        "errors": [{"job": job["name"], "error": job["error"]} for job in summary["jobs"] if job["error"]],
    }
    return summary, output
