"""atomic_file: the one atomic write (modules on the target and action plugins on the controller call it)."""

import io
import os
import stat
from pathlib import Path

import pytest

from ansible_collections.aisbench.agent_runtime.plugins.module_utils._atomic_file import atomic_symlink, atomic_write

PLUGINS = Path(__file__).resolve().parents[4] / "plugins"


def mode_of(path):
    return stat.S_IMODE(os.lstat(str(path)).st_mode)


class Exploding(io.RawIOBase):
    """A binary source that fails after its first block, as a broken transfer would."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def read(self, size=-1):
        self.calls += 1
        if self.calls > 1:
            raise OSError("source went away")
        return b"partial"


def test_text_bytes_and_file_objects(tmp_path):
    path = tmp_path / "f"
    atomic_write(str(path), "ünï\n", 0o600)
    assert path.read_bytes() == "ünï\n".encode("utf-8") and mode_of(path) == 0o600
    atomic_write(str(path), b"\x00bytes", 0o640)
    assert path.read_bytes() == b"\x00bytes" and mode_of(path) == 0o640
    big = os.urandom(3 * (1 << 20) + 5)  # more than one block
    atomic_write(str(path), io.BytesIO(big), 0o644)
    assert path.read_bytes() == big
    assert os.listdir(str(tmp_path)) == ["f"]


def test_mode_none_keeps_an_existing_files_mode_and_a_new_file_follows_the_umask(tmp_path):
    path = tmp_path / "kept"
    path.write_text("old")
    os.chmod(str(path), 0o604)
    atomic_write(str(path), "new")
    assert path.read_text() == "new" and mode_of(path) == 0o604
    old_umask = os.umask(0o027)
    try:
        atomic_write(str(tmp_path / "fresh"), "x")
    finally:
        os.umask(old_umask)
    assert mode_of(tmp_path / "fresh") == 0o640


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "f"
    path.write_text("old")
    with pytest.raises(OSError, match="source went away"):
        atomic_write(str(path), Exploding(), 0o644)
    assert path.read_text() == "old"
    assert os.listdir(str(tmp_path)) == ["f"]
    with pytest.raises(OSError):
        atomic_write(str(tmp_path / "missing-dir" / "f"), "x")
    assert os.listdir(str(tmp_path)) == ["f"]


def test_a_symlink_is_replaced_not_followed(tmp_path):
    target = tmp_path / "target"
    target.write_text("keep")
    link = tmp_path / "link"
    link.symlink_to(target)
    atomic_write(str(link), "file now")
    assert not link.is_symlink() and link.read_text() == "file now"
    assert target.read_text() == "keep"


def test_atomic_symlink_repoints_in_one_rename(tmp_path):
    link = tmp_path / "latest"
    atomic_symlink("2026-12-01", str(link))
    assert os.readlink(str(link)) == "2026-12-01"
    atomic_symlink("2026-12-02", str(link))
    assert os.readlink(str(link)) == "2026-12-02"
    assert sorted(os.listdir(str(tmp_path))) == ["latest"]


def test_plugins_write_files_atomically_only_through_atomic_file():
    """One rule in one place: no other plugin renames a finished file into place or calls atomic_move."""
    offenders = []
    for source in sorted(PLUGINS.rglob("*.py")):
        if source.name == "_atomic_file.py":
            continue
        text = source.read_text(encoding="utf-8")
        if "os.replace(" in text or ".atomic_move(" in text:
            offenders.append(str(source.relative_to(PLUGINS)))
    assert offenders == []
