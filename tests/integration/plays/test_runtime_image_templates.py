"""The runtime image's Dockerfile as the runtime_image role renders it: the role itself runs (ansible-playbook --check
--diff on localhost, one host per case; nothing is built or written) with its own defaults, vars and computed facts,
and the Dockerfile is read from its "Render the Dockerfile" task's diff. Its pip.conf must show nowhere.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
COLLECTIONS = ROOT / ".cache" / "collections"
INDEX_PASSWORD = "templ-canary-7d2e4f"
INDEX = "https://aisbench:%s@pypi.corp.example/simple" % INDEX_PASSWORD

PLAYBOOK = """
- hosts: all
  connection: local
  gather_facts: false
  roles:
    - role: aisbench.agent_runtime.runtime_image
"""


def case_vars(tmp_path, name, **overrides):
    ref = "aisbench/agent-runtime:%s" % overrides.get("runtime_image_tag", "0.26.0")
    variables = {
        "ansible_python_interpreter": sys.executable,
        "runtime_image_build_dir": str(tmp_path / name / "build"),
        "runtime_image_architecture": "x86_64",
        "runtime_image_install_requirements": False,
        # A read of this run that covers the role's request (as site.yml passes docker_engine's): the image is missing.
        "runtime_image_engine_read": {"read": {"docker_host": "", "packages": [], "images": [ref], "archives": []},
                                      "check_mode": True, "packages": [], "images": {ref: None}, "archives": {}},
    }
    variables.update(overrides)
    return variables


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("runtime_image")
    ca = tmp_path / "corp.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
    wheel = tmp_path / "harbor-0.25.0-py3-none-any.whl"
    wheel.write_bytes(b"PK\x05\x06" + b"\0" * 18)
    cases = {
        "default": case_vars(tmp_path, "default"),
        "full": case_vars(tmp_path, "full", runtime_image_base="local/debian:13-minbase",
                          runtime_image_ca_certificates=[str(ca)], runtime_image_harbor_wheel=str(wheel),
                          runtime_image_pip_index_url=INDEX,
                          runtime_image_pip_extra_index_urls=["https://a.corp/simple", INDEX.replace("simple", "extra")],
                          runtime_image_architecture="aarch64"),
        "no_gateway": case_vars(tmp_path, "no_gateway", runtime_image_model_gateway_packages=[]),
    }
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump({"all": {"hosts": cases}}))
    (tmp_path / "play.yml").write_text(PLAYBOOK)
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_COLLECTIONS_PATH=str(COLLECTIONS),
               ANSIBLE_HOME=str(tmp_path / "ansible-home"), ANSIBLE_STDOUT_CALLBACK="ansible.posix.json",
               ANSIBLE_LOCALHOST_WARNING="false")
    run = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(tmp_path / "inventory.yml"),
                          "--check", "--diff", str(tmp_path / "play.yml")],
                         env=env, capture_output=True, text=True, cwd=str(tmp_path), check=False)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    out = json.loads(run.stdout)
    tasks = {task["task"]["name"].split(" : ", 1)[-1]: task["hosts"] for play in out["plays"] for task in play["tasks"]}
    dockerfiles = {host: result["diff"][0]["after"] for host, result in tasks["Render the Dockerfile"].items()}
    return {"dockerfiles": dockerfiles, "tasks": tasks, "output": run.stdout + run.stderr}


def stages(text):
    """The Dockerfile's stages: (FROM line, the lines up to the next FROM)."""
    parts = []
    for line in text.splitlines():
        if line.startswith("FROM "):
            parts.append((line, []))
        elif parts:
            parts[-1][1].append(line)
    return parts


