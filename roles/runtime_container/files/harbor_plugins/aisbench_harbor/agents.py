"""Harbor agents that run on a baked toolchain instead of installing themselves from the Internet.

Harbor's installed agents download their toolchain in every trial (apt, an installer script, Python or Node.js from
GitHub, then the agent from PyPI or npm). Each class here is Harbor's own agent class with three changes:

- the toolchain that the baked_images role baked (a read-only volume mounted at /opt/aisbench-agents/<agent> in the
  trial container by the harbor_job module) is checked and its commands are linked where Harbor's run() looks for
  them. On Harbor 0.26 and later that is the agent's ``configure()`` step and the install is skipped
  (``skip_install``, Harbor's own option for an agent the environment already provides); on Harbor 0.25, which has
  neither, it is ``install()``;
- the agent's calls home (update checks, analytics, price maps, usage statistics) are turned off by configuration
  (PHONE_HOME_ENV, and each class's own), so a trial talks to the model endpoint and nothing else;
- aider's token counts are recorded (Harbor's Aider records none).

Everything else (the command line, the model connection, trajectories, Harbor's own token counts) is Harbor's.

harbor_job maps the names users write in their matrix (mini-swe-agent, qwen-coder, aider, openhands) to these
classes with ``import_path`` when the trial engine has the toolchain; name() stays Harbor's, so results are
recorded under the usual agent names.
"""

import json
import shlex

from harbor.agents.installed.aider import Aider as HarborAider
from harbor.agents.installed.base import BaseInstalledAgent
from harbor.agents.installed.mini_swe_agent import MiniSweAgent as HarborMiniSweAgent
from harbor.agents.installed.openhands import OpenHands as HarborOpenHands
from harbor.agents.installed.qwen_code import QwenCode as HarborQwenCode

from aisbench_harbor.aider_usage import ANALYTICS_LOG_NAME, analytics_usage

TOOLCHAINS_ROOT = "/opt/aisbench-agents"
MANIFEST_NAME = "aisbench-toolchain.json"
COMMANDS_DIR = "/usr/local/bin"
# Harbor 0.26 added the configure() step, which runs after install() and also when the install is skipped.
HARBOR_HAS_CONFIGURE = hasattr(BaseInstalledAgent, "configure")
# LiteLLM (the Python agents' model client) fetches its model price map from GitHub at every start otherwise.
PHONE_HOME_ENV = {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}


class BakedToolchainError(RuntimeError):
    """The trial has no usable baked toolchain for its agent (missing, broken or another version)."""


class BakedToolchainAgent:
    """Mixin for a Harbor installed agent: verify the mounted toolchain instead of installing one."""

    # Commands Harbor's run() takes from the task image rather than from the toolchain.
    image_commands = ("tee",)
    # Settings that keep the agent from calling anything but the model (set unless the job's agent env sets them).
    phone_home_env = {}

    def __init__(self, *args, **kwargs):
        if HARBOR_HAS_CONFIGURE:
            # The toolchain is the installed agent: Harbor's own setup skips install() and runs configure().
            kwargs.setdefault("skip_install", True)
        super().__init__(*args, **kwargs)
        for name, value in dict(PHONE_HOME_ENV, **self.phone_home_env).items():
            self._extra_env.setdefault(name, value)

    @classmethod
    def toolchain_dir(cls):
        return "%s/%s" % (TOOLCHAINS_ROOT, cls.name())

    @classmethod
    def manifest_path(cls):
        return "%s/%s" % (cls.toolchain_dir(), MANIFEST_NAME)

    def get_version_command(self):
        # What Harbor records as the agent's version when the install is skipped: the baked one.
        return "cat %s" % shlex.quote(self.manifest_path())

    def parse_version(self, stdout):
        try:
            return str(json.loads(stdout)["version"])
        except (ValueError, KeyError, TypeError):
            return stdout.strip()

    async def read_manifest(self, environment):
        path = self.manifest_path()
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

    async def prepare_toolchain(self, environment):
        """Check the mounted toolchain, link it and run its check on the task's image: every trial, before run()."""
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

    async def install(self, environment):
        # Harbor 0.25 has no configure(): its setup() calls install() only. On 0.26 the toolchain is baked, so there
        # is nothing to install even when a matrix turns skip_install off.
        if not HARBOR_HAS_CONFIGURE:
            await self.prepare_toolchain(environment)

    async def configure(self, environment):
        await super().configure(environment)
        await self.prepare_toolchain(environment)


class MiniSweAgent(BakedToolchainAgent, HarborMiniSweAgent):
    """Harbor's mini-swe-agent on the baked toolchain (run() finds mini-swe-agent on PATH)."""


class QwenCode(BakedToolchainAgent, HarborQwenCode):
    """Harbor's Qwen Code (qwen-coder) on the baked toolchain: its own Node.js, qwen linked on PATH."""

    image_commands = ("tee", "stdbuf")
    # Qwen Code's usage statistics (Aliyun RUM) are on unless this is false.
    phone_home_env = {"QWEN_USAGE_STATISTICS_ENABLED": "false"}


class Aider(BakedToolchainAgent, HarborAider):
    """Harbor's aider on the baked toolchain; git comes from the task image, or from the toolchain where it has none.

    Harbor runs ``aider --yes ... 2>&1 | stdbuf -oL tee``. aider's own settings (AIDER_* variables, which its
    options read) keep it from asking PyPI for updates and from turning on its analytics (PostHog) when ``--yes``
    answers its opt-in question, and have it write its analytics events to a local file only: they carry the
    model's token counts per message, which populate_context_post_run records (Harbor's Aider records none).
    Not streamed, so those counts are the model's own ``usage`` (a stream has none; aider would estimate them).
    """

    image_commands = ("tee", "stdbuf", "git")
    phone_home_env = {
        "AIDER_CHECK_UPDATE": "false",
        "AIDER_ANALYTICS": "false",
        "AIDER_ANALYTICS_LOG": "/logs/agent/" + ANALYTICS_LOG_NAME,
        "AIDER_STREAM": "false",
        "AIDER_SHOW_RELEASE_NOTES": "false",
        # --yes accepts every URL aider offers to open (its docs, release notes): Python's webbrowser runs this.
        "BROWSER": "true",
    }

    async def prepare_toolchain(self, environment):
        await super().prepare_toolchain(environment)
        # Harbor's run() sources this file (from the upstream installer) without checking for it. aider fetches
        # LiteLLM's price map from GitHub itself unless its cache (24 hours) is fresh: LiteLLM's own copy, baked in.
        await self.exec_as_agent(environment, command=(
            'mkdir -p "$HOME/.local/bin" "$HOME/.aider/caches" && touch "$HOME/.local/bin/env" && '
            'for map in %s/venv/lib/python3*/site-packages/litellm/model_prices_and_context_window_backup.json; do '
            '[ -f "$map" ] || { echo "LiteLLM\'s price map is not in the aider toolchain ($map)" >&2; exit 1; }; '
            'cp "$map" "$HOME/.aider/caches/model_prices_and_context_window.json"; done'
            % shlex.quote(self.toolchain_dir())))

    def populate_context_post_run(self, context):
        super().populate_context_post_run(context)
        usage = analytics_usage(self.logs_dir / ANALYTICS_LOG_NAME)
        if usage is not None:
            context.n_input_tokens, context.n_output_tokens, context.cost_usd = usage


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
