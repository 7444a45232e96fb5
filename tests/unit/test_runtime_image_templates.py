"""The runtime image's Dockerfile and pip.conf templates, rendered by Ansible's own templating engine."""

from pathlib import Path

import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

ROLE = Path(__file__).resolve().parents[2] / "roles/runtime_image"
PACKAGES = ["ca-certificates", "tini", "docker.io", "docker-cli", "docker-compose", "python3", "python3-venv"]


def render(name, **overrides):
    variables = yaml.safe_load((ROLE / "defaults/main.yml").read_text())
    variables.update(
        _runtime_image_packages=PACKAGES,
        _runtime_image_pip_args="harbor==0.26.0",
        _runtime_image_wheels=[],
        _runtime_image_pip_conf="",
        _runtime_image_gateway_pip_args="'litellm[proxy]==1.106.12'",
    )
    variables.update(overrides)
    templar = Templar(loader=DataLoader(), variables=variables)
    return templar.template(trust_as_template((ROLE / "templates" / name).read_text()))


def test_default_dockerfile():
    text = render("Dockerfile.j2")
    lines = text.splitlines()
    assert lines[1] == "FROM debian:13-slim"
    assert "docker.io docker-cli docker-compose" in text
    assert "--no-install-recommends" in text
    assert "/opt/harbor/bin/pip install --no-cache-dir --disable-pip-version-check harbor==0.26.0" in text
    assert "ln -sf /opt/harbor/bin/harbor /usr/local/bin/harbor" in text
    assert (
        "RUN mkdir -p /opt/swebench/jobs /opt/swebench/tasks /opt/swebench/config /opt/swebench/logs "
        "/opt/swebench/agent-patches /opt/swebench/run" in lines
    )
    assert 'LABEL org.aisbench.runtime.harbor-version="0.26.0"' in lines
    assert 'ENTRYPOINT ["/usr/bin/tini", "-g", "--", "/usr/local/bin/aisbench-entrypoint"]' in lines
    assert 'CMD ["sleep", "infinity"]' in lines
    assert any(line.startswith("HEALTHCHECK ") and "aisbench-healthcheck" in line for line in lines)
    assert 'VOLUME ["/var/lib/docker"]' in lines
    assert "COPY ca-certificates/" not in text and "COPY wheels/" not in text and "pip.conf" not in text


def test_dockerfile_with_certificates_wheels_and_pip_conf():
    text = render(
        "Dockerfile.j2",
        runtime_image_base="local/debian:13-minbase",
        runtime_image_ca_certificates=["/etc/corp.pem"],
        _runtime_image_wheels=[{"path": "/w/harbor-0.25.0-py3-none-any.whl"}],
        _runtime_image_pip_args="/tmp/aisbench-wheels/harbor-0.25.0-py3-none-any.whl",
        _runtime_image_pip_conf="[global]\nindex-url = https://pypi.corp/simple\n",
        _runtime_image_packages=PACKAGES + ["qemu-user-static"],
    )
    assert "FROM local/debian:13-minbase" in text
    assert "COPY ca-certificates/ /usr/local/share/ca-certificates/aisbench/" in text
    assert "COPY pip.conf /etc/pip.conf" in text
    assert "COPY wheels/ /tmp/aisbench-wheels/" in text
    assert "pip install --no-cache-dir --disable-pip-version-check /tmp/aisbench-wheels/harbor-0.25.0-py3-none-any.whl" in text
    assert "qemu-user-static" in text


def test_model_gateway_venv():
    text = render("Dockerfile.j2")
    assert "RUN python3 -m venv /opt/model-gateway" in text
    assert "/opt/model-gateway/bin/pip install --no-cache-dir --disable-pip-version-check 'litellm[proxy]==1.106.12'" in text
    assert "COPY aisbench-entrypoint aisbench-healthcheck aisbench-model-gateway /usr/local/bin/" in text
    # the wheelhouse stays until the gateway's install has used it
    assert text.index("rm -rf /tmp/aisbench-wheels") > text.index("/opt/model-gateway/bin/pip install")
    without = render("Dockerfile.j2", runtime_image_model_gateway_packages=[])
    assert "/opt/model-gateway" not in without and "rm -rf /tmp/aisbench-wheels" in without


def test_pip_conf():
    text = render(
        "pip.conf.j2",
        runtime_image_pip_index_url="https://pypi.corp/simple",
        runtime_image_pip_extra_index_urls=["https://a.corp/simple", "https://b.corp/simple"],
    )
    assert text.splitlines() == [
        "[global]",
        "index-url = https://pypi.corp/simple",
        "extra-index-url = https://a.corp/simple https://b.corp/simple",
    ]
