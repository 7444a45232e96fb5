"""The baked_images Dockerfile templates, rendered by Ansible's own templating engine."""

import json
from pathlib import Path

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._agent_toolchains import toolchain_plan

ROLE = Path(__file__).resolve().parents[3] / "roles/baked_images"
DEFAULTS = yaml.safe_load((ROLE / "defaults/main.yml").read_text())
ROLE_VARS = yaml.safe_load((ROLE / "vars/main.yml").read_text())
RECIPES = ROLE_VARS["_baked_images_agent_recipes"]
AGENTS = ("aider", "mini-swe-agent", "openhands", "qwen-coder")


def render(path, **overrides):
    variables = dict(DEFAULTS)
    variables.update(
        baked_images_from="swebench/ds-case-base:latest",
        baked_images_case={"dataset": "ds", "id": "case__1"},
        baked_images_toolchain={},
        baked_images_ca_files=[],
        _baked_images_stage_label=ROLE_VARS["_baked_images_stage_label"],
    )
    variables.update(overrides)
    templar = Templar(loader=DataLoader(), variables=variables)
    return templar.template(trust_as_template(path.read_text()))


def planned(agent, **overrides):
    return toolchain_plan([agent], DEFAULTS["baked_images_agent_versions"], RECIPES, [],
                          default_template=str(ROLE / "templates/toolchain.Dockerfile.j2"),
                          build_files=[str(ROLE / "files/aisbench-toolchain")], **overrides)[0]


def test_every_builtin_agent_has_a_recipe_and_a_version():
    assert sorted(RECIPES) == sorted(AGENTS)
    assert sorted(DEFAULTS["baked_images_agent_versions"]) == sorted(AGENTS)


def test_base_template():
    text = render(ROLE / "templates/base.Dockerfile.j2", baked_images_from="swebench/sweb.eval.x86_64.case_1776_1:latest")
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert lines[0] == "FROM swebench/sweb.eval.x86_64.case_1776_1:latest"
    assert "RUN mkdir -p /testbed /logs" in lines
    assert lines[-1] == "WORKDIR /testbed"
    assert 'org.aisbench.case="case__1"' in text


@pytest.mark.parametrize("agent", AGENTS)
def test_toolchain_template(agent):
    entry = planned(agent)
    text = render(ROLE / "templates/toolchain.Dockerfile.j2", baked_images_toolchain=entry)
    froms = [line for line in text.splitlines() if line.startswith("FROM ")]
    assert froms == ["FROM %s AS build" % entry["base"], "FROM scratch"]
    # The build stage is labelled with the toolchain's image (the role removes its images after the build) and reads
    # the package indexes from the context's file, never from the Dockerfile.
    code = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert code[code.index(froms[0]) + 1] == 'LABEL org.aisbench.build-stage="%s"' % entry["image"]
    assert "COPY package-indexes.json /tmp/aisbench-package-indexes.json" in text
    assert "--indexes /tmp/aisbench-package-indexes.json --" in text
    assert "COPY --from=build /opt/aisbench-agents/%s /opt/aisbench-agents/%s" % (agent, agent) in text
    for package in entry["python_packages"] + entry["npm_packages"]:
        assert package in text
    assert 'org.aisbench.toolchain.agent="%s"' % agent in text
    assert 'org.aisbench.toolchain.hash="%s"' % entry["hash"] in text
    cmd = json.loads(text.rstrip().splitlines()[-1].removeprefix("CMD "))
    assert cmd == entry["manifest"]["check"] and cmd[0] == "/opt/aisbench-agents/%s/%s" % (agent, RECIPES[agent]["check"][0])
    assert "COPY ca-certificates/" not in text


def test_toolchain_template_versions_and_bases():
    mini = render(ROLE / "templates/toolchain.Dockerfile.j2", baked_images_toolchain=planned("mini-swe-agent"))
    assert "mini-swe-agent==2.4.6 'litellm[mcp]' orjson fastapi" in mini
    assert "FROM debian:13-slim AS build" in mini
    aider = render(ROLE / "templates/toolchain.Dockerfile.j2", baked_images_toolchain=planned("aider"))
    assert "FROM debian:12-slim AS build" in aider  # aider-chat needs Python < 3.13
    qwen = render(ROLE / "templates/toolchain.Dockerfile.j2", baked_images_toolchain=planned("qwen-coder"))
    assert "--node-version 22.23.5 --npm-version 10.9.9" in qwen
    assert "@qwen-code/qwen-code@0.24.4" in qwen
    assert "python3-venv" not in qwen
    openhands = render(ROLE / "templates/toolchain.Dockerfile.j2", baked_images_toolchain=planned("openhands"))
    assert "tools /opt/aisbench-agents/openhands tmux" in openhands


def test_toolchain_template_ca_certificates_and_mirrors():
    text = render(ROLE / "templates/toolchain.Dockerfile.j2", baked_images_toolchain=planned("mini-swe-agent"),
                  baked_images_ca_files=["corp.crt"], baked_images_pip_index_url="https://u:secret@pypi.corp/simple")
    assert "COPY ca-certificates/ /usr/local/share/ca-certificates/aisbench/" in text
    assert "--indexes /tmp/aisbench-package-indexes.json -- mini-swe-agent==2.4.6" in text
    qwen = render(ROLE / "templates/toolchain.Dockerfile.j2", baked_images_toolchain=planned("qwen-coder"),
                  baked_images_npm_registry="https://u:secret@npm.corp/")
    # Mirrors reach the build through package-indexes.json (contexts.yml), never through the Dockerfile.
    for dockerfile in (text, qwen):
        assert "corp" not in dockerfile and "secret" not in dockerfile and "--registry" not in dockerfile
