"""The runtime image's entrypoint (roles/runtime_image/files/aisbench-entrypoint), read as text.
Its tests that start a process: tests/integration/scripts/test_runtime_image_entrypoint.py."""
from pathlib import Path

ENTRYPOINT = Path(__file__).resolve().parents[3] / "roles/runtime_image/files/aisbench-entrypoint"


def test_entrypoint_never_writes_binfmt_register():
    """The qemu_binfmt role is the only writer of host-global handlers (issue 16)."""
    script = ENTRYPOINT.read_text()
    assert "/register" not in script and "aisbench_register_binfmt" not in script
