# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""Task directories as one archive: content manifest, digest, archive, safe unpacking and the swap into place.

Shared by the task_sync action plugin (controller: manifest, digest, archive) and the task_sync module (target:
digest of what is there, unpacking, swap). Standard library only; Python 3.6+ on the target.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import os
import shutil
import stat
import tarfile

from ansible_collections.aisbench.agent_runtime.plugins.module_utils._atomic_file import atomic_write

MARKER_SUFFIX = ".task-sync.json"
CHUNK = 1024 * 1024


class SyncError(Exception):
    """A problem with the source, the archive or the destination, worded for the user."""


def _file_digest(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def tree_manifest(root):
    """{relative path: [kind, mode, sha256 or '']} of a directory tree, symlinks followed (as ansible.builtin.copy).

    Kinds are 'd' (directory) and 'f' (regular file); the root itself is not listed. Anything else (a socket,
    a FIFO, a dangling link) is an error naming it.
    """
    if not os.path.isdir(root):
        raise SyncError("%s is not a directory" % root)
    manifest = {}
    for current, dirs, files in os.walk(root, followlinks=True):
        dirs.sort()
        for name in sorted(dirs + files):
            path = os.path.join(current, name)
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            try:
                info = os.stat(path)
            except OSError as exc:
                raise SyncError("cannot read %s: %s" % (path, exc.strerror or exc))
            mode = stat.S_IMODE(info.st_mode)
            if stat.S_ISDIR(info.st_mode):
                manifest[rel] = ["d", mode, ""]
            elif stat.S_ISREG(info.st_mode):
                manifest[rel] = ["f", mode, _file_digest(path)]
            else:
                raise SyncError("%s is neither a file nor a directory" % path)
    return manifest


def manifest_digest(manifest):
    """One sha256 over the manifest: paths, kinds, modes and contents (not times, not owners)."""
    return hashlib.sha256(json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()


def manifest_changes(old, new):
    """Added, changed (content or mode) and removed paths, each sorted."""
    old = old or {}
    added = sorted(path for path in new if path not in old)
    removed = sorted(path for path in old if path not in new)
    changed = sorted(path for path in new if path in old and list(old[path]) != list(new[path]))
    return {"added": added, "changed": changed, "removed": removed}


def write_archive(root, manifest, archive_path):
    """A gzip'd tar of the manifest's entries (in its order, owner root, modes and times kept)."""
    with tarfile.open(archive_path, "w:gz", compresslevel=1) as archive:
        for rel in sorted(manifest):
            path = os.path.join(root, rel)
            info = archive.gettarinfo(path, arcname=rel)
            if manifest[rel][0] == "d" and not info.isdir() or manifest[rel][0] == "f" and not info.isreg():
                # A symlink: store what it points to, as the manifest does.
                real = os.stat(path)
                info.type = tarfile.DIRTYPE if manifest[rel][0] == "d" else tarfile.REGTYPE
                info.size = 0 if manifest[rel][0] == "d" else real.st_size
                info.linkname = ""
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            info.mode = manifest[rel][1]
            if info.isreg():
                with open(path, "rb") as handle:
                    archive.addfile(info, handle)
            else:
                archive.addfile(info)


def _safe_name(name):
    parts = name.split("/")
    return bool(name) and not name.startswith("/") and ".." not in parts and "" not in parts and "." not in parts


def unpack(archive_path, target):
    """Unpack an archive written by write_archive into the new directory target: only files and directories,
    only below target (absolute names, '..' and links are refused). Owner: whoever runs this."""
    os.makedirs(target)
    with tarfile.open(archive_path, "r:*") as archive:
        for member in archive:
            if not _safe_name(member.name):
                raise SyncError("the archive has an unsafe entry %r" % member.name)
            path = os.path.join(target, member.name)
            if member.isdir():
                if not os.path.isdir(path):
                    os.makedirs(path)
                os.chmod(path, member.mode | stat.S_IWUSR | stat.S_IXUSR)
            elif member.isreg():
                parent = os.path.dirname(path)
                if not os.path.isdir(parent):
                    os.makedirs(parent)
                source = archive.extractfile(member)
                with open(path, "wb") as handle:
                    shutil.copyfileobj(source, handle, CHUNK)
                os.chmod(path, member.mode)
                os.utime(path, (member.mtime, member.mtime))
            else:
                raise SyncError("the archive has an entry that is not a file or directory: %r" % member.name)
    # Directory modes without write permission are set last, once their content is in place.
    with tarfile.open(archive_path, "r:*") as archive:
        for member in archive:
            if member.isdir():
                os.chmod(os.path.join(target, member.name), member.mode)


def marker_path(dest):
    """The sync record lives beside the destination, so the task directory holds only the tasks."""
    dest = dest.rstrip("/")
    return os.path.join(os.path.dirname(dest), "." + os.path.basename(dest) + MARKER_SUFFIX)


def read_marker(dest):
    try:
        with open(marker_path(dest)) as handle:
            data = json.load(handle)
    except (OSError, IOError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("digest"), str) else None


def write_marker(dest, digest, manifest):
    atomic_write(marker_path(dest), json.dumps({"digest": digest, "manifest": manifest}, sort_keys=True, separators=(",", ":")))


def swap_into_place(new_tree, dest):
    """Replace dest with new_tree by two renames; the old tree is removed afterwards."""
    old = None
    if os.path.lexists(dest):
        old = os.path.join(os.path.dirname(dest), "." + os.path.basename(dest) + ".task-sync-old")
        if os.path.lexists(old):
            shutil.rmtree(old)
        os.rename(dest, old)
    os.rename(new_tree, dest)
    if old:
        shutil.rmtree(old)
