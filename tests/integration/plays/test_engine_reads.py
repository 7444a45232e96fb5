"""runtime_container_state and engine_objects_info: the one-round-trip reads of the runtime_container and baked_images
roles, for real with ansible-playbook over the local connection; the engine part against this machine's Docker
engine (the same engine the scenarios use)."""

import hashlib
import subprocess
import uuid

from local_play import run_tasks

ENGINE = "unix:///var/run/docker.sock"


STATE_TASKS = """
    - name: Read a fresh host (nothing there yet)
      aisbench.agent_runtime.runtime_container_state:
        docker_host: {engine}
        container: "{container}"
        image: "{image}"
        dirs: [{{key: jobs, path: "{root}/jobs", mode: "0755"}}, {{key: secrets, path: "{root}/secrets", mode: "0700"}}]
        files:
          - {{key: plugins, src: "{plugins}/", dest: "{root}/plugins"}}
          - {{key: api_key, dest: "{root}/secrets/api_key.env", mode: "0600", sha1: "{key_sha1}"}}
          - {{key: contract, dest: "{root}/contract.fact"}}
      register: fresh
    - name: Put everything in place
      ansible.builtin.shell: |
        mkdir -p {root}/jobs {root}/secrets {root}/plugins/pkg && chmod 0700 {root}/secrets && chmod 0755 {root}/jobs
        cp {plugins}/pkg/a.py {root}/plugins/pkg/a.py && printf 'KEY=1\\n' > {root}/secrets/api_key.env
        chmod 0600 {root}/secrets/api_key.env && echo '{{}}' > {root}/contract.fact
      changed_when: true
    - name: Read it again, in check mode
      aisbench.agent_runtime.runtime_container_state:
        docker_host: {engine}
        container: "{container}"
        image: "{image}"
        dirs: [{{key: jobs, path: "{root}/jobs", mode: "0755"}}, {{key: secrets, path: "{root}/secrets", mode: "0700"}}]
        files:
          - {{key: plugins, src: "{plugins}/", dest: "{root}/plugins"}}
          - {{key: api_key, dest: "{root}/secrets/api_key.env", mode: "0600", sha1: "{key_sha1}"}}
          - {{key: contract, dest: "{root}/contract.fact"}}
      check_mode: true
      register: in_place
    - name: Drift one mode and one plugin file
      ansible.builtin.shell: chmod 0755 {root}/secrets && echo changed > {root}/plugins/pkg/a.py
      changed_when: true
    - name: Read the drift
      aisbench.agent_runtime.runtime_container_state:
        docker_host: unix://{root}/no-engine.sock
        container: "{container}"
        image: "{image}"
        dirs: [{{key: jobs, path: "{root}/jobs", mode: "0755"}}, {{key: secrets, path: "{root}/secrets", mode: "0700"}}]
        files:
          - {{key: plugins, src: "{plugins}/", dest: "{root}/plugins"}}
          - {{key: api_key, dest: "{root}/secrets/api_key.env", mode: "0600", sha1: "{key_sha1}"}}
      register: drifted
    - name: A src that is not on the controller
      aisbench.agent_runtime.runtime_container_state:
        container: "{container}"
        image: "{image}"
        files: [{{key: matrix, src: "{root}/missing.yaml", dest: "{root}/matrix.yaml"}}]
      register: missing_src
      ignore_errors: true
"""


def test_runtime_container_state_reads_paths_digests_and_the_engine(tmp_path):
    plugins = tmp_path / "controller-plugins"
    (plugins / "pkg").mkdir(parents=True)
    (plugins / "pkg" / "a.py").write_text("print('a')\n")
    root = tmp_path / "host"
    name = "aisbench-unit-state-" + uuid.uuid4().hex[:8]
    subprocess.run(["docker", "volume", "create", name], check=True, capture_output=True)
    try:
        results = run_tasks(tmp_path, STATE_TASKS.format(
            engine=ENGINE, container=name, image="aisbench-unit/no-such-image:0", root=root, plugins=plugins,
            key_sha1=hashlib.sha1(b"KEY=1\n").hexdigest()), ["fresh", "in_place", "drifted", "missing_src"])
    finally:
        subprocess.run(["docker", "volume", "rm", "-f", name], check=False, capture_output=True)
    fresh, in_place, drifted = results["fresh"], results["in_place"], results["drifted"]
    assert fresh["differ"] == ["api_key", "jobs", "plugins", "secrets"], fresh
    assert fresh["engine_read"] is True and fresh["container"] is None and fresh["image"] is None
    assert fresh["check_mode"] is False and fresh["changed"] is False
    assert fresh["files"][str(root / "contract.fact")] == {"exists": False}
    # Everything as wanted: nothing differs; the observe-only entry reports its digest; check mode is seen.
    assert in_place["differ"] == [] and in_place["check_mode"] is True, in_place
    assert in_place["files"][str(root / "contract.fact")]["sha1"] == hashlib.sha1(b"{}\n").hexdigest()
    # A mode and a plugin file drifted: exactly those keys; an engine that is not there is not read, and says why.
    assert drifted["differ"] == ["plugins", "secrets"], drifted
    assert drifted["engine_read"] is False and "no-engine.sock" in drifted["engine_error"]
    assert results["missing_src"]["failed"] and "missing.yaml" in results["missing_src"]["msg"]
    assert "nothing was changed" in results["missing_src"]["msg"]


OBJECT_TASKS = """
    - name: Read an image the engine has, one it lacks, a volume it has and one it lacks
      aisbench.agent_runtime.engine_objects_info:
        docker_host: {engine}
        images: ["{image}", "{image}", aisbench-unit/no-such-image:0]
        volumes: ["{volume}", aisbench-unit-no-such-volume]
      check_mode: true
      register: objects
    - name: An ssh:// engine is left to community.docker
      aisbench.agent_runtime.engine_objects_info:
        docker_host: ssh://nobody@127.0.0.1
        images: ["{image}"]
      register: not_read
"""


def test_engine_objects_info_reads_images_and_volumes(tmp_path):
    images = subprocess.run(["docker", "image", "ls", "--format", "{{.Repository}}:{{.Tag}}"], check=True,
                            capture_output=True, text=True).stdout.split()
    image = next(ref for ref in images if "<none>" not in ref)
    volume = "aisbench-unit-objects-" + uuid.uuid4().hex[:8]
    subprocess.run(["docker", "volume", "create", "--label", "unit=1", volume], check=True, capture_output=True)
    try:
        results = run_tasks(tmp_path, OBJECT_TASKS.format(engine=ENGINE, image=image, volume=volume),
                            ["objects", "not_read"])
    finally:
        subprocess.run(["docker", "volume", "rm", "-f", volume], check=False, capture_output=True)
    objects = results["objects"]
    assert objects["engine_read"] is True and objects["check_mode"] is True and objects["changed"] is False
    assert len(objects["images"]) == 1 and image in objects["images"][0]["RepoTags"], objects["images"]
    assert objects["volumes"][volume]["Labels"] == {"unit": "1"}
    assert objects["volumes"]["aisbench-unit-no-such-volume"] is None
    assert results["not_read"]["engine_read"] is False and "images" not in results["not_read"]
