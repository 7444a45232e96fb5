"""Harbor plugins of the aisbench.agent_runtime collection (agents on baked toolchains)."""
