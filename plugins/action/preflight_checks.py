# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""Controller side of preflight_checks: checks the input, brackets the round trip with the controller's clock,
and fails the task when a required check failed.

The target reads its clock when the module starts. The controller's clock at that moment lies between
the time this plugin sent the task and the time the result came back minus the module's own run time,
so the clock check is computed here against the middle of that window (see check_clock).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible.errors import AnsibleError
from ansible.plugins.action import ActionBase
from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _preflight as pf

MODULE = "aisbench.agent_runtime.preflight_checks"


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        task_vars = task_vars or {}
        # The same rules as the module, before the round trip: bad input fails without touching the host.
        dummy, params = self.validate_argument_spec(pf.ARGUMENT_SPEC)
        names = params["input_names"] or {}
        problems = pf.input_problems(params, names)
        cas = {}
        for where, path in sorted((params["registry_ca_files"] or {}).items()):
            try:
                with open(self._find_needle("files", path), "r") as handle:
                    cas[where] = handle.read()
            except (AnsibleError, OSError) as exc:
                problems.append("%s: [%r] %s is not a readable file on the controller (%s)" % (
                    names.get("registry_ca_files") or "registry_ca_files", where, path, exc))
        if problems:
            result.update(failed=True, msg=" ".join(problem + "." for problem in problems))
            return result
        module_args = dict(self._task.args)
        module_args.pop("registry_ca_files", None)
        module_args["registry_ca_certificates"] = dict(params["registry_ca_certificates"] or {}, **cas)
        try:
            before = time.time()
            module_args["controller_time"] = before
            module_result = self._execute_module(module_name=MODULE, module_args=module_args, task_vars=task_vars)
            after = time.time()
        finally:
            self._remove_tmp_path(self._connection._shell.tmpdir)
        result.update(module_result)
        if result.get("failed") or "checks" not in result:
            return result
        clock = result["by_name"].get("clock") or {}
        max_skew = (clock.get("details") or {}).get("max_skew_seconds")
        if clock.get("status") != pf.SKIP and max_skew is not None:
            measured = pf.check_clock(max_skew, result["target_time"], before, after - float(result.get("elapsed") or 0.0))
            checks, failed_required, summary = pf.replace_check(result["checks"], measured)
            result.update(checks=checks, by_name=dict((item["name"], item) for item in checks),
                          failed_required=failed_required, summary=summary)
        if result["failed_required"]:
            host = task_vars.get("inventory_hostname", "the host")
            result.update(failed=True, msg=pf.required_failure(host, result["checks"], result["failed_required"], names))
            # A failed task sets no facts; leaving them out keeps the failure's output to the checks.
            result.pop("ansible_facts", None)
        return result
