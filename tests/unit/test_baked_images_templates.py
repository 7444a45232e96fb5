"""The baked_images Dockerfile templates, rendered by Ansible's own templating engine."""

from pathlib import Path

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

ROLE = Path(__file__).resolve().parents[2] / "roles/baked_images"
AGENTS = ("aider", "mini-swe-agent", "openhands", "qwen-code")
PACKAGES = {
    "aider": '"aider-chat==0.86.2"',
    "mini-swe-agent": '"mini-swe-agent==2.4.6"',
    "openhands": '"openhands-ai==1.11.0"',
    "qwen-code": '"@qwen-code/qwen-code@0.24.4"',
}


def render(path, **overrides):
    variables = yaml.safe_load((ROLE / "defaults/main.yml").read_text())
    variables.update(
        baked_images_from="swebench/ds-case-base:latest",
        baked_images_case={"dataset": "ds", "id": "case__1"},
        baked_images_agent="",
        baked_images_agent_version="",
        baked_images_ca_files=[],
        baked_images_pip_args="",
        baked_images_npm_args="",
    )
    variables.update(overrides)
    templar = Templar(loader=DataLoader(), variables=variables)
    return templar.template(trust_as_template(path.read_text()))


def test_every_builtin_agent_has_a_template_and_a_pinned_version():
    found = sorted(p.name.removesuffix(".Dockerfile.j2") for p in (ROLE / "templates/agents").glob("*.Dockerfile.j2"))
    assert found == sorted(AGENTS)
    versions = yaml.safe_load((ROLE / "defaults/main.yml").read_text())["baked_images_agent_versions"]
    assert sorted(versions) == sorted(AGENTS)


def test_base_template():
    text = render(ROLE / "templates/base.Dockerfile.j2", baked_images_from="swebench/sweb.eval.x86_64.case_1776_1:latest")
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert lines[0] == "FROM swebench/sweb.eval.x86_64.case_1776_1:latest"
    assert "RUN mkdir -p /testbed /logs" in lines
    assert lines[-1] == "WORKDIR /testbed"
    assert 'org.aisbench.case="case__1"' in text


@pytest.mark.parametrize("agent", AGENTS)
def test_agent_template_pins_its_version(agent):
    versions = yaml.safe_load((ROLE / "defaults/main.yml").read_text())["baked_images_agent_versions"]
    text = render(ROLE / f"templates/agents/{agent}.Dockerfile.j2", baked_images_agent=agent, baked_images_agent_version=versions[agent])
    froms = [line for line in text.splitlines() if line.startswith("FROM ")]
    assert froms[-1] == "FROM swebench/ds-case-base:latest"
    assert PACKAGES[agent] in text
    assert f'org.aisbench.agent="{agent}"' in text
    assert "COPY ca-certificates/" not in text
    assert text.rstrip().endswith("WORKDIR /testbed")


@pytest.mark.parametrize("agent", AGENTS)
def test_agent_template_adds_ca_certificates(agent):
    text = render(ROLE / f"templates/agents/{agent}.Dockerfile.j2", baked_images_agent=agent, baked_images_ca_files=["corp.crt"])
    assert "COPY ca-certificates/ /usr/local/share/ca-certificates/aisbench/" in text
    assert "update-ca-certificates" in text


@pytest.mark.parametrize("agent", AGENTS)
def test_agent_template_refuses_another_agent(agent):
    other = "aider" if agent != "aider" else "qwen-code"
    with pytest.raises(Exception, match=f"{agent}.Dockerfile.j2 builds agent {agent}, not {other}"):
        render(ROLE / f"templates/agents/{agent}.Dockerfile.j2", baked_images_agent=other)


def test_pip_and_npm_mirror_arguments_reach_the_install():
    pip = render(
        ROLE / "templates/agents/mini-swe-agent.Dockerfile.j2",
        baked_images_agent="mini-swe-agent",
        baked_images_agent_version="2.4.6",
        baked_images_pip_args="--index-url https://pypi.corp/simple",
    )
    assert '--index-url https://pypi.corp/simple "mini-swe-agent==2.4.6"' in pip
    npm = render(
        ROLE / "templates/agents/qwen-code.Dockerfile.j2",
        baked_images_agent="qwen-code",
        baked_images_agent_version="0.24.4",
        baked_images_npm_args="--registry https://npm.corp/",
    )
    assert '--registry https://npm.corp/ "@qwen-code/qwen-code@0.24.4"' in npm


def test_qwen_code_node_from_an_image():
    text = render(
        ROLE / "templates/agents/qwen-code.Dockerfile.j2",
        baked_images_agent="qwen-code",
        baked_images_nodejs_source="image",
        baked_images_nodejs_image="registry.corp/node:22-bookworm-slim",
    )
    froms = [line for line in text.splitlines() if line.startswith("FROM ")]
    assert froms == ["FROM registry.corp/node:22-bookworm-slim AS nodejs", "FROM swebench/ds-case-base:latest"]
    assert "COPY --from=nodejs /usr/local/bin/node /usr/local/bin/node" in text
    assert "nodejs npm" not in text
