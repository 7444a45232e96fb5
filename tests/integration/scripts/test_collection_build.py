"""`ansible-galaxy collection build` packs the collection, not what `make unit`, `make demo` or a venv leave behind.

The build runs on a copy of what git would commit plus the leftovers a used checkout has (galaxy.yml's build_ignore
must drop them), and once on this checkout as it is.
"""
import os
import subprocess
import sys
import tarfile

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
ANSIBLE_GALAXY = os.path.join(os.path.dirname(sys.executable), "ansible-galaxy")

# What a used checkout holds besides the collection (one file in each).
LEFTOVERS = [
    "reports/2026-12-03/fleet-report.md",
    ".pytest_cache/v/cache/lastfailed",
    ".venv/bin/python",
    ".cache/collections/marker",
    "plugins/modules/__pycache__/harbor_job.cpython-311.pyc",
    "tests/unit/__pycache__/conftest.cpython-311-pytest-9.2.0.pyc",
    "tests/output/junit/sanity.xml",
    "bench/results/run.json",
    "playbooks/site.retry",
    "aisbench-agent_runtime-0.1.0.tar.gz",
]
IGNORED_PREFIXES = ("reports/", ".pytest_cache/", ".venv/", ".cache/", ".git/", "tests/output/", "bench/results/")


def build(source, output):
    proc = subprocess.run([ANSIBLE_GALAXY, "collection", "build", "--output-path", str(output), str(source)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    tarballs = [name for name in os.listdir(str(output)) if name.endswith(".tar.gz")]
    assert len(tarballs) == 1, tarballs
    with tarfile.open(os.path.join(str(output), tarballs[0])) as tarball:
        return sorted(tarball.getnames())


def assert_only_the_collection(names):
    leaked = [name for name in names if name.startswith(IGNORED_PREFIXES) or "__pycache__" in name
              or name.endswith((".pyc", ".retry", ".tar.gz"))]
    assert not leaked, leaked
    for needed in ("LICENSE", "README.md", "MANIFEST.json", "FILES.json", "meta/runtime.yml",
                   "plugins/modules/harbor_job.py", "roles/runtime_container/tasks/main.yml",
                   "tests/sanity/ignore-2.19.txt"):
        assert needed in names, needed


@pytest.fixture(name="used_checkout")
def used_checkout_fixture(tmp_path):
    """A copy of the committed tree (tracked and untracked, not ignored) plus the leftovers of a used checkout."""
    copy = tmp_path / "checkout"
    copy.mkdir()
    files = subprocess.run(["git", "-C", ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           capture_output=True, check=True).stdout.split(b"\0")
    for name in filter(None, files):
        source = os.path.join(ROOT.encode(), name)
        if not os.path.isfile(source):  # deleted in the worktree, not yet committed
            continue
        target = os.path.join(str(copy).encode(), name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(source, "rb") as reader, open(target, "wb") as writer:
            writer.write(reader.read())
    for leftover in LEFTOVERS:
        (copy / leftover).parent.mkdir(parents=True, exist_ok=True)
        (copy / leftover).write_text("left behind\n")
    return copy


def test_build_leaves_out_reports_caches_venvs_and_test_output(used_checkout, tmp_path):
    names = build(used_checkout, tmp_path / "out")
    assert_only_the_collection(names)
    for leftover in LEFTOVERS:
        assert leftover not in names, leftover


def test_build_of_this_checkout_packs_only_the_collection(tmp_path):
    assert_only_the_collection(build(ROOT, tmp_path / "out"))
