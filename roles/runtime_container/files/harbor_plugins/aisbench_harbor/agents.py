"""Harbor agents that run on a baked toolchain instead of installing themselves from the Internet.

Harbor's installed agents download their toolchain in every trial (apt, an installer script, Python or Node.js from
GitHub, then the agent from PyPI or npm). Each class here is Harbor's own agent class with one change: install()
checks the toolchain that the baked_images role baked (a read-only volume mounted at /opt/aisbench-agents/<agent>
in the trial container by the harbor_job module) and links its commands where Harbor's run() looks for them.
Everything else (the command line, the model connection, trajectories, token counts) is Harbor's.

harbor_job maps the names users write in their matrix (mini-swe-agent, qwen-coder, aider, openhands) to these
classes with ``import_path`` when the trial engine has the toolchain; name() stays Harbor's, so results are
recorded under the usual agent names.
"""

import json
import shlex

from harbor.agents.installed.aider import Aider as HarborAider
from harbor.agents.installed.mini_swe_agent import MiniSweAgent as HarborMiniSweAgent
from harbor.agents.installed.openhands import OpenHands as HarborOpenHands
from harbor.agents.installed.qwen_code import QwenCode as HarborQwenCode

TOOLCHAINS_ROOT = "/opt/aisbench-agents"
MANIFEST_NAME = "aisbench-toolchain.json"
COMMANDS_DIR = "/usr/local/bin"


class BakedToolchainError(RuntimeError):
    """The trial has no usable baked toolchain for its agent (missing, broken or another version)."""


class BakedToolchainAgent:
    """Mixin for a Harbor installed agent: verify the mounted toolchain instead of installing one."""

    # Commands Harbor's run() takes from the task image rather than from the toolchain.
    image_commands = ("tee",)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # LiteLLM (in Python agents) otherwise fetches its price map from GitHub at every start.
        self._extra_env.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

    @classmethod
    def toolchain_dir(cls):
        return "%s/%s" % (TOOLCHAINS_ROOT, cls.name())

    async def read_manifest(self, environment):
        path = "%s/%s" % (self.toolchain_dir(), MANIFEST_NAME)
        result = await environment.exec(command="cat %s" % shlex.quote(path), user="root")
        if result.return_code != 0:
            raise BakedToolchainError(
                "no baked toolchain for agent %s in this trial (%s is missing): bake it with the baked_images role "
                "(baked_images_agents) and submit with the harbor_job module, which mounts it" % (self.name(), path)
            )
        try:
            manifest = json.loads(result.stdout or "")
        except ValueError as exc:
            raise BakedToolchainError("the toolchain manifest %s is not JSON: %s" % (path, exc)) from exc
        if manifest.get("agent") != self.name():
            raise BakedToolchainError(
                "the toolchain mounted at %s is for agent %r, not %s" % (self.toolchain_dir(), manifest.get("agent"), self.name())
            )
        return manifest

    async def link_toolchain(self, environment, manifest):
        """Make the toolchain's commands visible where Harbor's run() calls them; its helper tools only where the
        task image has none of its own."""
        toolchain = self.toolchain_dir()
        steps = ["mkdir -p %s" % COMMANDS_DIR]
        for command, target in sorted((manifest.get("commands") or {}).items()):
            steps.append("ln -sfn %s %s" % (shlex.quote("%s/%s" % (toolchain, target)), shlex.quote("%s/%s" % (COMMANDS_DIR, command))))
        for tool, target in sorted((manifest.get("tools") or {}).items()):
            steps.append("{ command -v %s >/dev/null || ln -sfn %s %s; }" % (
                shlex.quote(tool), shlex.quote("%s/%s" % (toolchain, target)), shlex.quote("%s/%s" % (COMMANDS_DIR, tool))))
        await self.exec_as_root(environment, command=" && ".join(steps))

    async def install(self, environment):
        manifest = await self.read_manifest(environment)
        baked = str(manifest.get("version", ""))
        if self._version and self._version != baked:
            raise BakedToolchainError(
                "agent %s version %s was asked for, the baked toolchain has %s: bake that version "
                "(baked_images_agent_versions) or drop the version from the matrix" % (self.name(), self._version, baked)
            )
        # The toolchain's commands, and its tools where the image has none; then what Harbor's command line needs.
        await self.link_toolchain(environment, manifest)
        missing = []
        for command in self.image_commands:
            found = await environment.exec(command="command -v %s" % shlex.quote(command))
            if found.return_code != 0:
                missing.append(command)
        if missing:
            raise BakedToolchainError(
                "the task image lacks %s, which Harbor's %s command line needs; add it to the task's image (L1)"
                % (", ".join(missing), self.name())
            )
        check = manifest.get("check") or []
        if check:
            # The same check the toolchain passed when it was baked, now on the task's own image.
            await self.exec_as_agent(environment, command=" ".join(shlex.quote(str(part)) for part in check) + " >/dev/null")
        self._version = baked


class MiniSweAgent(BakedToolchainAgent, HarborMiniSweAgent):
    """Harbor's mini-swe-agent on the baked toolchain (run() finds mini-swe-agent on PATH)."""


class QwenCode(BakedToolchainAgent, HarborQwenCode):
    """Harbor's Qwen Code (qwen-coder) on the baked toolchain: its own Node.js, qwen linked on PATH."""

    image_commands = ("tee", "stdbuf")


class Aider(BakedToolchainAgent, HarborAider):
    """Harbor's aider on the baked toolchain; git comes from the task image, or from the toolchain where it has none."""

    image_commands = ("tee", "git")

    async def install(self, environment):
        await super().install(environment)
        # Harbor's run() sources this file (from the upstream installer) without checking for it.
        await self.exec_as_agent(environment, command='mkdir -p "$HOME/.local/bin" && touch "$HOME/.local/bin/env"')


class OpenHands(BakedToolchainAgent, HarborOpenHands):
    """Harbor's OpenHands on the baked toolchain: /opt/openhands-venv is the toolchain's virtualenv."""

    image_commands = ("tee", "stdbuf")

    async def link_toolchain(self, environment, manifest):
        await super().link_toolchain(environment, manifest)
        venv = "%s/%s" % (self.toolchain_dir(), manifest.get("venv", "venv"))
        await self.exec_as_root(
            environment,
            command="rm -rf /opt/openhands-venv && ln -s %s /opt/openhands-venv" % shlex.quote(venv),
        )
