# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0 (see LICENSE)
"""Atomic file writes: the one rule (standard library only, so it also serves action plugins on the controller,
where there is no AnsibleModule and so no ``atomic_move``).

A reader sees the old file or the new one, never a part: the content goes to a temporary file in the same
directory, is flushed to disk (fsync) and renamed over the path (``os.replace``). A failed write leaves the old
file as it was and no temporary file behind.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import binascii
import errno
import os
import shutil
import tempfile

BLOCK_SIZE = 1 << 20


def _current_umask():
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _write_content(handle, content, encoding):
    if isinstance(content, bytes):
        handle.write(content)
    elif isinstance(content, str):
        handle.write(content.encode(encoding))
    else:  # a binary file object, copied in blocks (large files need not fit in memory)
        for block in iter(lambda: content.read(BLOCK_SIZE), b""):
            handle.write(block)


def _keep_attributes(existing, temporary):
    """Give the temporary file the existing file's mode, owner and extended attributes (as atomic_move does)."""
    info = os.stat(existing)
    try:
        os.chown(temporary, info.st_uid, info.st_gid)
    except OSError as exc:
        if exc.errno != errno.EPERM:
            raise
    shutil.copystat(existing, temporary)


def atomic_write(path, content, mode=None, encoding="utf-8"):
    """Replace path with content (str, bytes or a binary file object) in one rename.

    mode: the file's mode afterwards. None keeps an existing file's mode, owner and extended attributes and gives a
    new file 0666 minus the umask (what AnsibleModule.atomic_move does). A symlink at path is replaced, not followed.
    """
    directory = os.path.dirname(os.path.abspath(path))
    fd, temporary = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            _write_content(handle, content, encoding)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        elif os.path.isfile(path) and not os.path.islink(path):
            _keep_attributes(path, temporary)
        else:
            os.chmod(temporary, 0o666 & ~_current_umask())
        os.replace(temporary, path)
    except BaseException:
        if os.path.lexists(temporary):
            os.unlink(temporary)
        raise


def atomic_symlink(target, path):
    """Point the symlink at path to target in one rename (a reader never finds path missing)."""
    directory = os.path.dirname(os.path.abspath(path))
    for _attempt in range(100):
        temporary = os.path.join(directory, ".%s.%s.tmp" % (os.path.basename(path), binascii.hexlify(os.urandom(6)).decode()))
        try:
            os.symlink(target, temporary)  # fails rather than follows when the name is taken
            break
        except OSError as exc:
            if exc.errno != errno.EEXIST:
                raise
    else:
        raise OSError(errno.EEXIST, "no free temporary name next to %s" % path)
    try:
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
