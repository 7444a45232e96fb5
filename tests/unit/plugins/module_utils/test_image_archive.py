# -*- coding: utf-8 -*-
"""The image ID of a docker save archive (module_utils/_image_archive.py), its filter and docker_engine_state's
archives option: on a real `docker save` tar of a tiny imported image (when an engine answers here) in the layout
this engine writes, the same image rewritten in the other layout (legacy <id>.json / OCI blobs/sha256/<id>), and
hand-made broken archives.

Its tests that start a process: tests/integration/docker/test_image_archive_docker.py.
"""

import gzip
import io
import json
import tarfile

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.aisbench.agent_runtime.plugins.filter.image_archive import FilterModule
from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _image_archive as image_archive

IMAGE_ID = FilterModule().filters()["image_archive_id"]


def _write(path, files, compress=False):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, data in files:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    data = buffer.getvalue()
    with open(path, "wb") as handle:
        handle.write(gzip.compress(data) if compress else data)
    return str(path)


HEX_A, HEX_B = "a" * 64, "b" * 64


def test_several_images_pick_the_tag(tmp_path):
    manifest = [{"Config": "%s.json" % HEX_A, "RepoTags": ["one:1"]},
                {"Config": "blobs/sha256/" + HEX_B, "RepoTags": ["two:2", "debian:13"]}]
    path = _write(tmp_path / "two.tar", [("manifest.json", json.dumps(manifest).encode())])
    assert IMAGE_ID(path, "one:1") == "sha256:" + HEX_A
    assert IMAGE_ID(path, "docker.io/library/debian:13") == "sha256:" + HEX_B
    with pytest.raises(AnsibleFilterError, match="holds no image tagged three:3"):
        IMAGE_ID(path, "three:3")
    assert IMAGE_ID(path, "three:3", strict=False) == ""


def test_an_untagged_single_image_is_the_archive_s_image(tmp_path):
    path = _write(tmp_path / "one.tar", [("manifest.json", json.dumps([{"Config": HEX_A + ".json"}]).encode())])
    assert IMAGE_ID(path, "any:1") == "sha256:" + HEX_A


@pytest.mark.parametrize("files, message", [
    ([("repositories", b"{}")], "no manifest.json"),
    ([("manifest.json", b"{not json")], "Expecting"),
    ([("manifest.json", b'{"Config": "x"}')], "not a list"),
    ([("manifest.json", b'[{"Config": "../../etc/passwd"}]')], "not an image ID"),
])
def test_broken_archives_name_the_problem(tmp_path, files, message):
    path = _write(tmp_path / "broken.tar", files)
    state = image_archive.archive_state(path)
    assert state["exists"] and state["images"] == [] and message in state["error"]
    with pytest.raises(AnsibleFilterError, match="broken.tar is not a docker save archive"):
        IMAGE_ID(path, "x:1")
