# -*- coding: utf-8 -*-
"""The image ID of a docker save archive (module_utils/_image_archive.py), its filter and docker_engine_state's
archives option: on a real `docker save` tar of a tiny imported image (when an engine answers here) in the layout
this engine writes, the same image rewritten in the other layout (legacy <id>.json / OCI blobs/sha256/<id>), and
hand-made broken archives.

Its pure tests: tests/unit/plugins/module_utils/test_image_archive.py.
"""

import gzip
import hashlib
import json
import shutil
import subprocess
import tarfile
import uuid

import pytest
from ansible.errors import AnsibleFilterError
from ansible.module_utils.testing import patch_module_args
from ansible_collections.aisbench.agent_runtime.plugins.filter.image_archive import FilterModule
from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _image_archive as image_archive
from ansible_collections.aisbench.agent_runtime.plugins.modules import docker_engine_state

from test_image_archive import _write

IMAGE_ID = FilterModule().filters()["image_archive_id"]


def _docker_works():
    if not shutil.which("docker"):
        return False
    return subprocess.run(["docker", "version"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          check=False).returncode == 0


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """(path, image ID, tag) of `docker save` of a one-file image made with `docker import` (removed again)."""
    if not _docker_works():
        pytest.skip("no Docker engine answers here")
    work = tmp_path_factory.mktemp("saved")
    root = work / "root"
    root.mkdir()
    (root / "hello").write_text("image archive unit test\n")
    tag = "aisbench-unit/image-archive:%s" % uuid.uuid4().hex[:12]
    layer = subprocess.run(["tar", "-C", str(root), "-c", "."], check=True, stdout=subprocess.PIPE).stdout
    try:
        subprocess.run(["docker", "import", "-", tag], input=layer, check=True, stdout=subprocess.DEVNULL)
        image_id = subprocess.run(["docker", "image", "inspect", "--format", "{{.Id}}", tag], check=True,
                                  stdout=subprocess.PIPE, universal_newlines=True).stdout.strip()
        path = str(work / "saved.tar")
        subprocess.run(["docker", "save", "-o", path, tag], check=True)
    finally:
        subprocess.run(["docker", "rmi", "-f", tag], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return path, image_id, tag


def _members(path):
    with tarfile.open(path) as archive:
        return {member.name: archive.extractfile(member).read() for member in archive.getmembers() if member.isfile()}


def _sha(data):
    return hashlib.sha256(data).hexdigest()


def _other_layout(saved_path, out):
    """The saved image in the layout the engine did not write: legacy (<id>.json, <layer>/layer.tar) <-> OCI
    (Docker >= 25: blobs/sha256/<digest>, index.json, oci-layout; manifest.json kept for docker load)."""
    files = _members(saved_path)
    manifest = json.loads(files["manifest.json"])[0]
    config = files[manifest["Config"]]
    layers = [files[name] for name in manifest["Layers"]]
    if manifest["Config"].startswith("blobs/"):
        entries = [("%s.json" % _sha(config), config)]
        names = []
        for layer in layers:
            names.append("%s/layer.tar" % _sha(layer))
            entries.append((names[-1], layer))
        entries.append(("manifest.json", json.dumps(
            [{"Config": "%s.json" % _sha(config), "RepoTags": manifest["RepoTags"], "Layers": names}]).encode()))
    else:
        entries = [("blobs/sha256/%s" % _sha(blob), blob) for blob in [config] + layers]
        entries += [("index.json", b'{"schemaVersion": 2, "manifests": []}'),
                    ("manifest.json", json.dumps([{"Config": "blobs/sha256/%s" % _sha(config),
                                                   "RepoTags": manifest["RepoTags"],
                                                   "Layers": ["blobs/sha256/%s" % _sha(layer) for layer in layers]}]).encode()),
                    ("oci-layout", b'{"imageLayoutVersion": "1.0.0"}')]
    return _write(out, entries)


def test_a_real_docker_save_archive_gives_the_engine_s_image_id(saved):
    path, image_id, tag = saved
    assert image_archive.read_images(path) == [{"Id": image_id, "RepoTags": [tag]}]
    assert IMAGE_ID(path, tag) == image_id
    assert IMAGE_ID(path, "docker.io/" + tag) == image_id


def test_the_other_layout_gives_the_same_id(saved, tmp_path):
    path, image_id, tag = saved
    other = _other_layout(path, tmp_path / "other.tar")
    layouts = {json.loads(_members(p)["manifest.json"])[0]["Config"].startswith("blobs/") for p in (path, other)}
    assert layouts == {True, False}
    assert IMAGE_ID(other, tag) == image_id


def test_a_compressed_archive_is_read_too(saved, tmp_path):
    path, image_id, tag = saved
    with open(path, "rb") as handle:
        data = handle.read()
    compressed = tmp_path / "saved.tar.gz"
    compressed.write_bytes(gzip.compress(data))
    assert IMAGE_ID(str(compressed), tag) == image_id


def test_the_module_reports_each_archive_on_the_target(saved, tmp_path, capsys):
    path, image_id, tag = saved
    missing = str(tmp_path / "missing.tar")
    junk = tmp_path / "junk.tar"
    junk.write_bytes(b"not a tar at all")
    args = {"archives": [path, missing, str(junk)], "engine_info": False, "docker_executable": "no-such-docker",
            "daemon_json_path": str(tmp_path / "daemon.json"), "service_name": "no-such-unit"}
    with patch_module_args(args):
        with pytest.raises(SystemExit) as exc:
            docker_engine_state.main()
    assert exc.value.code == 0
    result = json.loads(capsys.readouterr().out)
    archives = result["archives"]
    assert archives[path] == {"path": path, "exists": True, "images": [{"Id": image_id, "RepoTags": [tag]}],
                              "error": None}
    assert archives[missing] == {"path": missing, "exists": False, "images": [], "error": None}
    assert archives[str(junk)]["exists"] and archives[str(junk)]["error"]
    # The filter takes the module's answer as it takes a controller path.
    assert IMAGE_ID(archives[path], tag) == image_id
    assert IMAGE_ID(archives[missing], tag, strict=False) == ""
    with pytest.raises(AnsibleFilterError, match="missing.tar: no such file"):
        IMAGE_ID(archives[missing], tag)
    with pytest.raises(AnsibleFilterError, match="junk.tar is not a docker save archive: not a tar archive"):
        IMAGE_ID(archives[str(junk)], tag)
