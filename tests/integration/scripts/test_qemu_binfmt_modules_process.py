# -*- coding: utf-8 -*-
"""The binfmt_handler and binfmt_info modules run as Ansible runs them (a subprocess with JSON arguments).

Bad input must fail before anything on the host changes; the kernel-facing paths run for real in the
Molecule scenario qemu_binfmt.

Its pure tests: tests/unit/plugins/modules/test_qemu_binfmt_modules.py.
"""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
COLLECTIONS = os.path.join(ROOT, ".cache", "collections")
MODULES = os.path.join(COLLECTIONS, "ansible_collections", "aisbench", "agent_runtime", "plugins", "modules")
sys.path.insert(0, COLLECTIONS)

from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _arch as arch, _binfmt as binfmt  # noqa: E402

HOST = arch.qemu_arch(os.uname()[4])
FOREIGN = "aarch64" if HOST != "aarch64" else "x86_64"


def run_module(name, tmp_path, **args):
    args_file = tmp_path / ("%s-args.json" % name)
    args_file.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": args}))
    env = dict(os.environ, PYTHONPATH=COLLECTIONS + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, os.path.join(MODULES, name + ".py"), str(args_file)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=120, check=False)
    return json.loads(proc.stdout.decode())


@pytest.fixture
def sandbox(tmp_path):
    """Paths the module would write to; none of them may appear when the input is bad."""
    paths = {
        "proc_dir": tmp_path / "binfmt_misc",  # exists but is not a binfmt_misc mount
        "binfmt_d_dir": tmp_path / "binfmt.d",
        "manifest": tmp_path / "state" / "manifest.json",
    }
    paths["proc_dir"].mkdir()
    return paths


def untouched(sandbox):
    return (list(sandbox["proc_dir"].iterdir()) == [] and not sandbox["binfmt_d_dir"].exists()
            and not sandbox["manifest"].exists())


def handler_args(sandbox, **args):
    base = dict(proc_dir=str(sandbox["proc_dir"]), binfmt_d_dir=str(sandbox["binfmt_d_dir"]),
                manifest=str(sandbox["manifest"]), host_arch=HOST)
    base.update(args)
    return base


def test_an_unknown_arch_fails_naming_it(tmp_path, sandbox):
    result = run_module("binfmt_handler", tmp_path, **handler_args(sandbox, arches=[FOREIGN, "sparc9"]))
    assert result["failed"] and result["msg"].startswith("arches: unknown architecture 'sparc9'")
    assert untouched(sandbox)


def test_the_native_arch_fails_before_anything_changes(tmp_path, sandbox):
    result = run_module("binfmt_handler", tmp_path, **handler_args(sandbox, arches=[FOREIGN, HOST]))
    assert result["failed"]
    assert HOST in result["msg"] and "natively" in result["msg"]
    assert result["skipped_native"] == [HOST]
    assert untouched(sandbox)


def test_the_native_arch_of_another_spelling_fails_too(tmp_path, sandbox):
    spelling = arch.docker_platform(HOST)
    result = run_module("binfmt_handler", tmp_path, **handler_args(sandbox, arches=[spelling]))
    assert result["failed"] and HOST in result["msg"]
    assert untouched(sandbox)


def test_bad_flags_fail(tmp_path, sandbox):
    result = run_module("binfmt_handler", tmp_path, **handler_args(sandbox, arches=[FOREIGN], flags="FX"))
    assert result["failed"] and result["msg"].startswith("flags: unknown binfmt_misc flag(s) X")
    assert untouched(sandbox)


def test_a_missing_emulator_fails_before_anything_changes(tmp_path, sandbox):
    result = run_module("binfmt_handler", tmp_path,
                        **handler_args(sandbox, arches=[FOREIGN], interpreter=str(tmp_path / "no-qemu-{arch}")))
    assert result["failed"]
    assert "no-qemu-%s for %s is missing" % (FOREIGN, FOREIGN) in result["msg"]
    assert untouched(sandbox)


def test_a_corrupt_manifest_fails_clearly(tmp_path, sandbox):
    sandbox["manifest"].parent.mkdir()
    sandbox["manifest"].write_text("{not json")
    result = run_module("binfmt_handler", tmp_path, **handler_args(sandbox, state="absent"))
    assert result["failed"] and "not valid JSON" in result["msg"]
    assert sandbox["manifest"].read_text() == "{not json"


def test_bad_choices_are_refused_by_the_argument_spec(tmp_path, sandbox):
    result = run_module("binfmt_handler", tmp_path, **handler_args(sandbox, state="gone"))
    assert result["failed"] and "state" in result["msg"]
    assert untouched(sandbox)


def test_info_runs_the_native_probe(tmp_path, sandbox):
    probe_dir = str(tmp_path)
    if os.statvfs(probe_dir).f_flag & os.ST_NOEXEC:  # /tmp mounted noexec (containers)
        probe_dir = os.path.join(ROOT, ".cache")
    result = run_module("binfmt_info", tmp_path, proc_dir=str(sandbox["proc_dir"]), probe=[FOREIGN],
                        probe_dir=probe_dir, host_arch=HOST)
    assert not result.get("failed"), result
    assert result["changed"] is False and result["mounted"] is False and result["handlers"] == {}
    assert result["native_arches"] == list(arch.native_arches(HOST))
    native = result["probes"][HOST]
    assert native["ok"] and native["native"] and native["stdout"] == binfmt.probe_message(HOST).decode()
    foreign = result["probes"][FOREIGN]
    assert foreign["native"] is False
    # Either a handler of the running kernel emulates it, or the kernel refuses the executable.
    assert foreign["ok"] or "Exec format error" in foreign["stderr"]
    assert result["failed_probes"] == ([] if foreign["ok"] else [FOREIGN])
    assert not [name for name in os.listdir(probe_dir) if name.startswith("aisbench-binfmt-probe-")]


def test_info_refuses_an_unknown_arch(tmp_path):
    result = run_module("binfmt_info", tmp_path, probe=["vax"])
    assert result["failed"] and "vax" in result["msg"]