def test_default_dockerfile(rendered):
    text = rendered["dockerfiles"]["default"]
    (system, _system_lines), (python, python_lines), (final, final_lines) = stages(text)
    assert (system, python, final) == ("FROM debian:13-slim AS system", "FROM system AS python", "FROM system")
    assert "docker.io docker-cli docker-compose" in text and "--no-install-recommends" in text
    assert "qemu-user-static" not in text
    assert " && /opt/harbor/bin/pip install --no-cache-dir --disable-pip-version-check harbor==0.26.0" in python_lines
    assert 'LABEL org.aisbench.build-stage="aisbench/agent-runtime:0.26.0"' in python_lines
    assert "COPY --from=python /opt/harbor /opt/harbor" in final_lines
    assert "RUN ln -sf /opt/harbor/bin/harbor /usr/local/bin/harbor \\" in final_lines
    assert ("RUN mkdir -p /opt/swebench/jobs /opt/swebench/tasks /opt/swebench/config /opt/swebench/logs "
            "/opt/swebench/agent-patches /opt/swebench/run" in final_lines)
    assert 'LABEL org.aisbench.runtime.harbor-version="0.26.0"' in final_lines
    assert 'ENTRYPOINT ["/usr/bin/tini", "-g", "--", "/usr/local/bin/aisbench-entrypoint"]' in final_lines
    assert 'CMD ["sleep", "infinity"]' in final_lines
    assert any(line.startswith("HEALTHCHECK ") and "aisbench-healthcheck" in line for line in final_lines)
    assert 'VOLUME ["/var/lib/docker"]' in final_lines
    code = "\n".join(line for line in text.splitlines() if not line.startswith("#"))
    assert "COPY ca-certificates/" not in code and "COPY wheels/" not in code and "pip.conf" not in code


def test_certificates_wheels_an_index_with_credentials_and_arm64(rendered):
    text = rendered["dockerfiles"]["full"]
    (system, system_lines), (_python, python_lines), (_final, final_lines) = stages(text)
    assert system == "FROM local/debian:13-minbase AS system"
    assert "COPY ca-certificates/ /usr/local/share/ca-certificates/aisbench/" in system_lines
    # An arm64 runtime image needs no qemu: its host registers the handlers (qemu_binfmt), trials run on its engine.
    assert not any("qemu-user-static" in line for line in system_lines)
    # pip.conf and the wheels are in the python stage only (the role removes it after the build), never in the image.
    assert "COPY pip.conf /etc/pip.conf" in python_lines and "COPY wheels/ /tmp/aisbench-wheels/" in python_lines
    assert " && /opt/harbor/bin/pip install --no-cache-dir --disable-pip-version-check " \
           "/tmp/aisbench-wheels/harbor-0.25.0-py3-none-any.whl" in python_lines
    assert not [line for line in final_lines if "pip.conf" in line or "wheels" in line]


def test_the_index_credentials_show_nowhere(rendered):
    assert INDEX_PASSWORD not in rendered["output"]
    pip_conf = rendered["tasks"]["Write pip.conf"]["full"]
    assert pip_conf["censored"].startswith("the output has been hidden") and "diff" not in pip_conf


def test_model_gateway_venv(rendered):
    (_system, _lines), (_python, python_lines), (_final, final_lines) = stages(rendered["dockerfiles"]["default"])
    assert "RUN python3 -m venv /opt/model-gateway \\" in python_lines
    assert (" && /opt/model-gateway/bin/pip install --no-cache-dir --disable-pip-version-check "
            "'litellm[proxy]==1.106.12' \\") in python_lines
    assert "COPY --from=python /opt/model-gateway /opt/model-gateway" in final_lines
    assert "COPY aisbench-entrypoint aisbench-healthcheck aisbench-model-gateway /usr/local/bin/" in final_lines
    without = rendered["dockerfiles"]["no_gateway"]
    assert "/opt/model-gateway" not in without


def test_the_build_is_reported_not_run_in_check_mode(rendered):
    assert all(result.get("skipped") for result in rendered["tasks"]["Build the image"].values())
    assert all(result["changed"] for result in rendered["tasks"]["Report the build check mode would run"].values())
