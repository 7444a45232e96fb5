"""Every module of the collection has a check mode case in tests/integration/plays/test_check_mode.py (which runs each
through ansible-playbook, for real and then twice in check mode), or is named below with where it is covered instead.

Its tests that start a process: tests/integration/plays/test_check_mode.py.
"""
import os

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
CHECK_MODE_PLAYS = os.path.join(ROOT, "tests", "integration", "plays", "test_check_mode.py")
# Covered elsewhere, with the reason; every other module must have a case in CHECK_MODE_PLAYS.
ELSEWHERE = {"binfmt_handler": "molecule/qemu_binfmt/verify.yml (binfmt_misc is host-global)"}


def test_every_module_has_a_check_mode_case_here_or_elsewhere():
    modules = sorted(name[:-3] for name in os.listdir(os.path.join(ROOT, "plugins", "modules")) if name.endswith(".py"))
    with open(CHECK_MODE_PLAYS, encoding="utf-8") as handle:
        text = handle.read()
    covered = sorted(name for name in modules if "aisbench.agent_runtime.%s:" % name in text)
    assert sorted(set(covered) | set(ELSEWHERE)) == modules
    with open(os.path.join(ROOT, "molecule", "qemu_binfmt", "verify.yml"), encoding="utf-8") as handle:
        assert "binfmt_handler in check mode" in handle.read()
