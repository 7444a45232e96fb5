"""CI never skips silently: with CI=true a skipped test fails, unless its reason is on the reviewed allow-list.

A pytest plugin, loaded by tests/conftest.py for tests/unit and tests/integration (`make unit`, `make integration`;
`make test` and `.ci/run` set CI=true).
A skip outside CI stays a skip (contributors without Docker, qemu-user-static or chromium: docs/development.md).
The end of every run prints the allow-list and the skips it let through.
"""

import os

import pytest

# Reviewed: hardware no CI machine of this project has (README, "Supported platforms"). A test that cannot run without
# it skips with a reason that starts with one of these keys; any other skip fails in CI.
ALLOWED_SKIPS = {
    "no NVIDIA GPU": "no GPU is reachable from CI: nvidia-smi checks are not run",
    "no arm64 hardware": "arm64 runs only under qemu emulation here",
}

_ALLOWED_TAKEN = []


def in_ci():
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def skip_reason(report):
    """The reason pytest recorded for a skip (its longrepr is (path, line, 'Skipped: reason'))."""
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return text[len("Skipped: "):] if text.startswith("Skipped: ") else text


def allowed(reason):
    return any(reason.startswith(key) for key in ALLOWED_SKIPS)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):  # pylint: disable=unused-argument
    outcome = yield
    report = outcome.get_result()
    if not report.skipped or hasattr(report, "wasxfail") or not in_ci():
        return
    reason = skip_reason(report)
    if allowed(reason):
        _ALLOWED_TAKEN.append("%s: %s" % (item.nodeid, reason))
        return
    report.outcome = "failed"
    report.longrepr = ("CI=true: this test was skipped (%s); in CI a skip fails unless its reason starts with an entry "
                       "of the allow-list in tests/ci_skip_policy.py (%s). Install what it needs (tests/host/prepare.sh, "
                       "make setup) or make the Makefile target depend on it." % (reason, "; ".join(ALLOWED_SKIPS)))


def pytest_terminal_summary(terminalreporter):
    write = terminalreporter.write_line
    if in_ci():
        write("CI skip policy (CI=true): a skip fails unless on the allow-list: %s" % "; ".join(
            "%s (%s)" % item for item in ALLOWED_SKIPS.items()))
        write("allowed skips in this run: %d%s" % (len(_ALLOWED_TAKEN), "".join("\n  " + line for line in _ALLOWED_TAKEN)))
    else:
        skipped = len(terminalreporter.stats.get("skipped", []))
        write("CI skip policy not enforced (CI is not true): %d skipped; with CI=true each would fail unless on the "
              "allow-list (%s)" % (skipped, "; ".join(ALLOWED_SKIPS)))
