"""tests/unit is pure: a unit test imports the collection's code and calls it, it never starts a process.

While a test under tests/unit is collected, set up, run or torn down, starting a process (subprocess, os.system,
os.posix_spawn, os.fork, ...) fails it, naming the test: a test that runs ansible-playbook, docker, a browser or any
other command belongs under tests/integration (docs/development.md, "Tests").
"""
import os
import subprocess

import pytest

# Importing ansible runs `ldconfig -p` once (ansible.utils.display's ctypes.util.find_library): done here, before any
# test, so that importing ansible in a unit test is not a process started by the test.
import ansible.utils.display  # noqa: F401  pylint: disable=unused-import

UNIT = os.path.dirname(os.path.abspath(__file__))
# Every way the standard library starts a process ends in one of these (subprocess, asyncio and pty included).
OS_SPAWNERS = ("system", "popen", "posix_spawn", "posix_spawnp", "fork", "forkpty", "spawnv", "spawnve", "spawnvp",
               "spawnvpe", "execv", "execve", "execvp", "execvpe")


class ProcessStartedInUnitTest(AssertionError):
    pass


def refuse(where):
    def refused(*args, **_kwargs):
        command = args[1] if where == "subprocess.Popen" and len(args) > 1 else args[:1]
        raise ProcessStartedInUnitTest(
            "%s started a process (%s %r): tests/unit must not start processes; a test that runs a command belongs "
            "under tests/integration" % (_CURRENT[0], where, command))
    return refused


_CURRENT = ["a unit test"]


def _guarded(nodeid):
    """Patches that make starting a process fail while `nodeid` (a test, or a module being collected) runs."""
    patch = pytest.MonkeyPatch()
    _CURRENT[0] = nodeid
    patch.setattr(subprocess.Popen, "_execute_child", refuse("subprocess.Popen"))
    for name in OS_SPAWNERS:
        if hasattr(os, name):
            patch.setattr(os, name, refuse("os." + name))
    return patch


def _under_unit(path):
    return os.path.commonpath([UNIT, os.path.abspath(str(path))]) == UNIT


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):  # pylint: disable=unused-argument
    if not _under_unit(item.path):
        yield
        return
    patch = _guarded(item.nodeid)
    try:
        yield
    finally:
        patch.undo()


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    # Module-level code runs when the module is collected (a skipif that asks `docker info`, for one).
    if not _under_unit(collector.path) or collector.path.suffix != ".py":
        yield
        return
    patch = _guarded(collector.nodeid)
    try:
        yield
    finally:
        patch.undo()
