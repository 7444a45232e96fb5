# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # The runtime option of the harbor modules (action group aisbench.agent_runtime.harbor).
    DOCUMENTATION = r"""
options:
  runtime:
    description:
      - The runtime contract the runtime_container role records on the host, the local fact C(aisbench_runtime)
        (C(ansible_local.aisbench_runtime); its keys are listed in docs/layers.md). Options the task does not set
        are taken from it; an option set in the task wins.
      - M(aisbench.agent_runtime.harbor_job) takes C(container), C(jobs_dir) (inside the container) and
        C(host_jobs_dir); M(aisbench.agent_runtime.harbor_job_info) and M(aisbench.agent_runtime.harbor_job_summary)
        take C(jobs_dir) from the contract's C(host_jobs_dir); M(aisbench.agent_runtime.harbor_matrix_units) takes
        C(container) and C(path_map) (the jobs, tasks and config directories, inside to host).
      - A contract of another version or without the keys the module needs is refused (rerun site.yml).
      - Meant for C(module_defaults) of the action group C(group/aisbench.agent_runtime.harbor), set once per play.
    type: dict
"""
