"""bench/docker_cli.py: the one docker CLI helper of the bench scripts, run against this machine's engine.
Its tests that start a process: tests/integration/docker/test_bench_docker_cli_engine.py."""
import re
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[3] / "bench"
sys.path.insert(0, str(BENCH))


def test_no_bench_script_keeps_its_own_docker_helper():
    own = []
    for script in sorted(BENCH.glob("*.py")):
        text = script.read_text(encoding="utf-8")
        if script.name != "docker_cli.py" and re.search(r'\["docker"\] \+|def _?docker\(', text):
            own.append(script.name)
    assert own == []
