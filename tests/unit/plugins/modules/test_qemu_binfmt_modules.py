# -*- coding: utf-8 -*-
"""binfmt_handler's handler files: written atomically, an existing file's mode kept.
Its tests that start a process: tests/integration/scripts/test_qemu_binfmt_modules_process.py."""
import os
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".."))
COLLECTIONS = os.path.join(ROOT, ".cache", "collections")
sys.path.insert(0, COLLECTIONS)


def test_handler_files_are_written_atomically_keeping_an_existing_files_mode(tmp_path):
    """binfmt_handler's one file writer (write_path) goes through module_utils/_atomic_file like every plugin."""
    from types import SimpleNamespace

    from ansible_collections.aisbench.agent_runtime.plugins.modules.binfmt_handler import Handler

    handler = Handler(SimpleNamespace(params={"proc_dir": str(tmp_path)}, check_mode=False))
    conf = tmp_path / "binfmt.d" / "qemu-aarch64.conf"
    handler.write_path(str(conf), {"content": ":qemu-aarch64:M::x:y:/usr/bin/qemu-aarch64:F\n"})
    assert conf.read_text() == ":qemu-aarch64:M::x:y:/usr/bin/qemu-aarch64:F\n"
    os.chmod(str(conf), 0o600)
    handler.write_path(str(conf), {"content": "changed\n"})
    assert conf.read_text() == "changed\n" and os.stat(str(conf)).st_mode & 0o777 == 0o600
    handler.write_path(str(conf), {"symlink": "/dev/null"})
    assert os.readlink(str(conf)) == "/dev/null"
    handler.write_path(str(conf), {"content": "file again\n"})
    assert not conf.is_symlink() and conf.read_text() == "file again\n"
    handler.write_path(str(conf), None)
    assert os.listdir(str(conf.parent)) == []
