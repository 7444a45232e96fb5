"""task_sync: the manifest, digest, archive and swap (module_utils).
Its tests that start a process: tests/integration/plays/test_task_sync_play.py."""
import os
import tarfile

import pytest
from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _task_sync as ts


def make_tree(root):
    (root / "hello" / "tests").mkdir(parents=True)
    (root / "hello" / "task.toml").write_text("version = '1.0'\n")
    (root / "hello" / "tests" / "test.sh").write_text("#!/bin/sh\nexit 0\n")
    (root / "hello" / "tests" / "test.sh").chmod(0o755)
    (root / "empty").mkdir()
    return root


def test_manifest_lists_files_and_directories_with_modes_and_contents(tmp_path):
    manifest = ts.tree_manifest(str(make_tree(tmp_path / "src")))
    assert sorted(manifest) == ["empty", "hello", "hello/task.toml", "hello/tests", "hello/tests/test.sh"]
    assert manifest["hello/tests/test.sh"][:2] == ["f", 0o755]
    assert manifest["empty"] == ["d", manifest["empty"][1], ""]
    assert len(manifest["hello/task.toml"][2]) == 64


def test_digest_follows_content_and_mode_not_times(tmp_path):
    src = make_tree(tmp_path / "src")
    before = ts.manifest_digest(ts.tree_manifest(str(src)))
    os.utime(str(src / "hello" / "task.toml"), (1, 1))
    assert ts.manifest_digest(ts.tree_manifest(str(src))) == before
    (src / "hello" / "task.toml").chmod(0o600)
    after_mode = ts.manifest_digest(ts.tree_manifest(str(src)))
    assert after_mode != before
    (src / "hello" / "task.toml").write_text("version = '1.1'\n")
    assert ts.manifest_digest(ts.tree_manifest(str(src))) not in (before, after_mode)


def test_changes_name_added_changed_and_removed_paths(tmp_path):
    src = make_tree(tmp_path / "src")
    old = ts.tree_manifest(str(src))
    (src / "hello" / "task.toml").write_text("changed\n")
    (src / "empty").rmdir()
    (src / "new.txt").write_text("new\n")
    assert ts.manifest_changes(old, ts.tree_manifest(str(src))) == {
        "added": ["new.txt"], "changed": ["hello/task.toml"], "removed": ["empty"]}
    assert ts.manifest_changes(None, old)["added"] == sorted(old)


def test_archive_round_trips_to_the_same_digest_with_links_followed(tmp_path):
    src = make_tree(tmp_path / "src")
    (tmp_path / "outside.txt").write_text("followed\n")
    os.symlink(str(tmp_path / "outside.txt"), str(src / "hello" / "link.txt"))
    manifest = ts.tree_manifest(str(src))
    archive = str(tmp_path / "tasks.tar.gz")
    ts.write_archive(str(src), manifest, archive)
    target = tmp_path / "unpacked"
    ts.unpack(archive, str(target))
    assert ts.tree_manifest(str(target)) == manifest
    assert not os.path.islink(str(target / "hello" / "link.txt"))
    assert (target / "hello" / "link.txt").read_text() == "followed\n"


def test_a_fifo_in_the_source_is_named(tmp_path):
    src = make_tree(tmp_path / "src")
    os.mkfifo(str(src / "hello" / "pipe"))
    with pytest.raises(ts.SyncError, match="pipe is neither a file nor a directory"):
        ts.tree_manifest(str(src))


@pytest.mark.parametrize("name", ["../escape", "/etc/passwd", "a/../../b", "./x"])
def test_unpack_refuses_entries_outside_the_target(tmp_path, name):
    archive = str(tmp_path / "evil.tar.gz")
    with tarfile.open(archive, "w:gz") as handle:
        info = tarfile.TarInfo(name)
        handle.addfile(info)
    with pytest.raises(ts.SyncError, match="unsafe entry"):
        ts.unpack(archive, str(tmp_path / "target"))
    assert not (tmp_path / "escape").exists()


def test_unpack_refuses_links(tmp_path):
    archive = str(tmp_path / "link.tar.gz")
    with tarfile.open(archive, "w:gz") as handle:
        info = tarfile.TarInfo("link")
        info.type = tarfile.SYMTYPE
        info.linkname = "/etc/shadow"
        handle.addfile(info)
    with pytest.raises(ts.SyncError, match="not a file or directory"):
        ts.unpack(archive, str(tmp_path / "target"))


def test_swap_replaces_the_destination_and_leaves_no_old_tree(tmp_path):
    dest = tmp_path / "tasks"
    dest.mkdir()
    (dest / "stale").write_text("x")
    new = tmp_path / "new"
    new.mkdir()
    (new / "fresh").write_text("y")
    ts.swap_into_place(str(new), str(dest))
    assert os.listdir(str(dest)) == ["fresh"]
    assert sorted(os.listdir(str(tmp_path))) == ["tasks"]
