"""An agent of your own, step 2 (docs/agents.md, "Add an agent"): the Harbor class that runs it on its toolchain.

BakedToolchainAgent (from the collection's aisbench_harbor package, on the runtime container's PYTHONPATH) checks the
toolchain mounted at /opt/aisbench-agents/<name()> and links its commands; this class only says how to run it.
This example answers the sample tasks ("Write the word hello into /testbed/answer.txt") without a model.
"""

from aisbench_harbor.agents import BakedToolchainAgent
from harbor.agents.installed.base import BaseInstalledAgent


class SayHello(BakedToolchainAgent, BaseInstalledAgent):
    @staticmethod
    def name():
        return "say-hello"

    async def run(self, instruction, environment, context):
        await self.exec_as_agent(
            environment,
            command="cowsay -t hello | tee /logs/agent/cowsay.txt && echo hello > /testbed/answer.txt",
        )

    def populate_context_post_run(self, context):
        pass
