"""bench/docker_cli.py: the one docker CLI helper of the bench scripts, run against this machine's engine.
Its pure tests: tests/unit/bench/test_bench_docker_cli.py."""
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[3] / "bench"
sys.path.insert(0, str(BENCH))

from docker_cli import docker  # noqa: E402  pylint: disable=wrong-import-position

needs_docker = pytest.mark.skipif(shutil.which("docker") is None, reason="no docker CLI on this machine")


@needs_docker
def test_output_is_text_and_a_failure_raises_unless_check_is_off():
    version = docker("version", "--format", "{{.Client.Version}}")
    assert version.returncode == 0 and re.match(r"^\d+\.\d+", version.stdout.strip())
    missing = docker("image", "inspect", "aisbench-onerule-no-such-image:0", check=False)
    assert missing.returncode != 0 and "no such image" in missing.stderr.lower()
    with pytest.raises(subprocess.CalledProcessError):
        docker("image", "inspect", "aisbench-onerule-no-such-image:0")
    assert docker("version", "--format", "{{.Client.Version}}", timeout=60).stdout == version.stdout
