# -*- coding: utf-8 -*-
"""binfmt_handler's decisions about native executables, run on the module's own Handler in check mode.

Check mode keeps the kernel untouched (binfmt_misc is host-global) while the Handler tracks what the kernel would
hold; the native headers are the running kernel's own (uname and /bin/sh), as in the module.

Its pure tests: tests/unit/plugins/modules/test_binfmt_handler_guard.py.
"""

import os
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, ".cache", "collections"))

from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _binfmt as binfmt  # noqa: E402

KERNEL = binfmt.running_kernel()
HOST = KERNEL["arch"]


def test_the_module_refuses_a_fact_that_disagrees_with_the_kernel(tmp_path):
    from test_qemu_binfmt_modules_process import handler_args, run_module, untouched  # noqa: E402
    sandbox = {"proc_dir": tmp_path / "binfmt_misc", "binfmt_d_dir": tmp_path / "binfmt.d",
               "manifest": tmp_path / "state" / "manifest.json"}
    sandbox["proc_dir"].mkdir()
    wrong = "riscv64" if HOST != "riscv64" else "aarch64"
    # The outage: a stale fact makes the host's own architecture look foreign.
    result = run_module("binfmt_handler", tmp_path, **handler_args(sandbox, arches=[HOST], host_arch=wrong))
    assert result["failed"]
    assert result["msg"].startswith("host_arch is %s but the running kernel is %s (uname -m: " % (wrong, HOST))
    assert untouched(sandbox)
    info = run_module("binfmt_info", tmp_path, proc_dir=str(sandbox["proc_dir"]), probe_native=False, host_arch=wrong)
    assert info["failed"] and info["msg"].startswith("host_arch is %s but the running kernel is %s" % (wrong, HOST))
