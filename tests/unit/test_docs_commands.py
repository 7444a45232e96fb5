"""Commands the docs give work as written: run them with --list-hosts/--list-tasks (nothing is changed)."""
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)


def shell_commands(doc, heading):
    """The commands of the first bash block under the heading, continuation lines joined, comments dropped."""
    with open(os.path.join(ROOT, "docs", doc), encoding="utf-8") as handle:
        text = handle.read()
    section = text.split("\n## " + heading + "\n", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return [line for line in block.replace("\\\n", " ").splitlines() if line.strip() and not line.startswith("#")]


def test_airgapped_build_command_selects_the_build_host_and_the_runtime_image_tasks(tmp_path):
    commands = [c for c in shell_commands("airgapped.md", "Build once, ship the tar") if c.startswith("ansible-playbook")]
    assert len(commands) == 1, commands
    argv = shlex.split(commands[0])
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_HOME=str(tmp_path / "home"),
               ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".cache", "collections"))
    proc = subprocess.run([os.path.join(BIN, argv[0])] + argv[1:] + ["--list-hosts", "--list-tasks"],
                          capture_output=True, text=True, env=env, cwd=str(tmp_path), timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    plays = re.findall(r"hosts \((\d+)\):\n\s+(\S+)", proc.stdout)
    assert plays and all(plays_hosts == ("1", "build-host") for plays_hosts in plays), proc.stdout
    assert "Runtime image (L4)\tTAGS: [runtime_image]" in proc.stdout, proc.stdout
