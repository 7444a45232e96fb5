# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""The images a ``docker save`` archive holds, read from its manifest.json (standard library only).

``docker save`` writes manifest.json into the tar (at its end in the legacy layout): one entry per image with its
``Config`` blob and ``RepoTags``. The config blob's name is the image ID, in the legacy layout (``<id>.json``, Docker < 25) and in the
OCI one (``blobs/sha256/<id>``, Docker >= 25). tarfile seeks over the members of an uncompressed tar, so reading the
manifest of a 1.2 GB archive takes milliseconds and no checksum of the whole file. Used by the image_archive filters
on the controller and by the docker_engine_state module on the target.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

# manifest.json of a save holding hundreds of tags is a few KB; a larger member is not Docker's.
MANIFEST_LIMIT = 4 * 1024 * 1024
_CONFIG_NAME = re.compile(r"^(?:blobs/sha256/)?([0-9a-f]{64})(?:\.json)?\Z")


class ImageArchiveError(Exception):
    pass


def _image_id(config):
    match = _CONFIG_NAME.match(config if isinstance(config, str) else "")
    if not match:
        raise ImageArchiveError("manifest.json names a config blob that is not an image ID: %r" % (config,))
    return "sha256:" + match.group(1)


def read_images(path):
    """[{"Id": "sha256:...", "RepoTags": [...]}] of the archive's manifest.json; ImageArchiveError when unreadable."""
    # Imported here: the image_archive filter loads this module in every task that uses any filter of the collection.
    import tarfile

    try:
        with tarfile.open(path, "r:*") as archive:
            try:
                member = archive.getmember("manifest.json")
            except KeyError:
                raise ImageArchiveError("no manifest.json (not a docker save archive)")
            if not member.isfile() or member.size > MANIFEST_LIMIT:
                raise ImageArchiveError("manifest.json is not a small regular file")
            manifest = json.loads(archive.extractfile(member).read().decode("utf-8"))
    except tarfile.ReadError:
        raise ImageArchiveError("not a tar archive (nor a gzip, bzip2 or xz compressed one)")
    except (OSError, EOFError, tarfile.TarError, ValueError) as exc:
        raise ImageArchiveError(str(exc) or exc.__class__.__name__)
    if not isinstance(manifest, list):
        raise ImageArchiveError("manifest.json is not a list")
    images = []
    for entry in manifest:
        if not isinstance(entry, dict):
            raise ImageArchiveError("manifest.json holds a non-object entry")
        tags = entry.get("RepoTags") or []
        images.append({"Id": _image_id(entry.get("Config")), "RepoTags": [str(tag) for tag in tags]})
    return images


def archive_state(path):
    """{"path", "exists", "images", "error"} of the archive at path: the one function the filter and the module share.

    A missing file is not an error (exists false, images []); an unreadable one has its error message.
    """
    state = {"path": path, "exists": os.path.exists(path), "images": [], "error": None}
    if state["exists"]:
        try:
            state["images"] = read_images(path)
        except ImageArchiveError as exc:
            state["error"] = str(exc)
    return state


def _normalize(ref):
    """docker save spells Docker Hub references short (debian:13, user/app:1); accept the long forms too."""
    for prefix in ("docker.io/library/", "docker.io/", "index.docker.io/library/", "index.docker.io/"):
        if ref.startswith(prefix):
            return ref[len(prefix):]
    return ref


def image_id_for(images, ref):
    """The ID of the image tagged ref in images, else of the only image; None when neither."""
    wanted = _normalize(ref)
    for image in images:
        if wanted in [_normalize(tag) for tag in image.get("RepoTags", [])]:
            return image["Id"]
    if len(images) == 1:
        return images[0]["Id"]
    return None
